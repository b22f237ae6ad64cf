"""Short-lived HostProcess pods on Windows nodes: the one life cycle `hns`, `collect` and `doctor --deep` share.

A pod is pinned with spec.nodeName, tolerates every taint, runs as NT AUTHORITY\\SYSTEM on the host network
and only sleeps: the caller's work is one exec into it. It is deleted in a `finally` that also runs on errors,
Ctrl-C, SIGTERM and SIGHUP (a closed console), all turned into KeyboardInterrupt while pods exist;
`activeDeadlineSeconds` ends it on the node even if this process is killed outright, and the next run sweeps
the pods of ours that finished or outlived that deadline. Pods started by worker threads are registered, so
the main thread deletes them when it is interrupted (`on_nodes`).
"""

from __future__ import annotations

import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from kubectl_win.errors import KubectlWinError

APP_LABEL = "app.kubernetes.io/name"
POD_DEADLINE_SECONDS = 900
BAD_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerError",
                         "CreateContainerConfigError", "RunContainerError"})

Registry = set[tuple[str, str]]  # (namespace, name) of the pods that exist right now
T = TypeVar("T")


class HostProcessPodError(KubectlWinError):
    """The HostProcess pod could not be started, or the work in it failed."""

    exit_code = 3


@dataclass
class PodOptions:
    node: str
    namespace: str = "kube-system"
    image: str | None = None
    timeout: float = 180.0
    poll_interval: float = 0.5
    # Who starts the pod: its label value (leftovers are swept per label), the container's name and the
    # command named in messages; and how long the pod may live.
    app: str = "kubectl-win-hns"
    purpose: str = "hns"
    deadline: int = POD_DEADLINE_SECONDS


def pod_manifest(name: str, options: PodOptions, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": options.namespace,
                     "labels": {APP_LABEL: options.app, "app.kubernetes.io/managed-by": "kubectl-win"}},
        "spec": {
            "nodeName": options.node,
            "os": {"name": "windows"},
            "hostNetwork": True,
            "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
            "tolerations": [{"operator": "Exists"}],
            "restartPolicy": "Never",
            "activeDeadlineSeconds": options.deadline,
            "terminationGracePeriodSeconds": 1,
            "automountServiceAccountToken": False,
            "containers": [{
                "name": options.purpose, "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command",
                            f"Start-Sleep -Seconds {int(options.deadline)}"],
            }],
        },
    }


def pod_name(node: str, app: str) -> str:
    stem = "".join(c if c.isalnum() else "-" for c in node.lower()).strip("-")[:40].strip("-") or "node"
    return f"{app}-{stem}-{secrets.token_hex(3)}"


@contextmanager
def running_pod(cluster: Any, options: PodOptions, image: str, registry: Registry | None = None,
                say: Callable[[str], None] = lambda _text: None) -> Iterator[str]:
    """Sweep leftovers, create the pod, wait until it runs, yield its name; delete it however the block ends.

    `registry`, when given, holds the pods that exist right now, so that a caller running this in worker
    threads can delete them from the main thread when it is interrupted."""
    sweep(cluster, options)
    name = pod_name(options.node, options.app)
    key = (options.namespace, name)
    registry = registry if registry is not None else set()
    with interrupts_raise():
        created = False
        try:
            say(f"starting HostProcess pod {options.namespace}/{name} on {options.node} ({image})")
            registry.add(key)
            create(cluster, options, name, image)
            created = True
            wait_running(cluster, options, name)
            yield name
        finally:
            if created and key in registry:
                say(f"deleting pod {options.namespace}/{name}")
                delete(cluster, options.namespace, name)
            registry.discard(key)


def on_nodes(cluster: Any, items: Sequence[T], work: Callable[[T], None], parallel: int, registry: Registry,
             stop: Callable[[], bool] = lambda: False, interrupted: Callable[[], None] = lambda: None) -> None:
    """`work(item)` for each item in worker threads, `parallel` at a time (work catches its own errors); no
    new item starts once `stop()` is true. Interrupted, every registered pod is deleted before this raises."""
    slots = threading.Semaphore(max(1, parallel))

    def run(item: T) -> None:
        try:
            work(item)
        finally:
            slots.release()

    threads: list[threading.Thread] = []
    with interrupts_raise():
        try:
            for item in items:
                while not slots.acquire(timeout=0.2):  # a timeout keeps Ctrl+C responsive
                    pass
                if stop():
                    slots.release()
                    break
                thread = threading.Thread(target=run, args=(item,), daemon=True, name="hostprocess-node")
                thread.start()
                threads.append(thread)
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except BaseException:
            interrupted()
            delete_all(cluster, registry)
            raise


@contextmanager
def interrupts_raise() -> Iterator[None]:
    """SIGTERM (a killed kubectl, a CI timeout) and SIGHUP (a closed terminal) unwind like Ctrl-C, so the pods
    are deleted; on Windows Ctrl-Break and closing the console window do too. Outside the main thread the
    signals are left alone (the main thread's handlers are in place)."""
    from kubectl_win.console import console_events_interrupt

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    try:
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is not None:
                previous[signum] = signal.signal(signum, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        with console_events_interrupt():
            yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def create(cluster: Any, options: PodOptions, name: str, image: str) -> None:
    from kubectl_win.kube import Forbidden

    try:
        cluster.create("pods", pod_manifest(name, options, image), options.namespace)
    except Forbidden as exc:
        text = str(exc)
        if "PodSecurity" in text:
            raise HostProcessPodError(
                f"Pod Security in namespace {options.namespace} does not allow HostProcess pods ({_violation(text)}); "
                f"run in a namespace that does: kubectl create namespace kubectl-win-debug && kubectl label namespace "
                f"kubectl-win-debug pod-security.kubernetes.io/enforce=privileged, then add -n kubectl-win-debug",
                2) from None
        raise HostProcessPodError(f"cannot create the HostProcess pod in namespace {options.namespace}: {text} "
                                  f"({options.purpose} needs create/delete/get on pods and create on pods/exec "
                                  f"there)", 3) from None


def _violation(text: str) -> str:
    start = text.find("violates PodSecurity")
    return text[start:] if start >= 0 else text


def wait_running(cluster: Any, options: PodOptions, name: str) -> None:
    deadline = time.monotonic() + options.timeout
    state = "Pending"
    while time.monotonic() < deadline:
        pod = cluster.get_object("pods", name, options.namespace)
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        if phase == "Running":
            return
        if phase in ("Failed", "Succeeded"):
            raise HostProcessPodError(f"the HostProcess pod on {options.node} ended ({phase}: "
                                      f"{status.get('reason') or status.get('message') or 'no reason given'})")
        for container in status.get("containerStatuses") or ():
            waiting = (container.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason") or ""
            if reason in BAD_WAITING:
                hint = "; give --image with an image the node can pull" if "Image" in reason else ""
                raise HostProcessPodError(f"the HostProcess pod on {options.node} cannot start: {reason}: "
                                          f"{' '.join(str(waiting.get('message') or '').split())}{hint}")
            state = reason or state
        time.sleep(options.poll_interval)
    raise HostProcessPodError(f"the HostProcess pod on {options.node} did not start within {options.timeout:g}s "
                              f"(still {state}); raise --timeout, or check the node with kubectl describe node "
                              f"{options.node}")


def delete_all(cluster: Any, registry: Registry) -> None:
    """Delete every pod still registered (an interrupted run)."""
    for namespace, name in sorted(registry):
        registry.discard((namespace, name))
        delete(cluster, namespace, name)


def delete(cluster: Any, namespace: str, name: str) -> None:
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


def sweep(cluster: Any, options: PodOptions) -> None:
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
        if phase in ("Succeeded", "Failed") or _age(meta.get("creationTimestamp"), now) > options.deadline:
            delete(cluster, options.namespace, str(meta.get("name")))


def _age(stamp: Any, now: datetime) -> float:
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (now - created).total_seconds()
