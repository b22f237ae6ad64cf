"""Resource names for the API: plurals, singulars, kinds and kubectl's short names, from the one table of
kinds (kubectl_win/kinds.py), and the API paths they make."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from kubectl_win.errors import UsageError
from kubectl_win.kinds import KINDS


def segment(text: str) -> str:
    """One path segment: a namespace or name cannot add segments, a query or a fragment to an API path
    (names come from users and from the cluster; `..`, `/`, `?` and `%` are sent escaped)."""
    escaped = quote(text, safe="")
    return escaped.replace(".", "%2E") if escaped in (".", "..") else escaped


@dataclass(frozen=True)
class ResourceInfo:
    group: str  # "" for core
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection_path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{segment(namespace)}/{self.plural}"
        return f"{base}/{self.plural}"

    def object_path(self, name: str, namespace: str | None) -> str:
        return f"{self.collection_path(namespace)}/{segment(name)}"


RESOURCES: tuple[ResourceInfo, ...] = tuple(
    ResourceInfo(k.group, k.version, k.plural, k.kind, k.namespaced, k.short_names) for k in KINDS if k.read)


def _index() -> dict[str, ResourceInfo]:
    index: dict[str, ResourceInfo] = {}
    for r in RESOURCES:
        singular = r.kind.lower()
        for alias in (r.plural, singular, r.kind, *r.short_names, f"{r.plural}.{r.group}" if r.group else r.plural):
            index.setdefault(alias, r)
            index.setdefault(alias.lower(), r)
    return index


_BY_NAME = _index()


def resolve(name: str) -> ResourceInfo:
    """`pods`, `pod`, `po`, `Pod`, `deployments.apps`, `deploy` ... -> the resource."""
    info = _BY_NAME.get(name) or _BY_NAME.get(name.lower())
    if info is None:
        raise UsageError(f'the server doesn\'t have a resource type "{name}" (known: '
                         f'{", ".join(r.plural for r in RESOURCES)})')
    return info


def for_kind(api_version: str, kind: str) -> ResourceInfo | None:
    for r in RESOURCES:
        if r.kind == kind and r.api_version == api_version:
            return r
    return None
