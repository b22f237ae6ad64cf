"""`scaffold node-taint`: the kubectl taint commands for Windows nodes that lack a Windows taint, and the
kubelet flag that taints new nodes as they register."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from kubectl_win import platforms
from kubectl_win.builds import Build, build_for_version, known_builds
from kubectl_win.scaffold.options import PlacementOptions, Taint
from kubectl_win.scaffold.placement import (
    BUILD_LABEL,
    OS_LABEL,
    is_windows_node,
    node_build,
    node_name,
    scheme,
    windows_taints,
)
from kubectl_win.taint_scheme import SchemeTaint, is_kep_value, windows_taint


@dataclass
class TaintPlan:
    commands: list[str] = field(default_factory=list)
    kubelet_flags: list[tuple[str, str]] = field(default_factory=list)  # (build display, flag)
    tainted: list[str] = field(default_factory=list)  # nodes that already carry a Windows taint
    scheme_note: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"commands": self.commands, "kubeletFlags": [{"build": b, "flag": f} for b, f in self.kubelet_flags],
                "alreadyTainted": self.tainted, "scheme": self.scheme_note, "warnings": self.warnings}


def node_taint_for(build: Build | None, windows: list[dict[str, Any]] | None = None,
                   explicit: tuple[Taint, ...] = ()) -> list[Taint]:
    """The taints a Windows node of `build` gets: the --taint values, else the one taint scheme's answer
    (kubectl_win/taint_scheme.py) for the cluster's Windows nodes (offline: KEP-116's os=Win<release>)."""
    if explicit:
        return list(explicit)
    chosen = _recommended(build, windows or [])
    return [Taint(chosen.key, chosen.value, chosen.effect)]


def _recommended(build: Build | None, windows: list[dict[str, Any]]) -> SchemeTaint:
    in_use = [(t.key, t.value, t.effect) for node in windows for t in windows_taints(node)]
    return windows_taint(build, in_use, platforms.of_cluster(platforms.detect_node(n) for n in windows))


def plan_node_taints(opts: PlacementOptions, nodes: list[dict[str, Any]] | None = None) -> TaintPlan:
    if nodes is None:
        return _offline_plan(opts)
    plan = TaintPlan()
    every_windows = [n for n in nodes if is_windows_node(n)]
    windows = every_windows
    if opts.build is not None:
        windows = [n for n in windows if node_build(n) == opts.build.version]
    if not windows:
        plan.warnings.append("the cluster has no Windows nodes" + (f" of {opts.build.display()}" if opts.build else ""))
    plan.scheme_note = _describe(opts.taints, _recommended(opts.build, every_windows) if every_windows else None)
    where = platforms.platform(platforms.of_cluster(platforms.detect_node(n) for n in nodes))
    builds: dict[str, Build | None] = {}
    pools: dict[str, list[str]] = {}
    for node in windows:
        build = build_for_version(v) if (v := node_build(node)) else None
        builds.setdefault(build.version if build else "", build)
        if windows_taints(node):
            plan.tainted.append(node_name(node))
            continue
        for taint in node_taint_for(build, every_windows, opts.taints):
            plan.commands.append(f"kubectl taint nodes {shlex.quote(node_name(node))} {shlex.quote(str(taint))}")
            pools.setdefault(str(taint), []).append(node_name(node))
    for build in builds.values():
        plan.kubelet_flags.append(_kubelet_flag(build, node_taint_for(build, every_windows, opts.taints)))
    if where.fixes.get("taint") and plan.commands:
        plan.warnings.append(_platform_route(where, pools, nodes))
    return plan


def _platform_route(where: platforms.Platform, pools: dict[str, list[str]], nodes: list[dict[str, Any]]) -> str:
    """What lasts on a platform that manages its nodes' taints: the pool's own setting."""
    from kubectl_win.shells import quote_command

    by_name = {node_name(n): n for n in nodes}
    lines = []
    for taint, names in pools.items():
        labels = {str(k): str(v) for k, v in ((by_name[names[0]].get("metadata") or {}).get("labels") or {}).items()}
        key, _, rest = taint.partition("=")
        value = rest.rpartition(":")[0]
        values = platforms.fix_values(where, names[0], labels, taint=taint, taint_key=key, taint_value=value,
                                      taint_effect_api="NO_SCHEDULE")
        route = platforms.fix(where, "taint", values)
        if route is not None:
            lines += [quote_command(argv) for argv in route.commands] + [route.note]
    return (f"the cluster runs on {where.name}: a kubectl taint lasts only until the node is replaced; "
            + " ".join(lines))


def _offline_plan(opts: PlacementOptions) -> TaintPlan:
    plan = TaintPlan(scheme_note=_describe(opts.taints, None))
    builds = [opts.build] if opts.build else [b for b in known_builds() if b.supported]
    for build in builds:
        selector = f"{OS_LABEL}=windows,{BUILD_LABEL}={build.version}"
        taints = node_taint_for(build, None, opts.taints)
        for taint in taints:
            plan.commands.append(f"kubectl taint nodes -l {selector} {shlex.quote(str(taint))}")
        plan.kubelet_flags.append(_kubelet_flag(build, taints))
    return plan


def _kubelet_flag(build: Build | None, taints: list[Taint]) -> tuple[str, str]:
    return (build.display() if build else "nodes without a build label",
            f"--register-with-taints={','.join(str(t) for t in taints)}")


def _describe(explicit: tuple[Taint, ...], recommended: SchemeTaint | None) -> str:
    if explicit:
        return "the taints given with --taint"
    if recommended is not None:
        if is_kep_value(recommended.key, recommended.value):
            return f"os=Win<release>:NoSchedule, {recommended.why}"
        return f"{recommended.text()}, {recommended.why}"
    default = scheme()
    value = "Win<release>" if default["value"] == "{build}" else default["value"]
    return f"{default['key']}={value}:{default['effect']}, {default['description']}"
