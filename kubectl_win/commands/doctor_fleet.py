"""`kubectl win doctor` over several contexts (--context repeated, --all-contexts): validate, scan, render.

Every output format goes through kubectl_win.fleet.render (one renderer per format, `RENDERERS`); this module
only checks the flags that make no sense for a fleet, builds each cluster's DoctorOptions and picks the exit
status (kubectl_win.fleet.summary.fleet_exit_code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectl_win.env import Env

if TYPE_CHECKING:
    from kubectl_win.doctor.render.progress import FleetProgress
    from kubectl_win.doctor.run import DoctorOptions


def run_fleet(args: Any, env: Env, contexts: list[str]) -> int:
    from kubectl_win.fleet.render import FleetOutput, render_fleet, renderer
    from kubectl_win.fleet.scan import scan_clusters
    from kubectl_win.fleet.summary import fleet_exit_code

    _check(args, contexts)
    progress = _progress(args, env, len(contexts))
    width = None
    if env.stdout_isatty and args.output in ("table", "wide"):
        from kubectl_win.output.fold import terminal_width

        width = terminal_width()
    scope = args.scope or "cluster"
    renderers = []
    if not (args.report and args.output == "html"):
        renderers.append(renderer(FleetOutput(env.stdout, args.output, env.shell, env.color, width, scope)))
    page = None
    if args.report:
        import io

        from kubectl_win.fleet.html import HtmlRenderer

        page = io.StringIO()
        renderers.append(HtmlRenderer(FleetOutput(page, "html", env.shell, scope=scope)))

    def options_for(context: str) -> DoctorOptions:
        return _options(args, scope, context, progress.for_cluster(context) if progress else None)

    def arrived(scan: Any) -> None:
        if progress is not None:
            progress.hide()

    def done(scan: Any) -> None:
        if progress is not None:
            progress.cluster_done(scan.context, scan.ok)

    if progress is not None:
        progress.start()
    try:
        summaries = render_fleet(scan_clusters(contexts, options_for, args.parallel), renderers, args.fail_on,
                                 env.shell, on_arrive=arrived, on_done=done)
    finally:
        if progress is not None:
            progress.stop()
    if page is not None:
        from kubectl_win.sharefile import write_shared

        write_shared(args.report, page.getvalue(), force=args.force, what="report")
    return fleet_exit_code(summaries)


def _check(args: Any, contexts: list[str]) -> None:
    from kubectl_win.errors import UsageError
    from kubectl_win.fleet.contexts import check_contexts

    several = "with several contexts"
    if args.from_dump or args.from_bundle:
        raise UsageError("--from-dump and --from-bundle read a file; they cannot be combined with --context")
    for flag, value in (("--save-dump", args.save_dump), ("--deep", args.deep), ("--check-images", args.check_images),
                        ("--cluster", args.cluster), ("--user", args.user)):
        if value:
            raise UsageError(f"{flag} reads one cluster; it cannot be used {several} (give one --context)")
    if args.no_redact:
        raise UsageError("--no-redact only applies to --save-dump PATH")
    if args.force and not args.report:
        raise UsageError("--force only applies to --report PATH")
    if args.report:
        from kubectl_win.sharefile import check_target

        check_target(args.report, "--report", force=args.force, inputs=[("--config", args.config)])
    check_contexts(args.kubeconfig, contexts)


def _options(args: Any, scope: str, context: str, progress: Any) -> DoctorOptions:
    from kubectl_win.doctor.run import DoctorOptions
    from kubectl_win.kube import KubeFlags

    flags = KubeFlags.from_args(args)
    flags.context = context
    namespace = None if args.all_namespaces else args.namespace
    if scope == "workloads" and not args.all_namespaces and not args.namespace:
        namespace = _context_namespace(flags)
    return DoctorOptions(scope=scope, kube_flags=flags, namespace=namespace, config=args.config, progress=progress,
                         max_updates_behind=args.max_updates_behind)


def _context_namespace(flags: Any) -> str:
    """The context's namespace (doctor workloads without -n); a context that cannot be loaded fails its scan."""
    from kubectl_win.errors import KubectlWinError
    from kubectl_win.kube.config import load

    try:
        return load(flags).namespace or "default"
    except KubectlWinError:
        return "default"


def _progress(args: Any, env: Env, total: int) -> FleetProgress | None:
    from kubectl_win.doctor.render.progress import FleetProgress, wanted

    return FleetProgress(env.stderr, total) if wanted(args.progress, env.stderr_isatty) else None
