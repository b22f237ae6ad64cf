"""doctor's records: what the checks read of the cluster, as plain frozen dataclasses (no logic beyond
accessors and values derived once per record). The builder (build.py) makes them; nothing here reads raw
objects."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubectl_win.explain import Target
from kubectl_win.findings import ObjectRef
from kubectl_win.updates import MAX_UPDATES_BEHIND

if TYPE_CHECKING:
    from kubectl_win.doctor.read.bundle import BundleFacts
    from kubectl_win.platforms import Platform


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def text(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class NodeRecord:
    name: str
    os: str | None
    arch: str | None
    labels: dict[str, str]
    os_image: str
    kernel_version: str
    build_label: str | None
    runtime_version: str
    kubelet_version: str
    ready: bool | None
    ready_reason: str
    ready_message: str
    unschedulable: bool
    network_unavailable: tuple[str, str] | None  # (reason, message) when the condition is True
    taints: tuple[Taint, ...]
    memory_capacity: int | None
    memory_allocatable: int | None
    ignores: frozenset[str] = frozenset()
    labelled_build: str | None = None  # major.minor.build from the build label or a cloud label
    build_source: str = ""  # where windows_build came from: status.nodeInfo.kernelVersion or a label
    node_info_missing: bool = False  # status.nodeInfo absent or empty (a partial Node object)
    ready_status: str = ""  # the Ready condition's status as given ("False", "Unknown"); "" without the condition
    platform: str = "unknown"  # the platform the node shows by its own markers (kubectl_win/platforms.py)

    # Derived once per node (checks read them for every pod on the node).
    windows: bool = field(init=False, repr=False, compare=False)
    windows_build: str | None = field(init=False, repr=False, compare=False)
    build_number: int | None = field(init=False, repr=False, compare=False)
    scheduling_taints: tuple[Taint, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        windows = self.os == "windows"
        # major.minor.build from nodeInfo.kernelVersion ('10.0.17763.5830' -> '10.0.17763'), else from the
        # build label or a cloud label when nodeInfo is missing; Windows only.
        build = None
        if windows:
            match = re.match(r"^(\d+\.\d+\.\d+)", self.kernel_version or "")
            build = match.group(1) if match else self.labelled_build
        object.__setattr__(self, "windows", windows)
        object.__setattr__(self, "windows_build", build)
        object.__setattr__(self, "build_number", int(build.split(".")[2]) if build else None)
        object.__setattr__(self, "scheduling_taints",
                           tuple(t for t in self.taints if t.effect in ("NoSchedule", "NoExecute")))

    @property
    def runtime(self) -> str | None:
        scheme, sep, _ = (self.runtime_version or "").partition("://")
        return scheme if sep else None

    @property
    def runtime_release(self) -> str:
        return (self.runtime_version or "").partition("://")[2]

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef("v1", "Node", None, self.name)


@dataclass(frozen=True, slots=True)
class Container:
    path: str  # spec.containers[0]
    name: str
    image: str
    memory_limit: str | None
    memory_request: str | None
    init: bool


@dataclass(frozen=True, slots=True)
class Placement:
    """What the scheduler reads from a pod template (RuntimeClass scheduling is merged by the checks)."""

    node_selector: dict[str, str]
    required_terms: tuple[Any, ...] | None  # nodeAffinity required nodeSelectorTerms (raw), None when absent
    tolerations: tuple[dict[str, Any], ...]
    node_name: str | None
    runtime_class: str | None


@dataclass(frozen=True, slots=True)
class WorkloadRecord:
    """A pod template that decides where future pods go: a controller, or a bare pod not yet placed."""

    ref: ObjectRef
    spec_path: str
    target: Target
    placement: Placement
    containers: tuple[Container, ...]
    host_process: bool
    gmsa: tuple[tuple[str, str], ...]  # (path, credential spec name)
    ignores: frozenset[str]


@dataclass(frozen=True, slots=True)
class LinuxWorkload:
    """A controller whose pods can only go to Linux nodes: no placement, image or memory check reads it, so
    it keeps only what naming its pod template in a fix needs (a Windows-taint event of a pod that is gone)."""

    ref: ObjectRef
    spec_path: str
    tolerations: bool  # the template has tolerations (a fix adds one to the list or creates the list)
    after: int  # how many WorkloadRecords were read before it: the order across both kinds of record


@dataclass(frozen=True, slots=True)
class WorkloadSecurity:
    """What the gMSA and HostProcess checks read of a workload, for every workload (pinned to Linux or not)
    that names a gMSA credential spec or runs HostProcess, in the order they were read."""

    ref: ObjectRef
    spec_path: str
    gmsa: tuple[tuple[str, str], ...]  # (path, credential spec name)
    host_process: bool
    ignores: frozenset[str]


@dataclass(frozen=True, slots=True)
class ContainerState:
    name: str
    image: str
    waiting_reason: str
    waiting_message: str
    last_exit_code: int | None
    restarts: int
    terminated_reason: str = ""
    terminated_message: str = ""


@dataclass(frozen=True, slots=True)
class PodRecord:
    namespace: str
    name: str
    node: str | None
    phase: str
    controller: ObjectRef | None  # ReplicaSet resolved to its Deployment when the hash label allows
    target: Target
    containers: tuple[Container, ...]
    host_process: bool
    runtime_class: str | None
    states: tuple[ContainerState, ...]
    group: int  # index into Snapshot.pod_groups (explain's rules run once per group)
    ignores: frozenset[str]
    host_network: bool = False  # spec.hostNetwork: the pod shares the node's network (and its localhost)
    domain_logon: bool = False  # a container logs on with a domain identity (a gMSA, or runAsUserName DOMAIN\user)

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef("v1", "Pod", self.namespace, self.name)

    @property
    def owner_ref(self) -> ObjectRef:
        return self.controller or self.ref


@dataclass(slots=True)
class PodGroup:
    """Pods that share one template (same controller and template hash, or the same spec): linted once,
    reported once, and their records share the group's target and containers."""

    packed: str  # a representative pod (metadata and spec), as JSON: a fraction of its size as dicts
    on_windows: bool
    count: int = 1
    target: Target = field(default_factory=lambda: Target(None, False))
    containers: tuple[Container, ...] = ()
    host_process: bool = False
    host_network: bool = False
    domain_logon: bool = False
    lint: tuple[Any, tuple[Any, ...]] | None = None  # (Kubernetes version, explain's findings), linted early

    @property
    def pod(self) -> dict[str, Any]:
        """The representative pod, decoded afresh on each call (rarely needed: the group is linted early)."""
        import orjson

        return orjson.loads(self.packed)


@dataclass(frozen=True, slots=True)
class EventRecord:
    check: str
    ref: ObjectRef
    reason: str
    message: str
    node: str | None
    count: int
    pod: str | None = None  # the pod whose container status showed it (ref is then its controller)
    codes: tuple[Any, ...] = ()  # wincodes.Decoded found in the message
    confidence: str | None = None  # the match's (findings.CONFIDENCE_*): read from the original text
    # The model's reading of the original text (subsystem, component, operation, cause), for a placed failure:
    # the record keeps the redacted text, which can read otherwise.
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class RuntimeClassRecord:
    name: str
    handler: str
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Skipped:
    resource: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    server_version: str | None
    nodes: tuple[NodeRecord, ...]
    pods: tuple[PodRecord, ...]
    pod_groups: tuple[PodGroup, ...]
    workloads: tuple[WorkloadRecord, ...]  # every workload but the controllers pinned to Linux
    events: tuple[EventRecord, ...]
    namespaces: dict[str, dict[str, str]]  # name -> labels
    runtime_classes: dict[str, RuntimeClassRecord]
    gmsa_specs: frozenset[str] | None  # None when the cluster does not serve the CRD
    services: int
    service_ports: int
    agents_seen: frozenset[str]  # node-agent names seen anywhere in the cluster (calico, flannel, ...)
    counts: dict[str, int]  # objects read, per resource
    read: frozenset[str]  # resources that were read completely
    skipped: tuple[Skipped, ...]
    namespace: str | None = None  # None: every namespace
    # Image reference -> what its registry said ({"digest", "platforms": [{os, architecture, osVersion,
    # digest}]} or {"error"}), when doctor --check-images read registries or a saved dump carries it.
    images: dict[str, Any] = field(default_factory=dict)
    linux_workloads: tuple[LinuxWorkload, ...] = ()  # controllers pinned to Linux (not in `workloads`)
    workload_security: tuple[WorkloadSecurity, ...] = ()  # the gMSA and HostProcess checks' inputs
    bundle: BundleFacts | None = None  # doctor --from-bundle: what the support bundle holds per node
    max_updates_behind: int = MAX_UPDATES_BEHIND  # doctor --max-updates-behind: more updates behind is a warning
    # Microsoft's base images (knowledge/windows_updates.yaml base_images) as the registry described them with
    # --check-images: their os.version is the newest revision Microsoft ships (not kept in saved dumps).
    base_images: dict[str, Any] = field(default_factory=dict)
    # The revisions per build that the 10.0.BUILD.REVISION tags of Microsoft's base image repositories name
    # (knowledge/windows_updates.yaml tag_lists), read with --check-images: the updates after the data.
    release_tags: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def windows_nodes(self) -> tuple[NodeRecord, ...]:
        return tuple(n for n in self.nodes if n.windows)

    def node(self, name: str | None) -> NodeRecord | None:
        if not name:
            return None
        return self._node_index().get(name)

    @property
    def platform(self) -> str:
        """The cluster's platform id, from the platforms its nodes show (kubectl_win/platforms.py)."""
        found = self.__dict__.get("_platform")
        if found is None:
            from kubectl_win import platforms

            found = platforms.of_cluster(n.platform for n in self.nodes)
            object.__setattr__(self, "_platform", found)
        return found

    def platform_of(self, node: NodeRecord) -> Platform:
        """The platform that runs `node`: its own when it shows one, else the cluster's."""
        from kubectl_win import platforms

        return platforms.resolve(node.platform, self.platform)

    def _node_index(self) -> dict[str, NodeRecord]:
        index = self.__dict__.get("_nodes_by_name")
        if index is None:
            index = {n.name: n for n in self.nodes}
            object.__setattr__(self, "_nodes_by_name", index)
        return index
