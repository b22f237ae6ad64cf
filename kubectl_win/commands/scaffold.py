"""`kubectl win scaffold`: Windows workloads that schedule right the first time, and OS placement for
existing manifests. Thin: flags -> validated options -> kubectl_win.scaffold -> stdout, files or a diff."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kubectl_win.commands.flags import add_kube_flags, add_output_flag
from kubectl_win.env import Env
from kubectl_win.errors import UsageError
from kubectl_win.scaffold import options as valid
from kubectl_win.scaffold.options import (
    DEFAULT_CPU,
    DEFAULT_MEMORY,
    SERVICE_TYPES,
    WORKLOAD_KINDS,
    PlacementOptions,
    WorkloadOptions,
)

DESCRIPTION = """\
Write Windows workloads that land on the right nodes and pass API validation.

  kubectl win scaffold deployment|statefulset|daemonset|job|cronjob NAME --image IMAGE ...
  kubectl win scaffold runtimeclass --windows-build BUILD [--handler H]
  kubectl win scaffold node-taint [--from-cluster]
  kubectl win scaffold patch -f PATH [--in-place | --dry-run]

Workloads carry nodeSelector kubernetes.io/os=windows (and node.kubernetes.io/windows-build for
--windows-build), a toleration per Windows taint, spec.os.name=windows, CPU and memory requests and
limits, and probes on the first port. --from-cluster reads the real taints and builds of the
cluster's Windows nodes instead of assuming the default os=Win<release>:NoSchedule scheme."""
EXAMPLES = """\
examples:
  kubectl win scaffold deployment iis --image mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022 \\
      --port 80 --windows-build ltsc2022 --service LoadBalancer
  kubectl win scaffold daemonset node-agent --image registry.example.com/agent:1.0 --hostprocess -n kube-system
  kubectl win scaffold deployment web --image example.com/web:ltsc2019 --from-cluster --out deploy/
  kubectl win scaffold runtimeclass --windows-build ltsc2022
  kubectl win scaffold node-taint --from-cluster
  kubectl win scaffold patch -f charts/rendered/ --dry-run"""

_KIND_HELP = {
    "deployment": "a Windows Deployment",
    "statefulset": "a Windows StatefulSet",
    "daemonset": "a DaemonSet for the Windows nodes",
    "job": "a Windows Job",
    "cronjob": "a Windows CronJob",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    subparsers = parser.add_subparsers(dest="scaffold_kind", metavar="KIND")
    for kind in WORKLOAD_KINDS:
        sub = _subparser(subparsers, kind, _KIND_HELP[kind])
        sub.add_argument("name", metavar="NAME", help="object name (DNS-1123 label)")
        sub.add_argument("--image", required=True, metavar="IMAGE", help="container image reference")
        sub.add_argument("--port", type=int, action="append", default=[], metavar="N",
                         help="container port (repeatable; the first one gets the probes)")
        if kind in ("deployment", "statefulset"):
            sub.add_argument("--replicas", type=int, default=1, metavar="N", help="replicas (default 1)")
        if kind == "cronjob":
            sub.add_argument("--schedule", default="0 * * * *", metavar="CRON",
                             help="cron schedule (default '0 * * * *')")
        sub.add_argument("--cpu", default=DEFAULT_CPU, metavar="Q",
                         help=f"CPU request and limit (default {DEFAULT_CPU})")
        sub.add_argument("--memory", default=DEFAULT_MEMORY, metavar="Q",
                         help=f"memory request and limit (default {DEFAULT_MEMORY}; Windows pages instead of "
                              "OOM-killing, so a limit is always set)")
        sub.add_argument("--runtime-class", metavar="NAME", help="spec.runtimeClassName")
        sub.add_argument("--gmsa", metavar="SPEC", help="GMSACredentialSpec name for the pod's AD identity")
        sub.add_argument("--run-as-user-name", metavar="USER", help="Windows user the containers run as")
        if kind in ("deployment", "statefulset", "daemonset"):
            sub.add_argument("--service", choices=SERVICE_TYPES, metavar="TYPE",
                             help="also write a Service: ClusterIP|NodePort|LoadBalancer (needs --port)")
        sub.add_argument("--hostprocess", action="store_true",
                         help="HostProcess pod: runs on the host, with host networking")
        _placement_flags(sub)
        _write_flags(sub)
    sub = _subparser(subparsers, "runtimeclass", "a RuntimeClass that schedules onto a Windows build")
    sub.add_argument("--name", metavar="NAME", help="RuntimeClass name (default windows-<build>)")
    sub.add_argument("--handler", default="runhcs-wcow-process", metavar="H",
                     help="containerd runtime handler (default runhcs-wcow-process)")
    _placement_flags(sub)
    _write_flags(sub)
    sub = _subparser(subparsers, "node-taint", "kubectl taint commands for Windows nodes without a taint")
    _placement_flags(sub)
    add_output_flag(sub, ("text", "json"), "text")
    sub = _subparser(subparsers, "patch", "add OS placement to existing manifests")
    sub.add_argument("-f", "--filename", action="append", default=[], required=True, metavar="PATH",
                     help="manifest file or directory (recursive; - for stdin; repeatable)")
    mode = sub.add_mutually_exclusive_group()
    mode.add_argument("--in-place", action="store_true", help="rewrite the files (atomically)")
    mode.add_argument("--dry-run", action="store_true", help="show a unified diff, change nothing")
    _placement_flags(sub)


_KIND_EXAMPLES = {
    "deployment": "kubectl win scaffold deployment iis --image mcr.microsoft.com/windows/servercore/iis:"
                  "windowsservercore-ltsc2022 --port 80 --windows-build ltsc2022 --service LoadBalancer",
    "statefulset": "kubectl win scaffold statefulset db --image example.com/db:ltsc2022 --port 1433 --replicas 3 "
                   "--memory 4Gi --service ClusterIP",
    "daemonset": "kubectl win scaffold daemonset exporter --image example.com/exporter:1 --hostprocess --port 9182 "
                 "-n monitoring",
    "job": "kubectl win scaffold job report --image example.com/report:ltsc2022 --gmsa webapp1",
    "cronjob": "kubectl win scaffold cronjob cleanup --image example.com/cleanup:1 --schedule '0 3 * * *' "
               "--from-cluster",
    "runtimeclass": "kubectl win scaffold runtimeclass --windows-build ltsc2022 --out deploy/",
    "node-taint": "kubectl win scaffold node-taint --from-cluster --context prod",
    "patch": "helm template ./chart | kubectl win scaffold patch -f - > rendered.yaml\n"
             "  kubectl win scaffold patch -f manifests/ --dry-run",
}


def _subparser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    sub = subparsers.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".",
                                epilog=f"example:\n  {_KIND_EXAMPLES[name]}",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    # The process flags work after the kind too (the root parser defines the real defaults).
    sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub.add_argument("--no-color", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub.set_defaults(_scaffold_parser=sub)
    return sub


def _placement_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("placement")
    group.add_argument("--windows-build", metavar="BUILD",
                       help="pin a Windows build: ltsc2019, ltsc2022, ltsc2025 or 10.0.N")
    group.add_argument("--taint", action="append", default=[], metavar="KEY=VALUE:EFFECT",
                       help="tolerate this taint instead of the default scheme (repeatable)")
    group.add_argument("--from-cluster", action="store_true",
                       help="read the taints and builds of the cluster's Windows nodes")
    add_kube_flags(parser, selector=False, all_namespaces=False)


def _write_flags(parser: argparse.ArgumentParser) -> None:
    add_output_flag(parser, ("yaml", "json"), "yaml")
    parser.add_argument("--out", metavar="DIR", help="write one file per object into DIR instead of stdout")
    parser.add_argument("--force", action="store_true", help="overwrite existing files in --out")


def run(args: argparse.Namespace, env: Env) -> int:
    kind = getattr(args, "scaffold_kind", None)
    if kind is None:
        raise UsageError("missing KIND: deployment, statefulset, daemonset, job, cronjob, runtimeclass, "
                         "node-taint or patch (see 'kubectl win scaffold --help')")
    if kind in WORKLOAD_KINDS:
        return _run_workload(args, env)
    if kind == "runtimeclass":
        return _run_runtime_class(args, env)
    if kind == "node-taint":
        return _run_node_taint(args, env)
    return _run_patch(args, env)


def workload_options(args: argparse.Namespace) -> WorkloadOptions:
    """Validated options from the flags (every bad value is a UsageError, exit 2)."""
    kind = args.scaffold_kind
    hostprocess = bool(args.hostprocess)
    ports = tuple(valid.port(p) for p in args.port)
    if len(set(ports)) != len(ports):
        raise UsageError("each --port may be given once")
    service = getattr(args, "service", None)
    if service and not ports:
        raise UsageError("--service needs at least one --port")
    if args.out is None and args.force:
        raise UsageError("--force only applies with --out DIR")
    run_as = args.run_as_user_name
    if hostprocess and run_as is None:
        run_as = valid.HOSTPROCESS_USERS[0]
    return WorkloadOptions(
        kind=kind,
        name=valid.workload_name(args.name, kind, service=bool(service)),
        image=valid.image_reference(args.image),
        namespace=valid.dns1123_label(args.namespace, "namespace") if args.namespace else None,
        ports=ports,
        replicas=valid.replicas(getattr(args, "replicas", 1)),
        cpu=valid.quantity(args.cpu, "cpu"),
        memory=valid.quantity(args.memory, "memory"),
        placement=placement_options(args),
        runtime_class=valid.dns1123_subdomain(args.runtime_class, "runtime class") if args.runtime_class else None,
        gmsa=valid.dns1123_subdomain(args.gmsa, "gMSA credential spec name") if args.gmsa else None,
        run_as_user_name=valid.run_as_user_name(run_as, hostprocess) if run_as is not None else None,
        service=service,
        hostprocess=hostprocess,
        schedule=valid.cron_schedule(getattr(args, "schedule", "0 * * * *")),
    )


def placement_options(args: argparse.Namespace) -> PlacementOptions:
    return PlacementOptions(
        build=valid.build_name(args.windows_build) if args.windows_build else None,
        taints=tuple(dict.fromkeys(valid.taint(t) for t in args.taint)),
        from_cluster=bool(args.from_cluster),
    )


def _nodes(args: argparse.Namespace, placement: PlacementOptions) -> list[dict[str, Any]] | None:
    if not placement.from_cluster:
        return None
    from kubectl_win.scaffold.placement import fetch_nodes

    return fetch_nodes(args)


def _run_workload(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.scaffold.generate import scaffold_workload

    opts = workload_options(args)
    result = scaffold_workload(opts, _nodes(args, opts.placement))
    _report(result.warnings, result.notes, env)
    return _emit(result.objects, args, env)


def _run_runtime_class(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.scaffold.generate import default_runtime_class_name, scaffold_runtime_class

    if args.out is None and args.force:
        raise UsageError("--force only applies with --out DIR")
    placement = placement_options(args)
    name = valid.dns1123_subdomain(args.name or default_runtime_class_name(placement), "name")
    handler = valid.dns1123_label(args.handler, "handler")
    result = scaffold_runtime_class(name, handler, placement, _nodes(args, placement))
    _report(result.warnings, result.notes, env)
    return _emit(result.objects, args, env)


def _run_node_taint(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.scaffold.node_taint import plan_node_taints

    placement = placement_options(args)
    plan = plan_node_taints(placement, _nodes(args, placement))
    _report(plan.warnings, [], env)
    if args.output == "json":
        env.stdout.write(json.dumps(plan.to_dict(), indent=2) + "\n")
        return 0
    out = env.stdout
    if plan.tainted:
        out.write(f"# already tainted: {', '.join(plan.tainted)}\n")
    if plan.commands:
        out.write(f"# taint scheme: {plan.scheme_note}\n")
        out.writelines(command + "\n" for command in plan.commands)
    elif placement.from_cluster:
        out.write("# every Windows node already carries a Windows taint\n")
    if plan.kubelet_flags:
        out.write("# new nodes: add to the kubelet's flags\n")
        out.writelines(f"#   {build}: {flag}\n" for build, flag in plan.kubelet_flags)
        out.write("# pods that must run on these nodes (CNI, kube-proxy, CSI node plugins) need a matching "
                  "toleration\n")
    return 0


def _run_patch(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.scaffold.patch import patch_sources
    from kubectl_win.scaffold.placement import windows_placement
    from kubectl_win.scaffold.writer import write_atomic

    placement_opts = placement_options(args)
    if args.in_place and "-" in args.filename:
        raise UsageError("--in-place cannot rewrite standard input")
    placement = windows_placement(placement_opts, _nodes(args, placement_opts))
    _report(list(placement.warnings), [], env)
    explicit = bool(placement_opts.taints or placement_opts.from_cluster)
    patches = patch_sources(args.filename, placement, explicit, env.stdin)
    for patch in patches:
        _report(patch.warnings, [], env)
    if args.dry_run:
        env.stdout.writelines(p.diff() for p in patches if p.changed)
    elif args.in_place:
        for patch in patches:
            if patch.changed:
                # Through a symlink to its target: replacing the link itself would cut it.
                write_atomic(os.path.realpath(patch.source), patch.patched, replace=True)
                env.stderr.write(f"patched {patch.source}: {'; '.join(patch.changes)}\n")
    else:
        multiple = len(patches) > 1
        for patch in patches:
            if multiple:
                env.stdout.write(f"# Source: {patch.source}\n")
            env.stdout.write(patch.patched)
            if multiple and not patch.patched.endswith("\n"):
                env.stdout.write("\n")
    return 0


def _report(warnings: list[str], notes: list[str], env: Env) -> None:
    for warning in warnings:
        env.warn(warning)
    for note in notes:
        env.stderr.write(f"note: {note}\n")


def _emit(objects: list[dict[str, Any]], args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.scaffold.render import file_name, file_text, to_text

    if args.out is None:
        env.stdout.write(to_text(objects, args.output))
        return 0
    from kubectl_win.scaffold.writer import ensure_folder, write_files

    ensure_folder(args.out)
    files = [(os.path.join(args.out, file_name(obj, args.output)), file_text(obj, args.output)) for obj in objects]
    for path in write_files(files, force=args.force):
        env.stdout.write(f"wrote {path}\n")
    return 0
