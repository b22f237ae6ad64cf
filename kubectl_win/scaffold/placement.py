"""Where Windows pods go: the nodeSelector and tolerations for a build, from the default taint scheme,
the user's --taint values, or the real taints and builds of the cluster's Windows nodes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubectl_win.builds import Build, build_for_version
from kubectl_win.knowledge import load
from kubectl_win.scaffold.options import PlacementOptions, Taint
from kubectl_win.taint_scheme import kep_taint, windows_taint
from kubectl_win.wellknown import BUILD_LABEL, LEGACY_OS_LABEL, OS_LABEL, windows_taint_keys

if TYPE_CHECKING:
    from kubectl_win.kube.config import KubeFlags


@dataclass(frozen=True)
class Placement:
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, str], ...]
    build: Build | None
    warnings: tuple[str, ...] = field(default=(), compare=False)


def scheme(scheme_id: str | None = None) -> dict[str, Any]:
    """A taint scheme from knowledge/taints.yaml (the default one when no id is given)."""
    data = load("taints")
    wanted = scheme_id or data["default"]
    return next(s for s in data["schemes"] if s["id"] == wanted)


def default_taint(build: Build | None) -> Taint:
    """The one taint scheme's taint for nodes of a build with no cluster to read (kubectl_win/taint_scheme.py):
    os=Win1809:NoSchedule for 10.0.17763.

    Without a build (or for a build the knowledge does not name) the value is left open, so the
    toleration covers every value of the key: the KEP's per-build values and the docs' os=windows.
    """
    chosen = kep_taint(build, open_value=True)
    return Taint(chosen.key, chosen.value, chosen.effect)


def windows_placement(opts: PlacementOptions, nodes: list[dict[str, Any]] | None = None) -> Placement:
    """The selector and tolerations for Windows pods; `nodes` (from --from-cluster) override the defaults."""
    build = opts.build
    warnings: list[str] = []
    if nodes is None:
        taints = list(opts.taints) or [default_taint(build)]
    else:
        build, taints = _from_nodes(nodes, build, warnings)
        taints = _unique(list(opts.taints) + taints)
    selector = {OS_LABEL: "windows"}
    if build is not None:
        selector[BUILD_LABEL] = build.version
    return Placement(selector, tuple(t.toleration() for t in taints), build, tuple(warnings))


def _from_nodes(nodes: list[dict[str, Any]], build: Build | None,
                warnings: list[str]) -> tuple[Build | None, list[Taint]]:
    windows = [n for n in nodes if is_windows_node(n)]
    if not windows:
        warnings.append("the cluster has no Windows nodes; using the default taint scheme")
        return build, [default_taint(build)]
    if build is None:
        versions = sorted({v for n in windows if (v := node_build(n))})
        if len(versions) == 1:
            build = build_for_version(versions[0])
        elif len(versions) > 1:
            warnings.append(f"the cluster's Windows nodes run several builds ({', '.join(versions)}); "
                            "pass --windows-build to pin the one your image is built for")
    else:
        matching = [n for n in windows if node_build(n) == build.version]
        if not matching:
            warnings.append(f"no Windows node in the cluster runs {build.display()}; the pods will stay "
                            "Pending until one joins")
            return build, [default_taint(build)]
        windows = matching
    found = _unique(t for n in windows for t in node_taints(n))
    if any(not windows_taints(n) for n in windows):
        # Nodes without a Windows taint yet: tolerate the one doctor and `scaffold node-taint` will ask for, so
        # these pods keep scheduling once the nodes are tainted.
        every = [n for n in nodes if is_windows_node(n)]
        from kubectl_win import platforms

        chosen = windows_taint(build, [(t.key, t.value, t.effect) for n in every for t in windows_taints(n)],
                               platforms.of_cluster(platforms.detect_node(n) for n in nodes), open_value=True)
        found = _unique([*found, Taint(chosen.key, chosen.value, chosen.effect)])
    return build, found


def is_windows_node(node: dict[str, Any]) -> bool:
    labels = _labels(node)
    return (labels.get(OS_LABEL) or labels.get(LEGACY_OS_LABEL)) == "windows"


def node_build(node: dict[str, Any]) -> str | None:
    return _labels(node).get(BUILD_LABEL) or None


def node_name(node: dict[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name") or "")


def node_taints(node: dict[str, Any]) -> list[Taint]:
    """The node's placement taints (the ones the node lifecycle controllers add and remove are left out)."""
    transient = set(load("taints")["transient_taint_keys"])
    out = []
    for raw in (node.get("spec") or {}).get("taints") or []:
        if not isinstance(raw, dict) or not raw.get("key") or raw["key"] in transient:
            continue
        value = raw.get("value")
        effect = str(raw.get("effect") or "NoSchedule")
        out.append(Taint(str(raw["key"]), None if value is None else str(value), effect))
    return out


def windows_taints(node: dict[str, Any]) -> list[Taint]:
    """The taints that keep Linux pods off this node (a Windows scheme key, NoSchedule or NoExecute)."""
    keys = windows_taint_keys()
    return [t for t in node_taints(node) if t.key in keys and t.effect in ("NoSchedule", "NoExecute")]


def fetch_nodes(flags: KubeFlags) -> list[dict[str, Any]]:
    """The cluster's nodes through the shared access layer (imported only when --from-cluster is used)."""
    from kubectl_win.kube import connect

    return list(connect(flags).list("nodes"))


def _labels(node: dict[str, Any]) -> dict[str, str]:
    labels = (node.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _unique(taints: Iterable[Taint]) -> list[Taint]:
    seen: dict[Taint, None] = {}
    for t in taints:
        seen.setdefault(t, None)
    return list(seen)
