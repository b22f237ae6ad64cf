"""`kubectl win doctor`: what is wrong with the cluster's Windows nodes and workloads, and how to fix it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import (
    Choice,
    Connection,
    Integer,
    Policy,
    Registries,
    Seconds,
    at_least_one,
    kube_options,
    one_or_more,
    output_option,
    policy_options,
    reads_a_file,
    registry_options,
    shared,
)
from kubectl_win.env import Env
from kubectl_win.errors import UsageError
from kubectl_win.updates import MAX_UPDATES_BEHIND

if TYPE_CHECKING:
    from kubectl_win.doctor.render.report import DoctorReport

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

exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input, 3 cluster unreachable,
5 incomplete (the nodes could not be read: an empty or pods-only dump, or no right to list nodes); several
clusters: the worst over the clusters read, 3 when none could be read (5 when each failed for want of the
nodes), at least 1 when some could not
"""
FORMATS = ("table", "wide", "json", "yaml", "junit", "sarif", "html", "openmetrics")


@dataclass(kw_only=True)
class DoctorFlags(Connection, Policy, Registries):
    scope: str | None = None
    from_dump: str | None = None
    from_bundle: str | None = None
    save_dump: str | None = None
    no_redact: bool = False
    deep: bool = False
    check_images: bool = False
    max_nodes: int = 10
    max_updates_behind: int = MAX_UPDATES_BEHIND
    hns_namespace: str = "kube-system"
    hns_image: str | None = None
    report: str | None = None
    force: bool = False
    progress: str = "auto"
    all_contexts: bool = False
    parallel: int = 4
    scan_timeout: float | None = None
    output: str = "table"
    cluster_label: str | None = None

    def reads_files(self) -> bool:
        return bool(self.from_dump or self.from_bundle)


@dataclass(kw_only=True)
class DoctorRun:
    """The flags, completed: the clusters to read and, for one, the namespace to look in."""

    flags: DoctorFlags
    contexts: list[str] = field(default_factory=list)  # [] or one: a single cluster; more: a fleet run
    namespace: str | None = None  # None: every namespace


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
             f"(windows-updates-behind; default {MAX_UPDATES_BEHIND})")] = MAX_UPDATES_BEHIND,
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
    scan_timeout: Annotated[float | None, typer.Option(
        "--scan-timeout", metavar="SECONDS", click_type=Seconds(),
        help="with several contexts, give up on a cluster whose whole read (credential plugin included) takes "
             "longer; the others go on (default 4x --request-timeout)",
        rich_help_panel="Cluster connection")] = None,
    cluster_label: Annotated[str | None, typer.Option(
        "--cluster-label", metavar="NAME",
        help="-o openmetrics: the label that names each cluster (default cluster; left out for the in-cluster "
             "config; '' for none)")] = None,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("doctor", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(doctor)


# Flags that do not go together: (for one cluster, for several contexts or for both, the clash, the message), in
# the order they are checked. One table for single-cluster and fleet runs, so each message is written once.
ONE, SEVERAL, BOTH = "one", "several", "both"
_ONE_CLUSTER = "reads one cluster; it cannot be used with several contexts (give one --context)"
CLASHES: tuple[tuple[str, Callable[[DoctorFlags], bool], str], ...] = (
    (BOTH, lambda f: f.all_contexts and bool(f.context),
     "--all-contexts reads every context; it cannot be combined with --context"),
    (BOTH, lambda f: f.all_contexts and f.reads_files(),
     "--all-contexts reads clusters; it cannot be combined with --from-dump or --from-bundle"),
    (ONE, lambda f: bool(f.from_bundle and f.from_dump),
     "--from-bundle reads a bundle; it cannot be combined with --from-dump"),
    (ONE, lambda f: bool(f.from_bundle and f.save_dump),
     "--from-bundle reads a bundle; it cannot be combined with --save-dump"),
    (ONE, lambda f: bool(f.from_bundle and f.deep), "--from-bundle reads a bundle; it cannot be combined with --deep"),
    (ONE, lambda f: bool(f.from_bundle) and f.connection_given(), reads_a_file("--from-bundle")),
    (ONE, lambda f: bool(f.from_dump) and f.connection_given(), reads_a_file("--from-dump")),
    (ONE, lambda f: bool(f.deep and f.from_dump),
     "--deep looks inside live nodes; it cannot be combined with --from-dump "
     "(use kubectl win hns --from-file for a node's HNS dump)"),
    (ONE, lambda f: f.max_nodes < 1, one_or_more("--max-nodes")),
    (BOTH, lambda f: f.max_updates_behind < 0, "--max-updates-behind must be 0 or more"),
    (SEVERAL, lambda f: f.reads_files(),
     "--from-dump and --from-bundle read a file; they cannot be combined with --context"),
    (SEVERAL, lambda f: bool(f.save_dump), f"--save-dump {_ONE_CLUSTER}"),
    (SEVERAL, lambda f: f.deep, f"--deep {_ONE_CLUSTER}"),
    (SEVERAL, lambda f: f.check_images, f"--check-images {_ONE_CLUSTER}"),
    (SEVERAL, lambda f: bool(f.cluster), f"--cluster {_ONE_CLUSTER}"),
    (SEVERAL, lambda f: bool(f.user), f"--user {_ONE_CLUSTER}"),
    (BOTH, lambda f: f.no_redact and not f.save_dump, "--no-redact only applies to --save-dump PATH"),
    (ONE, lambda f: f.force and not (f.report or f.save_dump),
     "--force only applies to --report PATH and --save-dump PATH"),
    (SEVERAL, lambda f: f.force and not f.report, "--force only applies to --report PATH"),
    (BOTH, lambda f: f.cluster_label is not None and f.output != "openmetrics",
     "--cluster-label only applies to -o openmetrics"),
    (SEVERAL, lambda f: f.cluster_label == "", "--cluster-label '': several clusters need a label that names each"),
)


def check_clashes(flags: DoctorFlags, several: bool | None) -> None:
    """Refuse the first clash of the table that applies: `several` says whether several contexts are read (None:
    not known yet, --all-contexts reads the kubeconfig first; only the rows for both are checked)."""
    for applies, clashes, message in CLASHES:
        if (applies == BOTH or (several is not None and applies == (SEVERAL if several else ONE))) and clashes(flags):
            raise UsageError(message)


def validate(flags: DoctorFlags) -> None:
    """What the flags alone decide: --parallel and the clashes (with --all-contexts, the clashes of one or of several
    clusters wait for complete, which counts the kubeconfig's contexts)."""
    from kubectl_win.fleet.metrics import cluster_label_option

    at_least_one(("--parallel", flags.parallel))
    cluster_label_option(flags.cluster_label)
    check_clashes(flags, None if flags.all_contexts else len(set(flags.context or ())) > 1)


def complete(flags: DoctorFlags, env: Env) -> DoctorRun:
    """The contexts to read (--all-contexts: the kubeconfig's); the output files and registry flags refused before
    anything is read; for `doctor workloads` without -n or -A, the context's namespace."""
    import dataclasses

    from kubectl_win.sharefile import check_target

    contexts = list(dict.fromkeys(flags.context or ()))
    if flags.all_contexts:
        from kubectl_win.kube.config import context_names

        contexts = context_names(flags.kube_flags())
        if not contexts:
            raise UsageError("--all-contexts: the kubeconfig has no contexts")
        flags = dataclasses.replace(flags, context=contexts[:1] if len(contexts) == 1 else flags.context)
        check_clashes(flags, len(contexts) > 1)
    inputs = [("--config", flags.config)]
    if len(contexts) > 1:
        if flags.report:
            check_target(flags.report, "--report", force=flags.force, inputs=inputs)
        from kubectl_win.fleet.contexts import check_contexts

        check_contexts(flags.kubeconfig, contexts, "--context")
        return DoctorRun(flags=flags, contexts=contexts)
    inputs = [("--from-dump", flags.from_dump), ("--from-bundle", flags.from_bundle), *inputs]
    if flags.save_dump:
        check_target(flags.save_dump, "--save-dump", force=flags.force, inputs=inputs)
    if flags.report:
        check_target(flags.report, "--report", force=flags.force, inputs=[*inputs, ("--save-dump", flags.save_dump)])
    if flags.check_images and not flags.from_bundle:
        flags.check_registries()
    namespace = None if flags.all_namespaces else flags.namespace
    if flags.scope == "workloads" and not flags.all_namespaces and not flags.namespace and not flags.reads_files():
        from kubectl_win.kube.config import context_namespace

        namespace = context_namespace(flags.kube_flags())
    return DoctorRun(flags=flags, contexts=contexts, namespace=namespace)


def run(plan: DoctorRun, env: Env) -> int:
    import time

    from kubectl_win.doctor.run import DoctorOptions, run_doctor

    flags = plan.flags
    if len(plan.contexts) > 1:
        from kubectl_win.fleet.doctor import FleetRequest, run_fleet

        return run_fleet(FleetRequest(
            contexts=plan.contexts, kube_flags=flags.kube_flags(), scope=flags.scope or "cluster", output=flags.output,
            report=flags.report, force=flags.force, fail_on=flags.fail_on, config=flags.config,
            parallel=flags.parallel, progress=flags.progress,
            scan_timeout=flags.scan_timeout or 4 * flags.request_timeout,
            cluster_label=flags.cluster_label, max_updates_behind=flags.max_updates_behind), env)
    seconds = 0.0
    scope = flags.scope or "cluster"
    with ExitStack() as stack:
        options = DoctorOptions(scope=scope, from_dump=flags.from_dump, from_bundle=flags.from_bundle,
                                save_dump=flags.save_dump, force=flags.force, redact=not flags.no_redact,
                                kube_flags=None if flags.reads_files() else flags.kube_flags(),
                                namespace=plan.namespace, config=flags.config, progress=_progress(flags, env),
                                deep=_deep_options(flags) if flags.deep else None,
                                max_updates_behind=flags.max_updates_behind)
        if flags.from_bundle:  # not timed: a bundle's metrics describe the bundle
            report = run_doctor(options)
        else:
            if flags.check_images:
                session = stack.enter_context(flags.registry_session(env))
                options.images, options.tags = session.resolver, session.tags
            if options.progress is not None:
                options.progress.start()
                stack.callback(options.progress.stop)
            started = time.monotonic()
            report = run_doctor(options)
            seconds = time.monotonic() - started
    if plan.namespace and flags.reads_files():
        allowed = (plan.namespace,) if scope == "workloads" else (None, plan.namespace)
        report.findings = [f for f in report.findings if f.object.namespace in allowed]
    if flags.report:
        _write_report(report, flags, env.shell)
    if not (flags.report and flags.output == "html"):
        _render(report, flags, env, seconds)
    return report.exit_code(flags.fail_on)


def _render(report: DoctorReport, flags: DoctorFlags, env: Env, seconds: float) -> None:
    from kubectl_win.doctor.render.formats import RENDERERS, Page

    width = None
    if env.stdout_isatty and flags.output in ("table", "wide"):
        from kubectl_win.output.fold import terminal_width

        width = terminal_width()
    label = _label(flags) if flags.output == "openmetrics" else ""
    RENDERERS[flags.output](report, Page(env.stdout, env.shell, env.color, width, _source(flags), label, seconds,
                                         flags.cluster_label, artifact=flags.from_dump))


def _label(flags: DoctorFlags) -> str:
    """One cluster's `cluster` label in -o openmetrics: its context (a dump or bundle: its file name)."""
    import os

    from kubectl_win.fleet.contexts import context_label

    source = flags.from_dump or flags.from_bundle
    return os.path.basename(os.path.normpath(source)) if source else context_label(flags.kube_flags())


def _write_report(report: DoctorReport, flags: DoctorFlags, shell: str) -> None:
    from kubectl_win.doctor.render.html import render_html
    from kubectl_win.sharefile import write_shared

    assert flags.report is not None
    write_shared(flags.report, render_html(report, _source(flags), shell=shell), force=flags.force, what="report")


def _source(flags: DoctorFlags) -> str:
    import os

    if flags.from_dump:
        return f"dump {os.path.basename(flags.from_dump)}"
    if flags.from_bundle:
        return f"bundle {os.path.basename(os.path.normpath(flags.from_bundle))}"
    return f"context {flags.context[0]}" if flags.context else "live cluster"


def _deep_options(flags: DoctorFlags):  # type: ignore[no-untyped-def]
    from kubectl_win.doctor.deep import DeepOptions

    return DeepOptions(max_nodes=flags.max_nodes, namespace=flags.hns_namespace, image=flags.hns_image)


def _progress(flags: DoctorFlags, env: Env):  # type: ignore[no-untyped-def]
    """A Progress line for live scans when --progress allows it (dumps are read too fast to need one)."""
    from kubectl_win.doctor.render.progress import Progress, wanted

    if flags.reads_files() or not wanted(flags.progress, env.stderr_isatty):
        return None
    return Progress(env.stderr)


COMMAND = Command(DoctorFlags, run, validate, complete)
