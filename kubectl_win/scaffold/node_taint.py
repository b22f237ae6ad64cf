"""`scaffold node-taint`: the kubectl taint commands for Windows nodes that lack a Windows taint, and the
kubelet flag that taints new nodes as they register."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.builds import Build, build_for_version, known_builds
from kubectl_win.scaffold.options import PlacementOptions, Taint
from kubectl_win.scaffold.placement import (
    BUILD_LABEL,
    OS_LABEL,
    default_taint,
    is_windows_node,
    node_build,
    node_name,
    scheme,
    windows_taints,
)


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


def node_taint_for(build: Build | None) -> Taint:
    """The default scheme's taint for a node; builds the KEP scheme has no value for get the docs' os=windows."""
    taint = default_taint(build)
    if taint.value is None:
        docs = scheme("docs")
        return Taint(docs["key"], docs["value"], docs["effect"])
    return taint


def plan_node_taints(opts: PlacementOptions, nodes: list[dict[str, Any]] | None = None) -> TaintPlan:
    if nodes is None:
        return _offline_plan(opts)
    plan = TaintPlan()
    windows = [n for n in nodes if is_windows_node(n)]
    if opts.build is not None:
        windows = [n for n in windows if node_build(n) == opts.build.version]
    if not windows:
        plan.warnings.append("the cluster has no Windows nodes" + (f" of {opts.build.display()}" if opts.build else ""))
    in_use = _scheme_in_use(windows)
    plan.scheme_note = _describe(opts.taints, in_use)
    builds: dict[str, Build | None] = {}
    for node in windows:
        build = build_for_version(v) if (v := node_build(node)) else None
        builds.setdefault(build.version if build else "", build)
        if windows_taints(node):
            plan.tainted.append(node_name(node))
            continue
        for taint in _taints_for(build, opts.taints, in_use):
            plan.commands.append(f"kubectl taint nodes {shlex.quote(node_name(node))} {shlex.quote(str(taint))}")
    for build in builds.values():
        plan.kubelet_flags.append(_kubelet_flag(build, opts.taints, in_use))
    return plan


def _offline_plan(opts: PlacementOptions) -> TaintPlan:
    plan = TaintPlan(scheme_note=_describe(opts.taints, None))
    builds = [opts.build] if opts.build else [b for b in known_builds() if b.supported]
    for build in builds:
        selector = f"{OS_LABEL}=windows,{BUILD_LABEL}={build.version}"
        for taint in _taints_for(build, opts.taints, None):
            plan.commands.append(f"kubectl taint nodes -l {selector} {shlex.quote(str(taint))}")
        plan.kubelet_flags.append(_kubelet_flag(build, opts.taints, None))
    return plan


def _taints_for(build: Build | None, explicit: tuple[Taint, ...], in_use: Taint | str | None) -> list[Taint]:
    if explicit:
        return list(explicit)
    if isinstance(in_use, Taint):
        return [in_use]
    return [node_taint_for(build)]


def _kubelet_flag(build: Build | None, explicit: tuple[Taint, ...], in_use: Taint | str | None) -> tuple[str, str]:
    taints = ",".join(str(t) for t in _taints_for(build, explicit, in_use))
    return (build.display() if build else "nodes without a build label", f"--register-with-taints={taints}")


def _scheme_in_use(windows: list[dict[str, Any]]) -> Taint | str | None:
    """The one scheme the tainted Windows nodes share: 'kep' (per-build values) or a fixed taint; else None."""
    forms: set[Taint | str] = set()
    for node in windows:
        taints = windows_taints(node)
        if not taints:
            continue
        build = build_for_version(v) if (v := node_build(node)) else None
        kep = default_taint(build)
        forms.add("kep" if any(t == kep and t.value is not None for t in taints) else taints[0])
    return forms.pop() if len(forms) == 1 else None


def _describe(explicit: tuple[Taint, ...], in_use: Taint | str | None) -> str:
    if explicit:
        return "the taints given with --taint"
    if isinstance(in_use, Taint):
        return f"{in_use}, the taint the cluster's other Windows nodes carry"
    if in_use == "kep":
        return "os=Win<release>:NoSchedule, the per-build scheme the cluster's other Windows nodes carry"
    default = scheme()
    value = "Win<release>" if default["value"] == "{build}" else default["value"]
    return f"{default['key']}={value}:{default['effect']}, {default['description']}"
