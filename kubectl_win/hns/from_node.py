"""`kubectl win hns NODE`: a short-lived HostProcess pod on the node prints its HNS state; the pod always goes.

The pod's life cycle (pinned, SYSTEM on the host network, deleted on every exit path, swept when a killed run
left it) is kubectl_win.kube.hostprocess; here: the image for a node, one exec of the constant script in
hns.script, and the comparison with the cluster's Services.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from kubectl_win.errors import UsageError
from kubectl_win.hns import script

if TYPE_CHECKING:
    from kubectl_win.kube.hostprocess import PodOptions, Registry

APP = "kubectl-win-hns"  # the label value of hns's pods (kube.hostprocess.PodOptions.app's default)
DEFAULT_IMAGE = "mcr.microsoft.com/windows/servercore"


def image_for(node: dict[str, Any]) -> str:
    """Windows Server Core with the tag of the node's build (from knowledge/windows_builds.yaml)."""
    from kubectl_win.builds import build_of
    from kubectl_win.doctor.constructors import node_record

    record = node_record(node)
    build = build_of(record.build_number)
    if build is None or not build.image_tags:
        raise UsageError(f"no known Windows Server Core tag for node {record.name} (build "
                         f"{record.windows_build or 'unknown'}); give --image")
    return f"{DEFAULT_IMAGE}:{build.image_tags[0]}"


def inspect_node(flags: Any, options: PodOptions, config: str | None = None,
                 progress: IO[str] | None = None):  # type: ignore[no-untyped-def]
    """Dump HNS on options.node through a HostProcess pod and compare it with the live cluster."""
    from kubectl_win.hns.cluster import build_view
    from kubectl_win.hns.service import analyze_objects
    from kubectl_win.kube import connect

    with connect(flags) as cluster:
        node = _windows_node(cluster, options.node)
        image = options.image or image_for(node)
        doc = dump_node(cluster, options, image, _say(progress))
        doc["node"] = options.node
        objects = cluster_objects(cluster)
    return analyze_objects(doc, build_view(objects), options.node, config)


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


def dump_node(cluster: Any, options: PodOptions, image: str, say: Callable[[str], None],
              registry: Registry | None = None) -> dict[str, Any]:
    """Run the script in a HostProcess pod on the node (deleted however this ends); the parsed dump.

    `registry`: see kube.hostprocess.running_pod (doctor --deep runs this in worker threads)."""
    from kubectl_win.hns.service import parse_hns_text
    from kubectl_win.kube.hostprocess import running_pod

    try:
        with running_pod(cluster, options, image, registry, say) as name:
            say(f"reading HNS on {options.node}")
            output = _exec(cluster, options, name)
    finally:
        say("")
    text = output[output.find("{"):] if "{" in output else output
    return parse_hns_text(text, f"the HNS dump from {options.node}")


def _exec(cluster: Any, options: PodOptions, name: str) -> str:
    from kubectl_win.kube.exec_stream import ExecError, exec_query, run_exec, target_from_args
    from kubectl_win.kube.hostprocess import HostProcessPodError

    path = f"/api/v1/namespaces/{options.namespace}/pods/{name}/exec"
    target = target_from_args(cluster.websocket_args(path, exec_query(script.command(), "hns", stdin=False)))
    try:
        stdout, stderr, status = run_exec(target, None, timeout=options.timeout, max_output=256 << 20)
    except ExecError as exc:
        raise HostProcessPodError(f"cannot run the HNS dump on {options.node}: {exc}") from None
    if not status.success:
        detail = " ".join(stderr.decode("utf-8", "replace").split())[:300] or status.message
        raise HostProcessPodError(f"the HNS dump on {options.node} failed: {detail or status.reason}")
    return stdout.decode("utf-8", "replace")


