"""What a check sees of one pod spec: the spec, where it sits, its target OS and the version in force."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from kubectl_win.explain.rules import Location
from kubectl_win.explain.target import Target
from kubectl_win.manifests.objects import Path, is_host_process, iter_containers
from kubectl_win.versions import Version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

MISSING = object()


@dataclass(frozen=True, slots=True)
class Hit:
    """A concrete place a check looks at: its path from the object root and the value found there."""

    path: Path
    value: Any  # MISSING when the path does not exist


@dataclass(slots=True)
class PodContext:
    spec: dict[str, Any]
    metadata: dict[str, Any]
    spec_path: Path
    target: Target
    windows: bool  # treated as a Windows pod (targets Windows, or --assume-windows)
    version: Version
    # The nodeSelector of each RuntimeClass known (explain: those in the files read); all_runtime_classes: they are
    # every RuntimeClass of the cluster, so a name not among them does not exist.
    runtime_classes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    all_runtime_classes: bool = False
    _keys: dict[str, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)

    def may_hold(self, location: Location) -> bool:
        """False when no object of the location's scope has its first key, so every hit of it is MISSING
        (doctor lints thousands of templates; most rules name fields a given pod does not set)."""
        if not location.path:
            return True
        keys = self._keys.get(location.scope)
        if keys is None:
            keys = self._keys[location.scope] = frozenset(self._scope_keys(location.scope))
        return location.path[0] in keys

    def _scope_keys(self, scope: str) -> Iterator[str]:
        if scope == "pod":
            yield from self.spec
        elif scope == "metadata":
            yield from self.metadata
        elif scope in ("container", "mount"):
            for _, _, container in iter_containers(self.spec):
                if scope == "container":
                    yield from container
                else:
                    mounts = container.get("volumeMounts")
                    for mount in mounts if isinstance(mounts, list) else ():
                        if isinstance(mount, dict):
                            yield from mount
        elif scope == "volume":
            volumes = self.spec.get("volumes")
            for volume in volumes if isinstance(volumes, list) else ():
                if isinstance(volume, dict):
                    yield from volume

    @property
    def explicit_windows(self) -> bool:
        return self.target.explicit and self.target.os == "windows"

    @property
    def metadata_path(self) -> Path:
        return self.spec_path[:-1] + ("metadata",) if len(self.spec_path) > 1 else ("metadata",)

    def hostprocess_containers(self) -> list[tuple[str, int, bool]]:
        """(list, index, effective hostProcess) for every container."""
        pod_value = get(self.spec, ("securityContext", "windowsOptions", "hostProcess"))
        result = []
        for list_name, index, container in iter_containers(self.spec):
            value = get(container, ("securityContext", "windowsOptions", "hostProcess"))
            effective = value if value is not MISSING and value is not None else pod_value
            result.append((list_name, index, effective is True))
        return result

    @property
    def hostprocess(self) -> bool:
        """The pod means to be a HostProcess pod (at pod level or in any container)."""
        return is_host_process(self.spec)

    def hits(self, location: Location, container_lists: tuple[str, ...] | None = None) -> Iterator[Hit]:
        """Every concrete place a location names in this pod spec."""
        scope, path = location.scope, location.path
        if scope == "pod":
            yield Hit(self.spec_path + path, get(self.spec, path))
        elif scope == "metadata":
            yield Hit(self.metadata_path + path, get(self.metadata, path))
        elif scope == "container":
            for list_name, index, container in iter_containers(self.spec):
                if container_lists is None or list_name in container_lists:
                    yield Hit(self.spec_path + (list_name, index) + path, get(container, path))
        elif scope == "volume":
            volumes = self.spec.get("volumes")
            for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
                if isinstance(volume, dict):
                    yield Hit(self.spec_path + ("volumes", index) + path, get(volume, path))
        elif scope == "mount":
            for list_name, index, container in iter_containers(self.spec):
                mounts = container.get("volumeMounts")
                for mount_index, mount in enumerate(mounts if isinstance(mounts, list) else []):
                    if isinstance(mount, dict):
                        yield Hit(
                            self.spec_path + (list_name, index, "volumeMounts", mount_index) + path, get(mount, path)
                        )


def get(data: Any, path: tuple[str, ...] | Path) -> Any:
    """The value at path, MISSING when any step is absent or not a mapping/list."""
    node = data
    for step in path:
        if isinstance(step, int):
            if isinstance(node, list) and 0 <= step < len(node):
                node = node[step]
                continue
            return MISSING
        if not isinstance(node, dict) or step not in node:
            return MISSING
        node = node[step]
    return node
