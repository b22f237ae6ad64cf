"""`kubectl win logs`: a Windows node's kubelet, containerd, kube-proxy, csi-proxy and CNI logs."""

from __future__ import annotations

from typing import Annotated, Any

import click
import typer

from kubectl_win.commands.base import KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import kube_options, shared
from kubectl_win.env import Env

DESCRIPTION = (
    "Read a Windows node's component logs through the API server's node proxy (the kubelet's node log "
    "query API): log files under C:\\var\\log are fetched and filtered here, components running as pods "
    "are read from their pods, other names are event providers of the Application log (filtered by the "
    "kubelet, or here when it refuses the options for a name it serves from a file). Knows where "
    "kubeadm/sig-windows-tools, AKS, EKS, OpenShift and RKE2 nodes keep each log, and says how to read the "
    "ones the kubelet cannot serve. Without SERVICE, lists the components and where their logs are."
)
EXAMPLES = """examples:
  kubectl win logs win-node-1                              # where each component logs on this node
  kubectl win logs win-node-1 kubelet --since 1h --pattern 'error|fail'
  kubectl win logs win-node-1 kube-proxy containerd --tail 200
  kubectl win logs win-node-1 kubelet --since 2h --until 1h -v  # -v: where the filtering was done, and why
  kubectl win logs win-node-1 kubelet containerd kube-proxy --since 1h --analyse  # the failures, read as doctor does
  kubectl win logs win-node-1 Microsoft-Windows-Security-SPP   # an Application event-log provider

needs get on nodes/proxy (and get on pods/log for components running as pods)
"""
COMPONENT_HELP = "kubelet, kube-proxy, containerd, csi-proxy, cni, hns, or an event provider name"


class NonNegative(click.ParamType):
    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = int(value)
        except ValueError:
            self.fail(f"not a number: {value!r}", param, ctx)
        if number < 0:
            self.fail(f"must be 0 or more: {value!r}", param, ctx)
        return number


@shared(kube_options(selector=False, all_namespaces=False))
def logs(
    node: Annotated[str, typer.Argument(metavar="NODE", help="the Windows node", show_default=False)],
    services: Annotated[list[str] | None, typer.Argument(
        metavar="SERVICE...", help=COMPONENT_HELP, show_default=False)] = None,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="DURATION|TIME", help="only lines newer than this: 30m, 1h, 2d, or RFC 3339")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", metavar="DURATION|TIME", help="only lines older than this: 30m, 1h, 2d (ago), or RFC 3339")
    ] = None,
    tail: Annotated[int | None, typer.Option(
        "--tail", metavar="N", click_type=NonNegative(), help="only the last N lines (of each service)")] = None,
    pattern: Annotated[str | None, typer.Option(
        "--pattern", "--grep", metavar="REGEX", help="only lines matching REGEX (case-insensitive)")] = None,
    distribution: Annotated[str | None, typer.Option(
        "--distribution", metavar="NAME",
        help="where the node keeps its logs: kubeadm, aks, eks, openshift, rke2 (default: detected)")] = None,
    verbose: Annotated[bool, typer.Option(
        "-v", "--verbose", help="say on stderr when the filtering is done here rather than by the kubelet, and why")
    ] = False,
    analyse: Annotated[bool, typer.Option(
        "--analyse", "--analyze", help="print the failures the lines report, read as doctor reads them (subsystem, "
        "component, cause, next steps), instead of the lines; exit 1 when there are any")] = False,
    **shared: Any,
) -> int:
    return invoke(run, {**locals(), "services": list(services or ())})


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("logs", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(logs)


def run(args: Any, env: Env) -> int:
    import re

    from kubectl_win.errors import UsageError
    from kubectl_win.kube import KubeFlags, connect
    from kubectl_win.nodelogs.fetch import (
        Filters,
        LogOptions,
        check_services,
        pick_distribution,
        read_logs,
        windows_node,
    )
    from kubectl_win.nodelogs.filtering import parse_time

    try:
        since = parse_time(args.since, "--since") if args.since else None
        until = parse_time(args.until, "--until") if args.until else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.pattern:
        try:
            re.compile(args.pattern)
        except re.error as exc:
            raise UsageError(f"--pattern {args.pattern!r} is not a valid regular expression: {exc}") from None
    check_services(args.services)
    flags = ", ".join(Filters(since, until, args.pattern, args.tail).flags)
    notes: list[str] = []
    said: set[str] = set()
    read = 0
    with connect(KubeFlags.from_args(args)) as cluster:
        if not args.services:
            node = windows_node(cluster, args.node)
            _render_locations(args.node, pick_distribution(node, args.distribution), env)
            return 0
        options = LogOptions(args.node, list(args.services), since=since, tail=args.tail, pattern=args.pattern,
                             distribution=args.distribution, until=until)
        _, results = read_logs(cluster, options)
        findings: list[Any] = []
        for result in results:  # one at a time: each log is streamed to stdout as it is read
            if result.lines is None:
                notes.append(result.note)
                continue
            read += 1
            if args.analyse:
                from kubectl_win.doctor.deep import scan_lines

                findings.extend(scan_lines(args.node, result.service, list(result.lines), "in the lines read"))
                continue
            if args.verbose and result.filtered_here:
                _say_once(env, said, f"note: {result.service}: {flags} applied here: {result.filtered_here}")
            if len(args.services) > 1:
                env.stdout.write(f"==> {result.service}: {result.where} <==\n")
            for line in result.lines:
                env.stdout.write(line + "\n")
    if not read:
        raise UsageError("; ".join(notes))
    for note in notes:
        env.stderr.write(f"note: {note}\n")
    if args.analyse:
        return _render_analysis(args.node, list(args.services), findings, env)
    return 0


def _render_analysis(node: str, services: list[str], findings: list[Any], env: Env) -> int:
    from kubectl_win.output.findings_table import render_by_severity

    if not findings:
        env.stdout.write(f"{node}: no failures in the {', '.join(services)} log lines read\n")
        return 0
    render_by_severity(findings, env.stdout, colour=env.color)
    return 1 if any(f.severity in ("warning", "error") for f in findings) else 0


def _say_once(env: Env, said: set[str], line: str) -> None:
    if line not in said:
        said.add(line)
        env.stderr.write(line + "\n")
        env.stderr.flush()  # before the log lines, as a terminal shows them


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
