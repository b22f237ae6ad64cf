"""`kubectl win logs`: a Windows node's kubelet, containerd, kube-proxy, csi-proxy and CNI logs."""

from __future__ import annotations

import argparse

from kubectl_win.commands.flags import add_kube_flags
from kubectl_win.env import Env

DESCRIPTION = (
    "Read a Windows node's component logs through the API server's node proxy (the kubelet's node log "
    "query API): log files under C:\\var\\log are fetched and filtered here, components running as pods "
    "are read from their pods, other names are event providers of the Application log. Knows where "
    "kubeadm/sig-windows-tools, AKS, EKS, OpenShift and RKE2 nodes keep each log, and says how to read the "
    "ones the kubelet cannot serve. Without SERVICE, lists the components and where their logs are."
)
EXAMPLES = """examples:
  kubectl win logs win-node-1                              # where each component logs on this node
  kubectl win logs win-node-1 kubelet --since 1h --pattern 'error|fail'
  kubectl win logs win-node-1 kube-proxy containerd --tail 200
  kubectl win logs win-node-1 Microsoft-Windows-Security-SPP   # an Application event-log provider

needs get on nodes/proxy (and get on pods/log for components running as pods)
"""
COMPONENT_HELP = "kubelet, kube-proxy, containerd, csi-proxy, cni, hns, or an event provider name"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("node", metavar="NODE", help="the Windows node")
    parser.add_argument("services", nargs="*", metavar="SERVICE", help=COMPONENT_HELP)
    parser.add_argument("--since", metavar="DURATION|TIME", help="only lines newer than this: 30m, 1h, 2d, or RFC 3339")
    parser.add_argument("--tail", metavar="N", type=_non_negative, help="only the last N lines (of each service)")
    parser.add_argument("--pattern", metavar="REGEX", help="only lines matching REGEX (case-insensitive)")
    parser.add_argument("--distribution", metavar="NAME",
                        help="where the node keeps its logs: kubeadm, aks, eks, openshift, rke2 (default: detected)")
    add_kube_flags(parser, selector=False, all_namespaces=False)


def run(args: argparse.Namespace, env: Env) -> int:
    import re

    from kubectl_win.errors import UsageError
    from kubectl_win.kube import KubeFlags, connect
    from kubectl_win.nodelogs.filtering import parse_since
    from kubectl_win.nodelogs.service import LogOptions, check_services, pick_distribution, read_logs, windows_node

    since = None
    if args.since:
        try:
            since = parse_since(args.since)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.pattern:
        try:
            re.compile(args.pattern)
        except re.error as exc:
            raise UsageError(f"--pattern {args.pattern!r} is not a valid regular expression: {exc}") from None
    check_services(args.services)
    with connect(KubeFlags.from_args(args)) as cluster:
        if not args.services:
            node = windows_node(cluster, args.node)
            _render_locations(args.node, pick_distribution(node, args.distribution), env)
            return 0
        options = LogOptions(args.node, list(args.services), since, args.tail, args.pattern, args.distribution)
        _, results = read_logs(cluster, options)
    read = [r for r in results if r.lines is not None]
    if not read:
        raise UsageError("; ".join(r.note for r in results))
    for result in results:
        if result.lines is None:
            env.stderr.write(f"note: {result.note}\n")
            continue
        if len(results) > 1:
            env.stdout.write(f"==> {result.service}: {result.where} <==\n")
        for line in result.lines:
            env.stdout.write(line + "\n")
    return 0


def _render_locations(node: str, dist, env: Env) -> None:  # type: ignore[no-untyped-def]
    from kubectl_win.nodelogs import locations
    from kubectl_win.output.table import render_table

    log_dir = locations.log_dir()
    env.stdout.write(f"{node}: {dist.name}{' (locations not confirmed)' if dist.uncertain else ''}; the log API "
                     f"serves {log_dir}\n")
    rows = []
    for component in locations.components():
        for place in dist.logs.get(component, ()):
            reach = {"file": "log API (file)", "pod": "pods/log", "query": "log API (query)"}.get(place.kind, "no")
            rows.append([component, reach, place.describe(log_dir)])
    render_table(["service", "readable", "where"], rows, env.stdout)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value
