"""`kubectl win serve`: doctor on an interval, its figures served as Prometheus metrics (kubectl_win/fleet/serve.py)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Integer, Seconds, at_least_one, help_panel, param, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.fleet.serve_options import ServeOptions

DESCRIPTION = (
    "Run doctor on the cluster (or several) every interval in the background and serve the last completed "
    "scan as Prometheus metrics: GET /metrics (OpenMetrics when the Accept header asks for it, else the "
    "Prometheus text format), /healthz (200 while serving) and /readyz (200 once a scan completed). A cluster "
    "that cannot be read keeps its last figures with kubectl_win_scan_success 0. Stops on SIGTERM or Ctrl-C. "
    "Read-only: only GETs and LISTs."
)
EXAMPLES = """examples:
  kubectl win serve                                   # the current context, on 127.0.0.1:9108
  kubectl win serve --interval 15m --all-contexts     # every context of the kubeconfig
  kubectl win serve --context prod-eu --context prod-us --parallel 2
  kubectl win serve --listen 0.0.0.0:9108             # every interface (in a pod: see scaffold monitor)
  curl -H 'Accept: application/openmetrics-text' http://127.0.0.1:9108/metrics

exit status: 0 stopped by SIGTERM or Ctrl-C, 2 bad flags, unreadable kubeconfig or a busy port
"""


def _connection() -> list[inspect.Parameter]:
    group = [
        param("kubeconfig", Annotated[str | None, typer.Option(
            "--kubeconfig", metavar="PATH",
            help="path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config; in a pod without one, "
                 "the in-cluster config)")], None),
        param("context", Annotated[list[str] | None, typer.Option(
            "--context", metavar="NAME", help="a kubeconfig context to scan (repeatable; default: the current "
                                              "one)")], None),
        param("all_contexts", Annotated[bool, typer.Option(
            "--all-contexts", help="scan every context of the kubeconfig, in its order")], False),
        param("parallel", Annotated[int, typer.Option(
            "--parallel", metavar="N", click_type=Integer(), help="clusters scanned at a time (default 4)")], 4),
        param("request_timeout", Annotated[float, typer.Option(
            "--request-timeout", metavar="SECONDS", click_type=Seconds(),
            help="timeout for each API request (default 30)")], 30.0),
        param("scan_timeout", Annotated[float | None, typer.Option(
            "--scan-timeout", metavar="SECONDS", click_type=Seconds(),
            help="give up on a cluster whose whole scan (credential plugin included) takes longer: it counts as "
                 "failed and the others are published (default 4x --request-timeout)")], None),
    ]
    return help_panel(group, "Cluster connection")


@dataclass(kw_only=True)
class ServeFlags:
    listen: str = "127.0.0.1:9108"
    interval: str = "5m"
    config: str | None = None
    kubeconfig: str | None = None
    context: list[str] | None = None
    all_contexts: bool = False
    parallel: int = 4
    request_timeout: float = 30.0
    scan_timeout: float | None = None
    cluster_label: str | None = None


@dataclass(frozen=True)
class ServeRun:
    options: ServeOptions
    clusters: dict[str, str | None]  # each cluster's `cluster` label -> the context to read it with


@shared(_connection())
def serve(
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT",
        help="address to serve on: HOST:PORT or [IPv6]:PORT (default 127.0.0.1:9108, loopback only)")
    ] = "127.0.0.1:9108",
    interval: Annotated[str, typer.Option(
        "--interval", metavar="DURATION", help="time from one scan's start to the next: 5m, 90s, 1h30m "
                                               "(default 5m)")] = "5m",
    config: Annotated[str | None, typer.Option(
        "--config", metavar="PATH",
        help="doctor's suppression config (default: .kubectl-win.yaml in the working directory, if present)")
    ] = None,
    cluster_label: Annotated[str | None, typer.Option(
        "--cluster-label", metavar="NAME",
        help="the label that names each cluster (default cluster; left out in a pod reading its own cluster, "
             "whose Prometheus adds one; '' for none)")] = None,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("serve", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(serve)


def run(serving: ServeRun, env: Env) -> int:
    import threading

    from kubectl_win.fleet.serve import serve as serve_forever

    def log(line: str) -> None:
        env.stderr.write(line + "\n")
        env.stderr.flush()

    stop = threading.Event()
    with _stop_on_signals(stop):
        abandoned = serve_forever(serving.options, serving.clusters, log, stop)
    log("serve: stopped")
    if abandoned:
        _exit_now()
    return 0


def validate(flags: ServeFlags) -> None:
    if flags.all_contexts and flags.context:
        raise UsageError("--all-contexts scans every context; it cannot be combined with --context")
    at_least_one(("--parallel", flags.parallel))
    from kubectl_win.fleet.metrics import cluster_label_option

    if cluster_label_option(flags.cluster_label) == "" and (flags.all_contexts or len(flags.context or ()) > 1):
        raise UsageError("--cluster-label '': several clusters need a label that names each")


def complete(flags: ServeFlags, env: Env) -> ServeRun:
    """--listen and --interval read, and the clusters to scan found in the kubeconfig."""
    from kubectl_win.fleet.serve_options import ServeOptions, parse_interval, parse_listen

    host, port = parse_listen(flags.listen, "--listen")
    contexts = tuple(dict.fromkeys(flags.context)) if flags.context else (None,)
    options = ServeOptions(host, port, parse_interval(flags.interval, "--interval"), contexts, flags.parallel,
                           flags.kubeconfig, flags.request_timeout, flags.config,
                           flags.scan_timeout or 4 * flags.request_timeout, flags.cluster_label)
    return ServeRun(options, resolve_clusters(options, flags.all_contexts))


def resolve_clusters(options: ServeOptions, all_contexts: bool) -> dict[str, str | None]:
    """Each cluster's `cluster` label -> the context to read it with (None: the current one or in-cluster)."""
    from kubectl_win.fleet.contexts import all_contexts as every_context
    from kubectl_win.fleet.contexts import check_contexts, context_label
    from kubectl_win.kube import KubeFlags

    if all_contexts:
        return {name: name for name in every_context(options.kubeconfig, "--all-contexts")}
    if options.contexts == (None,):
        label = context_label(KubeFlags(kubeconfig=options.kubeconfig))
        return {label: None}
    check_contexts(options.kubeconfig, options.contexts, "--context")
    return {name: name for name in options.contexts}


def _stop_on_signals(stop: Any):  # type: ignore[no-untyped-def]
    """SIGTERM, SIGINT (and SIGBREAK on Windows) set `stop` while serving; the handlers are put back after."""
    import contextlib
    import signal
    import threading

    @contextlib.contextmanager
    def handlers():  # type: ignore[no-untyped-def]
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        names = [name for name in ("SIGTERM", "SIGINT", "SIGBREAK") if hasattr(signal, name)]
        saved = {name: signal.signal(getattr(signal, name), lambda *_: stop.set()) for name in names}
        try:
            yield
        finally:
            for name, handler in saved.items():
                signal.signal(getattr(signal, name), handler)

    return handlers()


def _exit_now() -> None:
    """End the process at once: a scan under way would otherwise hold the exit until its requests finish (the
    thread pool's workers are joined at exit); nothing of it is kept, so abandoning it loses nothing."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


COMMAND = Command(ServeFlags, run, validate, complete)
