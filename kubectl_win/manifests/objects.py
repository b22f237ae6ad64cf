"""Object geometry: the pod spec(s) inside any pod-bearing kind (where each kind keeps it is in
kubectl_win/kinds.py), their containers, whether a pod runs HostProcess, and paths in the API server's
notation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kubectl_win.kinds import POD_SPEC_PATHS

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from kubectl_win.manifests.lines import LineLocator

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")

Path = tuple[str | int, ...]


@dataclass(slots=True)
class PodTemplate:
    """A pod spec inside an object: its path from the object root, the spec and the pod metadata."""

    spec_path: Path
    spec: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(slots=True)
class ManifestObject:
    """One object read from a source, with what is needed to point at its lines."""

    obj: dict[str, Any]
    source: str
    document: int  # 0-based document index within the source
    prefix: Path = ()  # path of the object within its document (items[i] for kind: List)
    locator: LineLocator | None = field(default=None, repr=False)

    def line(self, path: Path) -> int | None:
        return self.locator.line(self.prefix + tuple(path)) if self.locator else None


def pod_templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """The pod spec(s) of a pod-bearing object; [] for other kinds or when the spec is absent or malformed."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind", "")))
    if path is None:
        return []
    node: Any = obj
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
        if node is None:
            return []
    if not isinstance(node, dict):
        return []
    if path == ("spec",):
        meta = obj.get("metadata")
    else:
        parent: Any = obj
        for step in path[:-1]:
            parent = parent.get(step)
        meta = parent.get("metadata") if isinstance(parent, dict) else None
    return [PodTemplate(path, node, meta if isinstance(meta, dict) else {})]


def malformed_pod_spec(obj: dict[str, Any]) -> str | None:
    """Why a pod-bearing object's spec cannot be read (a wrong type on the way), or None."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind", "")))
    if path is None:
        return None
    node: Any = obj
    walked: list[str] = []
    for step in path:
        if not isinstance(node, dict):
            return f"{'.'.join(walked)} is a {type_word(type(node).__name__)}, expected a mapping"
        node = node.get(step)
        walked.append(str(step))
        if node is None:
            return None
    if not isinstance(node, dict):
        return f"{'.'.join(walked)} is a {type_word(type(node).__name__)}, expected a mapping"
    for list_name in CONTAINER_LISTS + ("volumes", "tolerations"):
        value = node.get(list_name)
        if value is not None and not isinstance(value, list):
            return f"{'.'.join(walked)}.{list_name} is a {type_word(type(value).__name__)}, expected a list"
    return None


def iter_containers(spec: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(list name, index, container) for containers, initContainers and ephemeralContainers."""
    for list_name in CONTAINER_LISTS:
        containers = spec.get(list_name)
        if isinstance(containers, list):
            for index, container in enumerate(containers):
                if isinstance(container, dict):
                    yield list_name, index, container


def is_host_process(spec: dict[str, Any]) -> bool:
    """Whether a pod spec runs HostProcess: its securityContext.windowsOptions.hostProcess, or that of any of its
    containers (a container's own setting wins over the pod's, as the kubelet decides it). The API server
    admits no pod that mixes HostProcess and other containers, so a pod-level true marks the pod whatever its
    containers say."""
    if _host_process_setting(spec) is True:
        return True
    return any(_host_process_setting(container) is True for _, _, container in iter_containers(spec))


def _host_process_setting(holder: dict[str, Any]) -> Any:
    context = holder.get("securityContext")
    options = context.get("windowsOptions") if isinstance(context, dict) else None
    return options.get("hostProcess") if isinstance(options, dict) else None


def format_path(path: Path) -> str:
    """('spec', 'containers', 0, 'image') -> 'spec.containers[0].image' (the API server's notation)."""
    out = []
    for step in path:
        if isinstance(step, int):
            out.append(f"[{step}]")
        else:
            out.append(("." if out else "") + step)
    return "".join(out)


def spec_path_of(kind: str) -> str:
    """The pod spec's dotted path in an object of this kind ('spec.template.spec'); 'spec' for a pod or
    an unknown kind."""
    return format_path(POD_SPEC_PATHS.get(kind, ("spec",)))


def type_word(python_type: str) -> str:
    return {
        "str": "string",
        "int": "number",
        "float": "number",
        "bool": "boolean",
        "list": "list",
        "dict": "mapping",
        "NoneType": "null",
        "datetime": "timestamp",
        "date": "date",
    }.get(python_type, python_type)
