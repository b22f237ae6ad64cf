"""Windows pods without memory limits, and Windows nodes that reserve no memory for the system."""

from __future__ import annotations

from functools import cache

from kubectl_win.catalog import finding
from kubectl_win.doctor import fixes
from kubectl_win.doctor.quantity import format_bytes
from kubectl_win.doctor.records import Container, Snapshot
from kubectl_win.explain.rules import checks
from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.manifests.objects import spec_path_of

DEFAULT_LIMIT = "512Mi"  # a starting point when the container requests nothing; size it to the app


# What the catalogue's fix asks for, as the flags a platform's kubelet settings take.
RESERVE_FLAGS = "--system-reserved=memory=2Gi --kube-reserved=memory=500Mi"


def run(snapshot: Snapshot) -> list[Finding]:
    out = []
    for node in snapshot.windows_nodes:
        if node.memory_capacity and node.memory_allocatable is not None \
                and node.memory_allocatable >= node.memory_capacity:
            out.append(finding("windows-node-no-memory-reserve", node.ref, "status.allocatable.memory",
                               ignores=node.ignores, node=node.name, capacity=format_bytes(node.memory_capacity),
                               route=fixes.node_route(snapshot, node, "kubelet_config", flags=RESERVE_FLAGS)))
    seen: set[ObjectRef] = set()
    for workload in snapshot.workloads:
        if workload.target.windows:
            seen.add(workload.ref)
            out.extend(_limits(workload.ref, workload.containers, workload.ignores))
    # Pods that run on Windows although their template does not say so (no OS selector, untainted node).
    for pod in snapshot.pods:
        node = snapshot.node(pod.node)
        owner = pod.owner_ref
        if node is None or not node.windows or owner in seen:
            continue
        seen.add(owner)
        containers = pod.containers
        if owner.kind != "Pod":
            prefix = spec_path_of(owner.kind)
            containers = tuple(Container(prefix + c.path.removeprefix("spec"), c.name, c.image, c.memory_limit,
                                         c.memory_request, c.init) for c in containers)
        out.extend(_limits(owner, containers, pod.ignores))
    return out


@cache
def _init_containers_too() -> bool:
    """Whether explain's rule (the same id) asks init containers for a limit too: one answer in both commands."""
    rule = next(r for r in checks() if r.id == "windows-memory-limit-missing")
    assert rule.check is not None
    return "initContainers" in rule.check.container_lists


def _limits(ref: ObjectRef, containers: tuple[Container, ...], ignores: frozenset[str]) -> list[Finding]:
    init_too = _init_containers_too()
    missing = [c for c in containers if (init_too or not c.init) and not c.memory_limit]
    if not missing:
        return []
    guessed = [c.name for c in missing if not c.memory_request]
    judgement = ""
    if guessed:
        judgement = (f"{DEFAULT_LIMIT} for {', '.join(guessed)} is a starting point, not a measurement: size the "
                     "limit to the container's working set (kubectl top pod --containers).")
    if len(guessed) < len(missing):
        judgement += (" " if judgement else "") + "Containers that request memory get their request as the limit."
    fix = fixes.memory_limits(ref, [(c.name, c.path, c.memory_request or DEFAULT_LIMIT) for c in missing],
                              judgement=judgement)
    path = missing[0].path + ".resources.limits.memory"
    return [finding("windows-memory-limit-missing", ref, path, ignores=ignores, object=ref.display(),
                    containers=", ".join(c.name for c in missing), fix=fix)]
