"""`kubectl win logs`: a Windows node's kubelet, containerd, kube-proxy, csi-proxy and CNI logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Connection, kube_options, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from datetime import datetime

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
  kubectl win logs --from-file kubelet.err.log --analyse       # a saved log, offline: no cluster needed
  kubectl win logs win-node-1 --from-file ticket-1234.txt --component containerd --analyse

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


@dataclass(kw_only=True)
class LogsFlags(Connection):
    node: str | None = None
    services: list[str] = field(default_factory=list)
    since: str | None = None
    until: str | None = None
    tail: int | None = None
    pattern: str | None = None
    distribution: str | None = None
    verbose: bool = False
    analyse: bool = False
    from_file: str | None = None
    component: str | None = None


@dataclass(kw_only=True)
class LogsRun(LogsFlags):
    """The flags with --since and --until read as times."""

    since_time: datetime | None = None
    until_time: datetime | None = None


@shared(kube_options(selector=False, all_namespaces=False))
def logs(
    node: Annotated[str | None, typer.Argument(
        metavar="NODE", help="the Windows node (with --from-file: the node the log came from, named in the findings)",
        show_default=False)] = None,
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
    from_file: Annotated[str | None, typer.Option(
        "--from-file", metavar="PATH", help="read a saved log file (- for stdin) instead of a node: offline, no "
        "cluster needed; --since, --until, --tail, --pattern and --analyse apply as to a node's log")] = None,
    component: Annotated[str | None, typer.Option(
        "--component", metavar="NAME", help="with --from-file, whose log it is: kubelet, kube-proxy, containerd, "
        "csi-proxy, cni or hns (default: told by the file's name, e.g. kubelet.err.log or kubeproxy.log)")] = None,
    **shared: Any,
) -> int:
    return invoke(COMMAND, {**locals(), "services": list(services or ())})


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("logs", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(logs)


def validate(flags: LogsFlags) -> None:
    import re

    from kubectl_win.nodelogs.fetch import check_services

    if flags.pattern:
        try:
            re.compile(flags.pattern)
        except re.error as exc:
            raise UsageError(f"--pattern {flags.pattern!r} is not a valid regular expression: {exc}") from None
    check_services(flags.services)
    if flags.from_file is not None:
        from kubectl_win.nodelogs.locations import components

        if flags.services or flags.node in components():
            raise UsageError("--from-file reads one saved log: give no SERVICE (--component says whose log it is; "
                             "NODE, the node it came from)")
        if flags.component is not None and flags.component not in components():
            raise UsageError(f"unknown --component {flags.component!r} (known: {', '.join(components())})")
        return
    if flags.component is not None:
        raise UsageError("--component only applies with --from-file (name the services after NODE)")
    if not flags.node:
        raise UsageError("missing argument 'NODE' (or --from-file PATH for a saved log)")


def complete(flags: LogsFlags, env: Env) -> LogsRun:
    """--since and --until as times (a duration counts back from now)."""
    import dataclasses

    from kubectl_win.nodelogs.fetch import rfc3339
    from kubectl_win.nodelogs.filtering import parse_time

    times = []
    for flag, text in (("--since", flags.since), ("--until", flags.until)):
        try:
            times.append(parse_time(text) if text else None)
        except ValueError as exc:
            raise UsageError(f"{flag} {exc}") from None
    since, until = times
    if since is not None and until is not None and since > until:
        raise UsageError(f"--since ({rfc3339(since)}) is after --until ({rfc3339(until)})")
    return LogsRun(**{f.name: getattr(flags, f.name) for f in dataclasses.fields(flags)},
                   since_time=since, until_time=until)


def run(options: LogsRun, env: Env) -> int:
    if options.from_file is not None:
        return _run_saved(options, env)
    from kubectl_win.kube import connect
    from kubectl_win.nodelogs.fetch import Filters, LogOptions, pick_distribution, read_logs, windows_node

    since, until = options.since_time, options.until_time
    flags = ", ".join(Filters(since, until, options.pattern, options.tail).flags)
    notes: list[str] = []
    said: set[str] = set()
    read = 0
    with connect(options.kube_flags()) as cluster:
        if not options.services:
            node = windows_node(cluster, options.node)
            _render_locations(options.node, pick_distribution(node, options.distribution), env)
            return 0
        log_options = LogOptions(options.node, list(options.services), since=since, tail=options.tail,
                                 pattern=options.pattern, distribution=options.distribution, until=until)
        node = windows_node(cluster, options.node)
        _, results = read_logs(cluster, log_options, node)
        findings: list[Any] = []
        scope = None
        if options.analyse:  # the node's own evidence, as doctor --deep reads its lines with
            from kubectl_win.doctor.deep import node_scope

            scope = node_scope(cluster, node)
        for result in results:  # one at a time: each log is streamed to stdout as it is read
            if result.lines is None:
                notes.append(result.note)
                continue
            read += 1
            if options.analyse:
                from kubectl_win.doctor.deep import scan_lines

                findings.extend(scan_lines(options.node, result.service, list(result.lines), "in the lines read",
                                           snapshot=scope))
                continue
            if options.verbose and result.filtered_here:
                _say_once(env, said, f"note: {result.service}: {flags} applied here: {result.filtered_here}")
            if len(options.services) > 1:
                env.stdout.write(f"==> {result.service}: {result.where} <==\n")
            for line in result.lines:
                env.stdout.write(line + "\n")
    if not read:
        raise UsageError("; ".join(notes))
    for note in notes:
        env.stderr.write(f"note: {note}\n")
    if options.analyse:
        return _render_analysis(options.node, list(options.services), findings, env)
    return 0


def _run_saved(options: LogsRun, env: Env) -> int:
    """A saved log, read as a node's log file is: the same filters, the same analysis; no cluster."""
    from kubectl_win.nodelogs.fetch import Filters
    from kubectl_win.nodelogs.saved import open_saved, pick_component, saved_lines

    assert options.from_file is not None
    node = options.node or "NODE"  # the fixes' commands name the node: a placeholder when the log's is not given
    with open_saved(options.from_file) as stream:
        component = pick_component(options.from_file, options.component)
        lines = Filters(options.since_time, options.until_time, options.pattern, options.tail).apply(
            saved_lines(stream))
        if not options.analyse:
            for line in lines:
                env.stdout.write(line + "\n")
            return 0
        from kubectl_win.doctor.deep import scan_lines

        findings = scan_lines(node, component, list(lines), "in the lines read")
    return _render_analysis(node, [component], findings, env)


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


COMMAND = Command(LogsFlags, run, validate, complete)
