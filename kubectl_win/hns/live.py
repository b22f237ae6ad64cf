"""`kubectl win hns NODE`: a short-lived HostProcess pod on the node prints its HNS state; the pod always goes.

The pod is pinned with spec.nodeName, tolerates every taint, runs as NT AUTHORITY\\SYSTEM on the host
network, and only sleeps: the dump comes from one exec of the constant script in hns.script. It is
deleted in a `finally` that also runs on errors, Ctrl-C and SIGTERM (turned into KeyboardInterrupt
here); `activeDeadlineSeconds` ends it on the node even if this process is killed outright, and the
next run removes pods of ours that finished or outlived that deadline.
"""

from __future__ import annotations

import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from kubectl_win.errors import KubectlWinError, UsageError
from kubectl_win.hns import script

APP_LABEL = "app.kubernetes.io/name"
APP = "kubectl-win-hns"
POD_DEADLINE_SECONDS = 900
DEFAULT_IMAGE = "mcr.microsoft.com/windows/servercore"
BAD_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerError",
                         "CreateContainerConfigError", "RunContainerError"})


class HnsPodError(KubectlWinError):
    """The HostProcess pod could not be started or could not dump HNS."""

    exit_code = 3


@dataclass
class LiveOptions:
    node: str
    namespace: str = "kube-system"
    image: str | None = None
    timeout: float = 180.0
    config: str | None = None
    poll_interval: float = 0.5
    # Who starts the pod: its label value (leftovers are swept per label), the container's name and the
    # command named in messages; and how long the pod may live. `kubectl win collect` sets its own.
    app: str = APP
    purpose: str = "hns"
    deadline: int = POD_DEADLINE_SECONDS


def image_for(node: dict[str, Any]) -> str:
    """Windows Server Core with the tag of the node's build (from knowledge/windows_builds.yaml)."""
    from kubectl_win.builds import build_of
    from kubectl_win.doctor.build import node_record

    record = node_record(node)
    build = build_of(record.build_number)
    if build is None or not build.image_tags:
        raise UsageError(f"no known Windows Server Core tag for node {record.name} (build "
                         f"{record.windows_build or 'unknown'}); give --image")
    return f"{DEFAULT_IMAGE}:{build.image_tags[0]}"


def pod_manifest(name: str, namespace: str, node: str, image: str, app: str = APP, container: str = "hns",
                 deadline: int = POD_DEADLINE_SECONDS) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {APP_LABEL: app, "app.kubernetes.io/managed-by": "kubectl-win"}},
        "spec": {
            "nodeName": node,
            "os": {"name": "windows"},
            "hostNetwork": True,
            "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
            "tolerations": [{"operator": "Exists"}],
            "restartPolicy": "Never",
            "activeDeadlineSeconds": deadline,
            "terminationGracePeriodSeconds": 1,
            "automountServiceAccountToken": False,
            "containers": [{
                "name": container, "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command",
                            f"Start-Sleep -Seconds {int(deadline)}"],
            }],
        },
    }


def pod_name(node: str, app: str = APP) -> str:
    stem = "".join(c if c.isalnum() else "-" for c in node.lower()).strip("-")[:40].strip("-") or "node"
    return f"{app}-{stem}-{secrets.token_hex(3)}"


def inspect_node(flags: Any, options: LiveOptions, progress: IO[str] | None = None):  # type: ignore[no-untyped-def]
    """Dump HNS on options.node through a HostProcess pod and compare it with the live cluster."""
    from kubectl_win.hns.cluster import build_view
    from kubectl_win.hns.run import analyze_objects
    from kubectl_win.kube import connect

    with connect(flags) as cluster:
        node = _windows_node(cluster, options.node)
        image = options.image or image_for(node)
        doc = dump_node(cluster, options, image, _say(progress))
        doc["node"] = options.node
        objects = cluster_objects(cluster)
    return analyze_objects(doc, build_view(objects), options.node, options.config)


def _say(progress: IO[str] | None) -> Callable[[str], None]:
    def say(text: str) -> None:
        if progress is not None:
            progress.write(f"\r{text}\033[K")
            progress.flush()
    return say


def _windows_node(cluster: Any, name: str) -> dict[str, Any]:
    from kubectl_win.nodelogs.fetch import windows_node

    return windows_node(cluster, name, "hns inspects Windows nodes", linux_hint=False)


def cluster_objects(cluster: Any) -> list[dict[str, Any]]:
    """The Nodes, Services, EndpointSlices and Pods hns compares a dump with."""
    objects: list[dict[str, Any]] = []
    for resource in ("nodes", "services", "endpointslices", "pods"):
        objects.extend(cluster.list(resource, namespace=None))
    return objects


def dump_node(cluster: Any, options: LiveOptions, image: str, say: Callable[[str], None],
              registry: set[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Create the pod, wait for it, run the script, delete the pod (always); the parsed dump.

    `registry`, when given, holds the pods that exist right now, so that a caller running this in worker
    threads (doctor --deep) can delete them from the main thread when it is interrupted."""
    from kubectl_win.hns.run import parse_hns_text

    remove_leftovers(cluster, options)
    name = pod_name(options.node, options.app)
    registry = registry if registry is not None else set()
    with interrupts_raise():
        created = False
        try:
            say(f"starting HostProcess pod {options.namespace}/{name} on {options.node} ({image})")
            registry.add((options.namespace, name))
            create_pod(cluster, options, name, image)
            created = True
            wait_running(cluster, options, name)
            say(f"reading HNS on {options.node}")
            output = _exec(cluster, options, name)
        finally:
            if created and (options.namespace, name) in registry:
                say(f"deleting pod {options.namespace}/{name}")
                delete_pod(cluster, options.namespace, name)
            registry.discard((options.namespace, name))
            say("")
    text = output[output.find("{"):] if "{" in output else output
    return parse_hns_text(text, f"the HNS dump from {options.node}")


@contextmanager
def interrupts_raise() -> Iterator[None]:
    """SIGTERM (a killed kubectl, a CI timeout) unwinds like Ctrl-C, so the pod is deleted; on Windows
    Ctrl-Break and closing the console window do too."""
    from kubectl_win.console import console_events_interrupt

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        with console_events_interrupt():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def create_pod(cluster: Any, options: LiveOptions, name: str, image: str) -> None:
    from kubectl_win.kube import Forbidden

    try:
        cluster.create("pods", pod_manifest(name, options.namespace, options.node, image, options.app,
                                            options.purpose, options.deadline), options.namespace)
    except Forbidden as exc:
        text = str(exc)
        if "PodSecurity" in text:
            raise HnsPodError(
                f"Pod Security in namespace {options.namespace} does not allow HostProcess pods ({_violation(text)}); "
                f"run in a namespace that does: kubectl create namespace kubectl-win-debug && kubectl label namespace "
                f"kubectl-win-debug pod-security.kubernetes.io/enforce=privileged, then add -n kubectl-win-debug",
                2) from None
        raise HnsPodError(f"cannot create the HostProcess pod in namespace {options.namespace}: {text} "
                          f"({options.purpose} needs create/delete/get on pods and create on pods/exec there)",
                          3) from None


def _violation(text: str) -> str:
    start = text.find("violates PodSecurity")
    return text[start:] if start >= 0 else text


def wait_running(cluster: Any, options: LiveOptions, name: str) -> None:
    deadline = time.monotonic() + options.timeout
    state = "Pending"
    while time.monotonic() < deadline:
        pod = cluster.get_object("pods", name, options.namespace)
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        if phase == "Running":
            return
        if phase in ("Failed", "Succeeded"):
            raise HnsPodError(f"the HostProcess pod on {options.node} ended ({phase}: "
                              f"{status.get('reason') or status.get('message') or 'no reason given'})")
        for container in status.get("containerStatuses") or ():
            waiting = (container.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason") or ""
            if reason in BAD_WAITING:
                hint = "; give --image with an image the node can pull" if "Image" in reason else ""
                raise HnsPodError(f"the HostProcess pod on {options.node} cannot start: {reason}: "
                                  f"{' '.join(str(waiting.get('message') or '').split())}{hint}")
            state = reason or state
        time.sleep(options.poll_interval)
    raise HnsPodError(f"the HostProcess pod on {options.node} did not start within {options.timeout:g}s "
                      f"(still {state}); raise --timeout, or check the node with kubectl describe node {options.node}")


def _exec(cluster: Any, options: LiveOptions, name: str) -> str:
    from kubectl_win.portforward.transport import ExecError, exec_query, run_exec, target_from_args

    path = f"/api/v1/namespaces/{options.namespace}/pods/{name}/exec"
    target = target_from_args(cluster.websocket_args(path, exec_query(script.command(), "hns", stdin=False)))
    try:
        stdout, stderr, status = run_exec(target, None, timeout=options.timeout, max_output=256 << 20)
    except ExecError as exc:
        raise HnsPodError(f"cannot run the HNS dump on {options.node}: {exc}") from None
    if not status.success:
        detail = " ".join(stderr.decode("utf-8", "replace").split())[:300] or status.message
        raise HnsPodError(f"the HNS dump on {options.node} failed: {detail or status.reason}")
    return stdout.decode("utf-8", "replace")


def delete_pods(cluster: Any, pods: set[tuple[str, str]]) -> None:
    """Delete every pod still registered (doctor --deep, interrupted)."""
    for namespace, name in sorted(pods):
        pods.discard((namespace, name))
        delete_pod(cluster, namespace, name)


def delete_pod(cluster: Any, namespace: str, name: str) -> None:
    """Delete the pod; a second Ctrl-C or SIGTERM does not cut the clean-up short."""
    handlers = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            handlers[signum] = signal.signal(signum, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
    try:
        cluster.delete("pods", name, namespace, grace_seconds=1)
    except KubectlWinError as exc:
        print(f"warning: could not delete pod {namespace}/{name}: {exc}; delete it with kubectl delete pod "
              f"-n {namespace} {name}", file=sys.stderr)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def remove_leftovers(cluster: Any, options: LiveOptions) -> None:
    """Pods of ours on this node that finished or outlived their deadline (a run killed with SIGKILL)."""
    from kubectl_win.kube import ApiError

    try:
        pods = list(cluster.list("pods", namespace=options.namespace, label_selector=f"{APP_LABEL}={options.app}",
                                 field_selector=f"spec.nodeName={options.node}"))
    except ApiError:
        return
    now = datetime.now(UTC)
    for pod in pods:
        meta = pod.get("metadata") or {}
        phase = (pod.get("status") or {}).get("phase")
        age = _age(meta.get("creationTimestamp"), now)
        if phase in ("Succeeded", "Failed") or age > options.deadline:
            delete_pod(cluster, options.namespace, str(meta.get("name")))


def _age(stamp: Any, now: datetime) -> float:
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (now - created).total_seconds()


