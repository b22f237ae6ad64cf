"""`kubectl win scaffold`: Windows workloads that schedule right the first time, and OS placement for
existing manifests. Thin: flags -> validated options -> kubectl_win.scaffold -> stdout, files or a diff."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import (
    Choice,
    Connection,
    Integer,
    Registries,
    kube_options,
    output_option,
    param,
    registry_options,
    shared,
)
from kubectl_win.env import Env
from kubectl_win.errors import UsageError
from kubectl_win.scaffold import options as valid
from kubectl_win.scaffold.options import (
    DEFAULT_CPU,
    DEFAULT_MEMORY,
    HOSTPROCESS_CPU,
    HOSTPROCESS_MEMORY,
    SERVICE_TYPES,
    WORKLOAD_KINDS,
    PlacementOptions,
    WorkloadOptions,
)

if TYPE_CHECKING:
    from kubectl_win.scaffold.admission import PolicyOptions
    from kubectl_win.scaffold.monitor import MonitorOptions

DESCRIPTION = """\
Write Windows workloads that land on the right nodes and pass API validation.

  kubectl win scaffold deployment|statefulset|daemonset|job|cronjob NAME --image IMAGE ...
  kubectl win scaffold runtimeclass --windows-build BUILD [--handler H]
  kubectl win scaffold node-taint [--from-cluster]
  kubectl win scaffold patch -f PATH [--in-place | --dry-run]
  kubectl win scaffold monitor --image IMAGE [--service-monitor] [--prometheus-rule] [--label K=V] [--grafana-dashboard]
  kubectl win scaffold policy [--action Warn|Audit|Deny] [--windows-taint T] [--hostprocess-namespace NS]

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
  kubectl win scaffold patch -f charts/rendered/ --dry-run
  kubectl win scaffold monitor --image registry.example.com/kubectl-win:0.1.0 --service-monitor
  kubectl win scaffold policy --action Warn --from-cluster --out policy/"""

_KIND_HELP = {
    "deployment": "a Windows Deployment",
    "statefulset": "a Windows StatefulSet",
    "daemonset": "a DaemonSet for the Windows nodes",
    "job": "a Windows Job",
    "cronjob": "a Windows CronJob",
}


@dataclass(kw_only=True)
class PlacementFlags(Connection):
    """The placement flags; `placement` is read from them once, when validate first asks (as are the records
    the subcommands build below)."""

    windows_build: str | None = None
    taint: list[str] | None = None
    from_cluster: bool = False

    @cached_property
    def placement(self) -> PlacementOptions:
        return placement_options(self)


@dataclass(kw_only=True)
class WriteFlags:
    output: str = "yaml"
    out: str | None = None
    force: bool = False

    def check_write(self) -> None:
        if self.out is None and self.force:
            raise UsageError("--force only applies with --out DIR")
        if self.out is not None:  # before anything is read or built: the folder must take files
            from kubectl_win.scaffold.writer import check_folder

            check_folder(self.out, "--out")


@dataclass(kw_only=True)
class WorkloadFlags(PlacementFlags, Registries, WriteFlags):
    kind: str  # deployment, statefulset, ...: the subcommand
    name: str
    image: str
    port: list[int] | None = None
    replicas: int = 1
    schedule: str = "0 * * * *"
    cpu: str | None = None  # None: the kind's default (DEFAULT_CPU, HOSTPROCESS_CPU for --hostprocess)
    memory: str | None = None
    runtime_class: str | None = None
    gmsa: str | None = None
    run_as_user_name: str | None = None
    service: str | None = None
    hostprocess: bool = False
    check_image: bool = False

    @cached_property
    def workload(self) -> WorkloadOptions:
        return workload_options(self)


@dataclass(kw_only=True)
class RuntimeClassFlags(PlacementFlags, WriteFlags):
    name: str | None = None
    handler: str = "runhcs-wcow-process"

    @cached_property
    def runtime_class_name(self) -> str:
        from kubectl_win.scaffold.generate import default_runtime_class_name

        return valid.dns1123_subdomain(self.name or default_runtime_class_name(self.placement), "name")

    @cached_property
    def handler_name(self) -> str:
        return valid.dns1123_label(self.handler, "handler")


@dataclass(kw_only=True)
class NodeTaintFlags(PlacementFlags):
    output: str = "text"


@dataclass(kw_only=True)
class PatchFlags(PlacementFlags):
    filename: list[str]
    in_place: bool = False
    dry_run: bool = False


@dataclass(kw_only=True)
class MonitorFlags(WriteFlags):
    image: str
    namespace: str = "kubectl-win"
    interval: str = "5m"
    service_monitor: bool = False
    allow_from_namespace: list[str] | None = None
    prometheus_rule: bool = False
    grafana_dashboard: bool = False
    cluster_label: str | None = None
    label: list[str] | None = None

    @cached_property
    def monitor(self) -> MonitorOptions:
        return monitor_options(self)


@dataclass(kw_only=True)
class PolicyFlags(Connection, WriteFlags):
    action: str = "Warn"
    namespace_selector: str | None = None
    windows_taint: list[str] | None = None
    hostprocess_namespace: list[str] | None = None
    include_system_namespaces: bool = False
    k8s_version: str | None = None
    min_severity: str = "warning"
    from_cluster: bool = False

    @cached_property
    def policy(self) -> PolicyOptions:
        """The options the flags alone give (--from-cluster adds the cluster's taints and version in complete)."""
        return self.policy_with()

    def policy_with(self, nodes: list[dict[str, Any]] | None = None,
                    server_version: dict[str, Any] | None = None) -> PolicyOptions:
        from kubectl_win.scaffold.admission import policy_options

        self.check_write()
        return policy_options(action=self.action, k8s_version=self.k8s_version, min_severity=self.min_severity,
                              namespace_selector=self.namespace_selector, windows_taint=self.windows_taint,
                              hostprocess_namespace=self.hostprocess_namespace, nodes=nodes,
                              server_version=server_version, include_system_namespaces=self.include_system_namespaces)


def _workload_options(kind: str) -> list[inspect.Parameter]:
    group = [
        param("name", Annotated[str, typer.Argument(metavar="NAME", help="object name (DNS-1123 label)",
                                                    show_default=False)]),
        param("image", Annotated[str, typer.Option("--image", metavar="IMAGE", help="container image reference",
                                                   show_default=False)]),
        param("port", Annotated[list[int] | None, typer.Option(
            "--port", metavar="N", click_type=Integer(),
            help="container port (repeatable; the first one gets the probes)")], None),
    ]
    if kind in ("deployment", "statefulset"):
        group.append(param("replicas", Annotated[int, typer.Option(
            "--replicas", metavar="N", click_type=Integer(), help="replicas (default 1)")], 1))
    if kind == "cronjob":
        group.append(param("schedule", Annotated[str, typer.Option(
            "--schedule", metavar="CRON", help="cron schedule (default '0 * * * *')")], "0 * * * *"))
    group += [
        param("cpu", Annotated[str | None, typer.Option(
            "--cpu", metavar="Q", help=f"CPU request and limit (default {DEFAULT_CPU}; with --hostprocess a "
                                       f"request only, default {HOSTPROCESS_CPU}: a node agent is never CPU-capped)")],
              None),
        param("memory", Annotated[str | None, typer.Option(
            "--memory", metavar="Q", help=f"memory request and limit (default {DEFAULT_MEMORY}, {HOSTPROCESS_MEMORY} "
                                          "with --hostprocess; Windows pages instead of OOM-killing, so a limit is "
                                          "always set)")], None),
        param("runtime_class", Annotated[str | None, typer.Option(
            "--runtime-class", metavar="NAME", help="spec.runtimeClassName")], None),
        param("gmsa", Annotated[str | None, typer.Option(
            "--gmsa", metavar="SPEC", help="GMSACredentialSpec name for the pod's AD identity")], None),
        param("run_as_user_name", Annotated[str | None, typer.Option(
            "--run-as-user-name", metavar="USER", help="Windows user the containers run as")], None),
    ]
    if kind in ("deployment", "statefulset", "daemonset"):
        group.append(param("service", Annotated[str | None, typer.Option(
            "--service", metavar="TYPE", click_type=Choice(SERVICE_TYPES),
            help="also write a Service: ClusterIP|NodePort|LoadBalancer (needs --port)")], None))
    group.append(param("hostprocess", Annotated[bool, typer.Option(
        "--hostprocess", help="HostProcess pod: runs on the host, with host networking")], False))
    group.append(param("check_image", Annotated[bool, typer.Option(
        "--check-image", help="read the image's manifest list from its registry: keep the tag when it has a "
                              "variant for the pinned Windows build, else pick a tag of the repository that has one")],
        False))
    return group


def _placement_options() -> list[inspect.Parameter]:
    panel = "Placement"
    return [
        param("windows_build", Annotated[str | None, typer.Option(
            "--windows-build", metavar="BUILD", rich_help_panel=panel,
            help="pin a Windows build: ltsc2019, ltsc2022, ltsc2025 or 10.0.N")], None),
        param("taint", Annotated[list[str] | None, typer.Option(
            "--taint", metavar="KEY=VALUE:EFFECT", rich_help_panel=panel,
            help="tolerate this taint instead of the default scheme (repeatable)")], None),
        param("from_cluster", Annotated[bool, typer.Option(
            "--from-cluster", rich_help_panel=panel,
            help="read the taints and builds of the cluster's Windows nodes")], False),
        *kube_options(selector=False, all_namespaces=False),
    ]


def _write_options() -> list[inspect.Parameter]:
    return [
        *output_option(("yaml", "json"), "yaml"),
        param("out", Annotated[str | None, typer.Option(
            "--out", metavar="DIR", help="write one file per object into DIR instead of stdout")], None),
        param("force", Annotated[bool, typer.Option("--force", help="overwrite existing files in --out")], False),
    ]


def _workload_command(kind: str) -> Callable[..., int]:
    """deployment, statefulset, ... take mostly the same options: one function per kind, made here."""

    def command(**values: Any) -> int:
        return invoke(WORKLOAD, {"kind": kind, **values})

    command.__name__ = command.__qualname__ = kind
    return shared(_workload_options(kind), _placement_options(), registry_options(), _write_options())(command)


@shared(_placement_options(), _write_options())
def runtimeclass(
    name: Annotated[str | None, typer.Option(
        "--name", metavar="NAME", help="RuntimeClass name (default windows-<build>)")] = None,
    handler: Annotated[str, typer.Option(
        "--handler", metavar="H", help="containerd runtime handler (default runhcs-wcow-process)")] = (
        "runhcs-wcow-process"),
    **shared: Any,
) -> int:
    return invoke(RUNTIME_CLASS, locals())


@shared(_placement_options(), output_option(("text", "json"), "text"))
def node_taint(**shared: Any) -> int:
    return invoke(NODE_TAINT, locals())


@shared(_placement_options())
def patch(
    filename: Annotated[list[str], typer.Option(
        "-f", "--filename", metavar="PATH", show_default=False,
        help="manifest file or directory (recursive; - for stdin; repeatable)")],
    in_place: Annotated[bool, typer.Option("--in-place", help="rewrite the files (atomically)")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="show a unified diff, change nothing")] = False,
    **shared: Any,
) -> int:
    return invoke(PATCH, locals())


@shared(_write_options())
def monitor(
    image: Annotated[str, typer.Option("--image", metavar="IMAGE", show_default=False,
                                       help="an image whose entry point is kubectl-win (see docs/monitor.md)")],
    namespace: Annotated[str, typer.Option(
        "-n", "--namespace", metavar="NS", help="namespace to run in (default kubectl-win)")] = "kubectl-win",
    interval: Annotated[str, typer.Option(
        "--interval", metavar="DURATION", help="time between two scans, e.g. 5m, 90s, 1h (default 5m)")] = "5m",
    service_monitor: Annotated[bool, typer.Option(
        "--service-monitor", help="also write a prometheus-operator ServiceMonitor")] = False,
    allow_from_namespace: Annotated[list[str] | None, typer.Option(
        "--allow-from-namespace", metavar="NS",
        help="a namespace whose pods may scrape the metrics (repeatable; default monitoring): the "
             "NetworkPolicy admits no one else")] = None,
    prometheus_rule: Annotated[bool, typer.Option(
        "--prometheus-rule", help="also write a prometheus-operator PrometheusRule with the alerts")] = False,
    grafana_dashboard: Annotated[bool, typer.Option(
        "--grafana-dashboard", help="also write a ConfigMap with a Grafana dashboard (for Grafana's sidecar)")] = False,
    cluster_label: Annotated[str | None, typer.Option(
        "--cluster-label", metavar="NAME",
        help="serve labels its metrics with NAME, and the alerts and dashboard group by it (default: serve "
             "adds no cluster label; they group by the `cluster` label your Prometheus adds)")] = None,
    label: Annotated[list[str] | None, typer.Option(
        "--label", metavar="KEY=VALUE",
        help="a label of the ServiceMonitor and PrometheusRule (repeatable), e.g. release=kube-prometheus-stack: "
             "the label your Prometheus selects them by")] = None,
    **shared: Any,
) -> int:
    return invoke(MONITOR, locals())


@shared(kube_options(selector=False, all_namespaces=False), _write_options())
def policy(
    action: Annotated[str, typer.Option(
        "--action", metavar="ACTION", click_type=Choice(("Warn", "Audit", "Deny")),
        help="what the bindings do with a finding: Warn (default), Audit or Deny")] = "Warn",
    namespace_selector: Annotated[str | None, typer.Option(
        "--namespace-selector", metavar="SELECTOR",
        help="only namespaces whose labels match, e.g. team=web,env!=dev (default: every namespace)")] = None,
    windows_taint: Annotated[list[str] | None, typer.Option(
        "--windows-taint", metavar="KEY=VALUE:EFFECT",
        help="also require a toleration for this taint of the Windows nodes (repeatable)")] = None,
    hostprocess_namespace: Annotated[list[str] | None, typer.Option(
        "--hostprocess-namespace", metavar="NS",
        help="also refuse HostProcess pods outside these namespaces (repeatable)")] = None,
    include_system_namespaces: Annotated[bool, typer.Option(
        "--include-system-namespaces",
        help="also judge pods in the platform's namespaces (kube-system, kube-*, calico-system, tigera-operator, "
             "openshift-*, ...), which the bindings leave out by default")] = False,
    k8s_version: Annotated[str | None, typer.Option(
        "--k8s-version", metavar="1.N",
        help="the cluster's Kubernetes minor: fields newer than it are left out (default 1.30, or the "
             "cluster's with --from-cluster)")] = None,
    min_severity: Annotated[str, typer.Option(
        "--min-severity", metavar="LEVEL", click_type=Choice(("info", "warning", "error")),
        help="leave out rules whose findings are less severe (default warning)")] = "warning",
    from_cluster: Annotated[bool, typer.Option(
        "--from-cluster", help="read the Windows nodes' taints and the Kubernetes version from the cluster")] = False,
    **shared: Any,
) -> int:
    return invoke(POLICY, locals())


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
    "monitor": "kubectl win scaffold monitor --image registry.example.com/kubectl-win:0.1.0 --service-monitor "
               "--out monitor/",
    "policy": "kubectl win scaffold policy --action Warn --windows-taint os=windows:NoSchedule "
              "--hostprocess-namespace kube-system --out policy/",
}


def register(app: KubectlWinTyper, summary: str) -> None:
    scaffold = KubectlWinTyper(help=verbatim(DESCRIPTION), short_help=summary, epilog=verbatim(EXAMPLES))
    scaffold.callback(invoke_without_command=True)(_require_kind)
    commands: list[tuple[str, str, Callable[..., int]]] = [
        *((kind, _KIND_HELP[kind], _workload_command(kind)) for kind in WORKLOAD_KINDS),
        ("runtimeclass", "a RuntimeClass that schedules onto a Windows build", runtimeclass),
        ("node-taint", "kubectl taint commands for Windows nodes without a taint", node_taint),
        ("patch", "add OS placement to existing manifests", patch),
        ("monitor", "run kubectl win serve in the cluster, for Prometheus", monitor),
        ("policy", "explain's rules as a ValidatingAdmissionPolicy", policy),
    ]
    for name, help_text, function in commands:
        scaffold.command(name, help=help_text[0].upper() + help_text[1:] + ".", short_help=help_text,
                         epilog=verbatim(f"example:\n  {_KIND_EXAMPLES[name]}"))(function)
    app.add_typer(scaffold, name="scaffold")


def _require_kind(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        raise UsageError("missing KIND: deployment, statefulset, daemonset, job, cronjob, runtimeclass, "
                         "node-taint, patch, monitor or policy (see 'kubectl win scaffold --help')")


def workload_options(flags: WorkloadFlags) -> WorkloadOptions:
    """Validated options from the flags (every bad value is a UsageError, exit 2)."""
    kind = flags.kind
    hostprocess = flags.hostprocess
    ports = tuple(valid.port(p) for p in flags.port or ())
    if len(set(ports)) != len(ports):
        raise UsageError("each --port may be given once")
    if flags.service and not ports:
        raise UsageError("--service needs at least one --port")
    flags.check_write()
    run_as = flags.run_as_user_name
    if hostprocess and run_as is None:
        from kubectl_win.explain.hostprocess_users import service_accounts

        run_as = service_accounts()[0]
    return WorkloadOptions(
        kind=kind,
        name=valid.workload_name(flags.name, kind, service=bool(flags.service)),
        image=valid.image_reference(flags.image),
        namespace=valid.dns1123_label(flags.namespace, "namespace") if flags.namespace else None,
        ports=ports,
        replicas=valid.replicas(flags.replicas),
        cpu=valid.quantity(flags.cpu or (HOSTPROCESS_CPU if hostprocess else DEFAULT_CPU), "cpu"),
        memory=valid.quantity(flags.memory or (HOSTPROCESS_MEMORY if hostprocess else DEFAULT_MEMORY), "memory"),
        placement=flags.placement,
        runtime_class=valid.dns1123_subdomain(flags.runtime_class, "runtime class") if flags.runtime_class else None,
        gmsa=valid.dns1123_subdomain(flags.gmsa, "gMSA credential spec name") if flags.gmsa else None,
        run_as_user_name=valid.run_as_user_name(run_as, hostprocess) if run_as is not None else None,
        service=flags.service,
        hostprocess=hostprocess,
        schedule=valid.cron_schedule(flags.schedule),
    )


def placement_options(flags: PlacementFlags) -> PlacementOptions:
    return PlacementOptions(
        build=valid.build_name(flags.windows_build) if flags.windows_build else None,
        taints=tuple(dict.fromkeys(valid.taint(t) for t in flags.taint or ())),
        from_cluster=flags.from_cluster,
    )


def monitor_options(flags: MonitorFlags) -> MonitorOptions:
    """Validated `scaffold monitor` flags (every bad value is a UsageError, exit 2)."""
    from kubectl_win.scaffold.monitor import DEFAULT_SCRAPERS, MonitorOptions, interval

    flags.check_write()
    return MonitorOptions(image=valid.image_reference(flags.image),
                          namespace=valid.dns1123_label(flags.namespace, "namespace"),
                          interval=interval(flags.interval, "--interval"), service_monitor=flags.service_monitor,
                          allow_from=tuple(valid.dns1123_label(ns, "--allow-from-namespace")
                                           for ns in dict.fromkeys(flags.allow_from_namespace or DEFAULT_SCRAPERS)),
                          prometheus_rule=flags.prometheus_rule, grafana_dashboard=flags.grafana_dashboard,
                          serve_cluster_label=_monitor_cluster_label(flags.cluster_label),
                          selection_labels=_selection_labels(flags))


def _selection_labels(flags: MonitorFlags) -> tuple[tuple[str, str], ...]:
    labels = dict(valid.label(value) for value in flags.label or ())
    if labels and not (flags.service_monitor or flags.prometheus_rule):
        raise UsageError("--label labels the ServiceMonitor and the PrometheusRule: add --service-monitor or "
                         "--prometheus-rule")
    return tuple(labels.items())


def _monitor_cluster_label(value: str | None) -> str | None:
    from kubectl_win.fleet.metrics import cluster_label_option

    label = cluster_label_option(value)
    if label == "":
        raise UsageError("--cluster-label needs a name (in the cluster, serve adds no cluster label by default)")
    return label


Flags = TypeVar("Flags", bound=PlacementFlags)


@dataclass(frozen=True)
class Placed(Generic[Flags]):
    """A subcommand's flags with the cluster's nodes (--from-cluster; None without it)."""

    flags: Flags
    nodes: list[dict[str, Any]] | None


def _with_nodes(flags: Flags, env: Env) -> Placed[Flags]:
    if not flags.placement.from_cluster:
        return Placed(flags, None)
    from kubectl_win.scaffold.placement import fetch_nodes

    return Placed(flags, fetch_nodes(flags.kube_flags()))


def _validate_workload(flags: WorkloadFlags) -> None:
    flags.workload  # noqa: B018 - building it checks every value
    if flags.check_image:
        if flags.hostprocess:
            raise UsageError("--check-image matches an image to a node build; HostProcess images run on any build")
        flags.check_registries()


def _run_workload(placed: Placed[WorkloadFlags], env: Env) -> int:
    from kubectl_win.scaffold.generate import scaffold_workload

    flags = placed.flags
    opts = flags.workload
    picked = _check_image(flags, opts, placed.nodes, env) if flags.check_image else None
    if picked is not None:
        import dataclasses

        opts = dataclasses.replace(opts, image=picked[0])
    result = scaffold_workload(opts, placed.nodes)
    if picked is not None:
        (result.warnings if picked[2] else result.notes).insert(0, picked[1])
    _report(result.warnings, result.notes, env)
    return _emit(result.objects, flags, env)


def _check_image(flags: WorkloadFlags, opts: WorkloadOptions, nodes: Any, env: Env) -> tuple[str, str, bool]:
    from kubectl_win.images.compat import parse_host_version
    from kubectl_win.images.tagpick import pick_tag
    from kubectl_win.scaffold.placement import windows_placement

    build = opts.placement.build or windows_placement(opts.placement, nodes).build
    if build is None:
        raise UsageError("--check-image needs the node build: pass --windows-build (or --from-cluster with one build)")
    with flags.registry_session(env) as session:
        return pick_tag(session.client, opts.image, parse_host_version(build.version))


def _validate_runtime_class(flags: RuntimeClassFlags) -> None:
    flags.check_write()
    flags.runtime_class_name  # noqa: B018 - reading it checks --name (or the build it is named after)
    flags.handler_name  # noqa: B018


def _run_runtime_class(placed: Placed[RuntimeClassFlags], env: Env) -> int:
    from kubectl_win.scaffold.generate import scaffold_runtime_class

    flags = placed.flags
    result = scaffold_runtime_class(flags.runtime_class_name, flags.handler_name, flags.placement, placed.nodes)
    _report(result.warnings, result.notes, env)
    return _emit(result.objects, flags, env)


def _validate_monitor(flags: MonitorFlags) -> None:
    flags.monitor  # noqa: B018 - building it checks every value


def _run_monitor(flags: MonitorFlags, env: Env) -> int:
    from kubectl_win.scaffold.monitor import monitor_objects

    # Numbered files: `kubectl apply -f DIR` reads them in name order, so the Namespace comes first.
    return _emit(monitor_objects(flags.monitor), flags, env, numbered=True)


def _validate_policy(flags: PolicyFlags) -> None:
    flags.policy  # noqa: B018 - building it checks every value


@dataclass(frozen=True)
class PolicyRun:
    flags: PolicyFlags
    options: PolicyOptions


def _complete_policy(flags: PolicyFlags, env: Env) -> PolicyRun:
    """With --from-cluster, the Windows nodes' taints and the server's version, through kubectl_win/kube."""
    if not flags.from_cluster:
        return PolicyRun(flags, flags.policy)
    from kubectl_win.kube import connect

    client = connect(flags.kube_flags())
    return PolicyRun(flags, flags.policy_with(list(client.list("nodes")), client.server_version()))


def _run_policy(run: PolicyRun, env: Env) -> int:
    from kubectl_win.scaffold.admission import policy_objects

    # Numbered files: each policy before its binding, as `kubectl apply -f DIR` reads them.
    return _emit(policy_objects(run.options), run.flags, env, numbered=True)


def _validate_placement(flags: PlacementFlags) -> None:
    flags.placement  # noqa: B018 - building it checks --windows-build and --taint


def _run_node_taint(placed: Placed[NodeTaintFlags], env: Env) -> int:
    from kubectl_win.scaffold.node_taint import plan_node_taints

    flags = placed.flags
    placement = flags.placement
    plan = plan_node_taints(placement, placed.nodes)
    _report(plan.warnings, [], env)
    if flags.output == "json":
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


def _validate_patch(flags: PatchFlags) -> None:
    if flags.in_place and flags.dry_run:
        raise UsageError("--dry-run is not allowed with --in-place (see 'kubectl win scaffold patch --help')")
    flags.placement  # noqa: B018 - building it checks --windows-build and --taint
    if flags.in_place and "-" in flags.filename:
        raise UsageError("--in-place cannot rewrite standard input")


def _run_patch(placed: Placed[PatchFlags], env: Env) -> int:
    from kubectl_win.scaffold.patch import patch_sources
    from kubectl_win.scaffold.placement import windows_placement
    from kubectl_win.scaffold.writer import write_atomic

    flags = placed.flags
    placement_opts = flags.placement
    placement = windows_placement(placement_opts, placed.nodes)
    _report(list(placement.warnings), [], env)
    explicit = bool(placement_opts.taints or placement_opts.from_cluster)
    patches = patch_sources(flags.filename, placement, explicit, env.stdin)
    for patch in patches:
        _report(patch.warnings, [], env)
    if flags.dry_run:
        env.stdout.writelines(p.diff() for p in patches if p.changed)
    elif flags.in_place:
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


def _emit(objects: list[dict[str, Any]], args: WriteFlags, env: Env, numbered: bool = False) -> int:
    from kubectl_win.scaffold.render import file_name, file_text, to_text

    if args.out is None:
        env.stdout.write(to_text(objects, args.output))
        return 0
    from kubectl_win.scaffold.writer import ensure_folder, write_files

    ensure_folder(args.out, "--out")
    files = [(os.path.join(args.out, (f"{index:02d}-" if numbered else "") + file_name(obj, args.output)),
              file_text(obj, args.output)) for index, obj in enumerate(objects, 1)]
    for path in write_files(files, force=args.force):
        env.stdout.write(f"wrote {path}\n")
    return 0


WORKLOAD = Command(WorkloadFlags, _run_workload, _validate_workload, _with_nodes)
RUNTIME_CLASS = Command(RuntimeClassFlags, _run_runtime_class, _validate_runtime_class, _with_nodes)
NODE_TAINT = Command(NodeTaintFlags, _run_node_taint, _validate_placement, _with_nodes)
PATCH = Command(PatchFlags, _run_patch, _validate_patch, _with_nodes)
MONITOR = Command(MonitorFlags, _run_monitor, _validate_monitor)
POLICY = Command(PolicyFlags, _run_policy, _validate_policy, _complete_policy)
