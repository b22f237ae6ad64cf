"""doctor over several contexts (--context repeated, --all-contexts): scan the clusters, render, pick the exit.

Every output format goes through kubectl_win.fleet.render (one renderer per format, `RENDERERS`); this module
builds each cluster's DoctorOptions, shows progress and picks the exit status
(kubectl_win.fleet.summary.fleet_exit_code). The flags were checked by the doctor command before this runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubectl_win.env import Env
from kubectl_win.updates import MAX_UPDATES_BEHIND

if TYPE_CHECKING:
    from kubectl_win.doctor.render.progress import FleetProgress
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.kube.config import KubeFlags


@dataclass(frozen=True)
class FleetRequest:
    contexts: list[str]
    kube_flags: KubeFlags  # the connection flags every cluster shares; each scan sets its own context
    scope: str = "cluster"
    output: str = "table"
    report: str | None = None  # also write one HTML page here (with output "html": instead of stdout)
    force: bool = False  # the report may replace an existing file
    fail_on: str = "error"
    config: str | None = None
    parallel: int = 4
    progress: str = "auto"  # auto|always|never
    scan_timeout: float | None = None  # seconds one cluster's read may take in all
    cluster_label: str | None = None  # -o openmetrics: the label that names each cluster
    max_updates_behind: int = MAX_UPDATES_BEHIND  # doctor --max-updates-behind


def run_fleet(request: FleetRequest, env: Env) -> int:
    from kubectl_win.fleet.render import FleetOutput, render_fleet, renderer
    from kubectl_win.fleet.scan import scan_clusters
    from kubectl_win.fleet.summary import fleet_exit_code

    progress = _progress(request, env)
    width = None
    if env.stdout_isatty and request.output in ("table", "wide"):
        from kubectl_win.output.fold import terminal_width

        width = terminal_width()
    scope = request.scope
    renderers = []
    if not (request.report and request.output == "html"):
        renderers.append(renderer(FleetOutput(env.stdout, request.output, env.shell, env.color, width, scope,
                                              request.cluster_label)))
    page = None
    if request.report:
        import io

        from kubectl_win.fleet.html import HtmlRenderer

        page = io.StringIO()
        renderers.append(HtmlRenderer(FleetOutput(page, "html", env.shell, scope=scope)))

    def options_for(context: str) -> DoctorOptions:
        return _options(request, context, progress.for_cluster(context) if progress else None)

    def arrived(scan: Any) -> None:
        if progress is not None:
            progress.hide()

    def done(scan: Any) -> None:
        if progress is not None:
            progress.cluster_done(scan.context, scan.ok)

    if progress is not None:
        progress.start()
    try:
        scans = scan_clusters(request.contexts, options_for, request.parallel, request.scan_timeout)
        summaries = render_fleet(scans, renderers, request.fail_on, env.shell, on_arrive=arrived, on_done=done)
    finally:
        if progress is not None:
            progress.stop()
    if page is not None:
        from kubectl_win.sharefile import write_shared

        write_shared(request.report, page.getvalue(), force=request.force, what="report")
    return fleet_exit_code(summaries)


def _options(request: FleetRequest, context: str, progress: Any) -> DoctorOptions:
    import dataclasses

    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.errors import KubectlWinError
    from kubectl_win.kube.config import context_namespace

    flags = dataclasses.replace(request.kube_flags, context=context)
    namespace = None if flags.all_namespaces else flags.namespace
    if request.scope == "workloads" and not flags.all_namespaces and not flags.namespace:
        try:
            namespace = context_namespace(flags)
        except KubectlWinError:  # a context that cannot be loaded fails its scan, not the run
            namespace = "default"
    return DoctorOptions(scope=request.scope, kube_flags=flags, namespace=namespace, config=request.config,
                         progress=progress, max_updates_behind=request.max_updates_behind)


def _progress(request: FleetRequest, env: Env) -> FleetProgress | None:
    from kubectl_win.doctor.render.progress import FleetProgress, wanted

    return FleetProgress(env.stderr, len(request.contexts)) if wanted(request.progress, env.stderr_isatty) else None
