"""`kubectl win doctor`: what is wrong with the cluster's Windows nodes and workloads, and how to fix it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kubectl_win.commands.base import KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import (
    Choice,
    Integer,
    kube_options,
    output_option,
    policy_options,
    registry_options,
    shared,
)
from kubectl_win.env import Env

DESCRIPTION = (
    "Inspect the cluster's Windows nodes and the workloads that run on or near them: node readiness and "
    "builds, container runtime, version skew, taints and selectors, image builds, pod fields Windows "
    "rejects, memory limits, kube-proxy/CNI/csi-proxy presence, gMSA and event symptoms. Every finding "
    "comes with the exact command or change that fixes it. Read-only (only GETs and LISTs) unless --deep, "
    "which starts and deletes one HostProcess pod per Windows node."
)
EXAMPLES = """examples:
  kubectl win doctor                              # the whole cluster
  kubectl win doctor nodes                        # Windows node inventory and node findings
  kubectl win doctor workloads -n shop            # workloads of one namespace
  kubectl win doctor --from-dump cluster.json     # offline, from kubectl get nodes,pods,... -A -o json
  kubectl win doctor --save-dump cluster.json     # read the cluster and keep a dump to share
  kubectl win doctor --from-bundle bundle.tar.gz  # offline, from kubectl win collect: also node logs and HNS
  kubectl win doctor --deep --max-nodes 5         # also HNS and the last hour of node logs, per Windows node
  kubectl win doctor --check-images               # also read the Windows images' manifest lists from registries
  kubectl win doctor -o sarif --fail-on warning   # for CI
  kubectl win doctor --report doctor.html         # the table here, a self-contained HTML page to share
  kubectl win doctor --context eu --context us    # several clusters: a section each, then a fleet summary
  kubectl win doctor --all-contexts -o json       # every context of the kubeconfig, 4 clusters at a time

exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input, 3 cluster unreachable;
several clusters: the worst over the clusters read, 3 when none could be read, at least 1 when some could not
"""
FORMATS = ("table", "wide", "json", "yaml", "junit", "sarif", "html", "openmetrics")


@shared(output_option(FORMATS, "table"), policy_options(), registry_options(),
        kube_options(selector=False, contexts=True))
def doctor(
    scope: Annotated[str | None, typer.Argument(
        metavar="SCOPE", click_type=Choice(("nodes", "workloads")), show_default=False,
        help="nodes (Windows node inventory) or workloads (workload findings only); "
             "default: the whole cluster")] = None,
    from_dump: Annotated[str | None, typer.Option(
        "--from-dump", metavar="PATH",
        help="read a dump (kubectl get nodes,pods,... -A -o json, or --save-dump output) "
             "instead of the cluster")] = None,
    from_bundle: Annotated[str | None, typer.Option(
        "--from-bundle", metavar="PATH",
        help="read a support bundle written by kubectl win collect (a .tar.gz or its folder): the cluster "
             "checks, HNS per node, every log line, and node facts the API does not show")] = None,
    save_dump: Annotated[str | None, typer.Option(
        "--save-dump", metavar="PATH", help="also write what doctor read to PATH, for --from-dump")] = None,
    no_redact: Annotated[bool, typer.Option(
        "--no-redact", help="--save-dump keeps env values, commands, arguments, every annotation and inline gMSA "
                            "specs (by default it keeps only what the checks read, to be shared)")] = False,
    deep: Annotated[bool, typer.Option(
        "--deep", help="also look inside each Windows node: HNS through a short-lived HostProcess pod "
                       "(kubectl win hns) and the last hour of kubelet, containerd and kube-proxy logs")] = False,
    check_images: Annotated[bool, typer.Option(
        "--check-images", help="also read each Windows workload image's manifest list from its registry and "
                               "report images with no variant for the nodes they land on (image-no-variant-for-node; "
                               "kubectl win images has the details). Off by default: doctor stays offline")] = False,
    max_updates_behind: Annotated[int, typer.Option(
        "--max-updates-behind", metavar="N", click_type=Integer(),
        help="warn about Windows nodes more than N monthly updates behind the newest known for their build "
             "(windows-updates-behind; default 3)")] = 3,
    max_nodes: Annotated[int, typer.Option(
        "--max-nodes", metavar="N", help="--deep inspects at most N Windows nodes (default 10), 4 at a time")] = 10,
    hns_namespace: Annotated[str, typer.Option(
        "--hns-namespace", metavar="NS", help="namespace of --deep's HostProcess pods (default kube-system)")
    ] = "kube-system",
    hns_image: Annotated[str | None, typer.Option(
        "--hns-image", metavar="IMAGE",
        help="image of --deep's HostProcess pods (default: Server Core matching each node's build)")] = None,
    report: Annotated[str | None, typer.Option(
        "--report", metavar="PATH",
        help="also write the report as one self-contained HTML page to PATH (with -o html: instead of "
             "stdout)")] = None,
    force: Annotated[bool, typer.Option("--force", help="let --report and --save-dump replace an existing file")
                     ] = False,
    progress: Annotated[str, typer.Option(
        "--progress", metavar="WHEN", click_type=Choice(("auto", "always", "never")),
        help="progress on stderr while reading the cluster: auto (on a terminal, not in CI)|always|never "
             "(default auto)")] = "auto",
    all_contexts: Annotated[bool, typer.Option(
        "--all-contexts", help="read every context of the kubeconfig (KUBECONFIG's files merged, in their order)",
        rich_help_panel="Cluster connection")] = False,
    parallel: Annotated[int, typer.Option(
        "--parallel", metavar="N", click_type=Integer(),
        help="with several contexts, read N clusters at a time (default 4)",
        rich_help_panel="Cluster connection")] = 4,
    **shared: Any,
) -> int:
    return invoke(run, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("doctor", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(doctor)


def run(args: Any, env: Env) -> int:
    import time

    from kubectl_win.doctor.run import DoctorOptions, run_doctor
    from kubectl_win.errors import UsageError
    from kubectl_win.findings import exit_code

    seconds = 0.0
    scope = args.scope or "cluster"
    if args.max_updates_behind < 0:
        raise UsageError("--max-updates-behind must be 0 or more")
    contexts = _contexts(args)
    if len(contexts) > 1:
        from kubectl_win.commands.doctor_fleet import run_fleet

        return run_fleet(args, env, contexts)
    args.context = contexts[0] if contexts else None
    if args.from_bundle:
        _check_bundle_flags(args)
    if args.from_dump and any(getattr(args, f) for f in ("kubeconfig", "context", "cluster", "user")):
        raise UsageError("--from-dump reads a file; it cannot be combined with --kubeconfig/--context/--cluster/--user")
    if args.deep and args.from_dump:
        raise UsageError("--deep looks inside live nodes; it cannot be combined with --from-dump "
                         "(use kubectl win hns --from-file for a node's HNS dump)")
    if args.max_nodes < 1:
        raise UsageError("--max-nodes must be 1 or more")
    _check_output_paths(args)
    namespace = None if args.all_namespaces else args.namespace
    if scope == "workloads" and not args.all_namespaces and not args.namespace and not args.from_dump \
            and not args.from_bundle:
        namespace = _context_namespace(args)
    progress = _progress(args, env)
    options = DoctorOptions(scope=scope, from_dump=args.from_dump, from_bundle=args.from_bundle,
                            save_dump=args.save_dump, force=args.force,
                            redact=not args.no_redact,
                            kube_flags=None if args.from_dump or args.from_bundle else _kube_flags(args),
                            namespace=namespace,
                            config=args.config, progress=progress, deep=_deep_options(args) if args.deep else None,
                            max_updates_behind=args.max_updates_behind)
    session = None
    if args.check_images and not args.from_bundle:
        from kubectl_win.commands.registry_session import registry_session

        session = registry_session(args, env)
        options.images, _ = session.__enter__()
    if args.from_bundle:  # not timed: a bundle's metrics describe the bundle
        report = run_doctor(options)
    else:
        try:
            if progress is not None:
                progress.start()
            started = time.monotonic()
            report = run_doctor(options)
            seconds = time.monotonic() - started
        finally:
            if progress is not None:
                progress.stop()
            if session is not None:
                session.__exit__(None, None, None)
    if namespace and (args.from_dump or args.from_bundle):
        allowed = (namespace,) if scope == "workloads" else (None, namespace)
        report.findings = [f for f in report.findings if f.object.namespace in allowed]
    if args.report:
        _write_report(report, args, env.shell)
    if args.output == "openmetrics":
        _render_openmetrics(report, args, seconds, env)
    elif not (args.report and args.output == "html"):
        _render(report, args.output, env, _source(args))
    return exit_code(report.findings, args.fail_on)


def _contexts(args: Any) -> list[str]:
    """The contexts asked for, each once in the order given: --context (repeated), or every one with
    --all-contexts; [] for the kubeconfig's current context."""
    from kubectl_win.errors import UsageError

    given = list(dict.fromkeys(args.context or ()))
    if args.parallel < 1:
        raise UsageError("--parallel must be 1 or more")
    if not args.all_contexts:
        return given
    if given:
        raise UsageError("--all-contexts reads every context; it cannot be combined with --context")
    if args.from_dump or args.from_bundle:
        raise UsageError("--all-contexts reads clusters; it cannot be combined with --from-dump or --from-bundle")
    from kubectl_win.kube.config import context_names

    names = context_names(_kube_flags(args))
    if not names:
        raise UsageError("--all-contexts: the kubeconfig has no contexts")
    return names


def _render_openmetrics(report, args: Any, seconds: float, env: Env) -> None:  # type: ignore[no-untyped-def]
    """One cluster as metrics (kubectl_win/fleet/metrics.py), labelled with its context (a dump: its file name)."""
    import os

    from kubectl_win.fleet.contexts import context_label
    from kubectl_win.fleet.metrics import render_openmetrics
    from kubectl_win.fleet.scan import ClusterScan

    source = args.from_dump or args.from_bundle
    name = os.path.basename(os.path.normpath(source)) if source else context_label(_kube_flags(args))
    render_openmetrics([ClusterScan(name, None, report, seconds=seconds)], env.stdout)


def _check_bundle_flags(args: Any) -> None:
    from kubectl_win.errors import UsageError

    for flag, value in (("--from-dump", args.from_dump), ("--save-dump", args.save_dump), ("--deep", args.deep)):
        if value:
            raise UsageError(f"--from-bundle reads a bundle; it cannot be combined with {flag}")
    if any(getattr(args, f) for f in ("kubeconfig", "context", "cluster", "user")):
        raise UsageError("--from-bundle reads a file; it cannot be combined with "
                         "--kubeconfig/--context/--cluster/--user")


def _check_output_paths(args: Any) -> None:
    """--save-dump and --report, refused before the cluster is read (see kubectl_win/sharefile.py)."""
    from kubectl_win.errors import UsageError
    from kubectl_win.sharefile import check_target

    if args.no_redact and not args.save_dump:
        raise UsageError("--no-redact only applies to --save-dump PATH")
    if args.force and not (args.report or args.save_dump):
        raise UsageError("--force only applies to --report PATH and --save-dump PATH")
    inputs = [("--from-dump", args.from_dump), ("--from-bundle", args.from_bundle), ("--config", args.config)]
    if args.save_dump:
        check_target(args.save_dump, "--save-dump", force=args.force, inputs=inputs)
    if args.report:
        check_target(args.report, "--report", force=args.force,
                     inputs=[*inputs, ("--save-dump", args.save_dump)])


def _write_report(report, args: Any, shell: str) -> None:  # type: ignore[no-untyped-def]
    from kubectl_win.doctor.render.html import render_html
    from kubectl_win.sharefile import write_shared

    write_shared(args.report, render_html(report, _source(args), shell=shell), force=args.force, what="report")


def _source(args: Any) -> str:
    import os

    if args.from_dump:
        return f"dump {os.path.basename(args.from_dump)}"
    if args.from_bundle:
        return f"bundle {os.path.basename(os.path.normpath(args.from_bundle))}"
    return f"context {args.context}" if args.context else "live cluster"


def _deep_options(args: Any):  # type: ignore[no-untyped-def]
    from kubectl_win.doctor.deep import DeepOptions

    return DeepOptions(max_nodes=args.max_nodes, namespace=args.hns_namespace, image=args.hns_image)


def _kube_flags(args: Any):  # type: ignore[no-untyped-def]
    from kubectl_win.kube import KubeFlags

    return KubeFlags.from_args(args)


def _context_namespace(args: Any) -> str:
    from kubectl_win.kube import connect

    with connect(_kube_flags(args)) as cluster:
        return cluster.namespace or "default"


def _progress(args: Any, env: Env):  # type: ignore[no-untyped-def]
    """A Progress line for live scans when --progress allows it (dumps are read too fast to need one)."""
    from kubectl_win.doctor.render.progress import Progress, wanted

    if args.from_dump or args.from_bundle or not wanted(args.progress, env.stderr_isatty):
        return None
    return Progress(env.stderr)


def _render(report, output: str, env: Env, source: str = "") -> None:  # type: ignore[no-untyped-def]
    from kubectl_win import catalog
    from kubectl_win.doctor.render.report import render_findings, render_nodes

    out = env.stdout
    if output in ("json", "yaml"):
        from kubectl_win.output.structured import render_json, render_yaml

        if output == "json":
            render_json(report.to_dict(env.shell, lazy=True), out)
        else:
            render_yaml(report.to_dict(env.shell), out)
    elif output == "junit":
        from kubectl_win.output.junit import render_junit

        render_junit(report.findings, sorted(catalog.doctor_checks()), out, suite="kubectl-win doctor", shell=env.shell)
    elif output == "sarif":
        from kubectl_win.output.sarif import render_sarif

        render_sarif(report.findings, catalog.sarif_rules(report.findings, env.shell), out, shell=env.shell)
    elif output == "html":
        from kubectl_win.doctor.render.html import render_html

        out.write(render_html(report, source, shell=env.shell))
    else:
        wide = output == "wide"
        width = None
        if env.stdout_isatty:
            from kubectl_win.output.fold import terminal_width

            width = terminal_width()
        if report.scope == "nodes":
            render_nodes(report, out, wide, width)
            out.write("\n")
        render_findings(report, out, wide, env.color, width, env.shell)
