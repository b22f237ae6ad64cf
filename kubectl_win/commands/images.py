"""`kubectl win images`: will these images run on those Windows builds? Read from the registry before deploy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import (
    Connection,
    Registries,
    kube_options,
    output_option,
    reads_a_file,
    registry_options,
    shared,
)
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.images.compat import Platform
    from kubectl_win.registry.session import Session

DESCRIPTION = (
    "Read each image's manifest list from its registry and say, for each Windows build, whether it runs "
    "(naming the os.version and digest the runtime would pick, by containerd's rule), runs only with Hyper-V "
    "isolation, has no variant that can run, or could not be read (and why). With images on the command line "
    "it checks them against --build; without, it checks every image of every Windows workload (init and "
    "ephemeral containers too) of the cluster, a dump or manifest files against the builds of the nodes each "
    "workload can land on. --target-build plans a move to a new Windows Server: what runs as it is, what "
    "needs Hyper-V, what needs a rebuild. Read-only: registries and the cluster are only read."
)
EXAMPLES = """examples:
  kubectl win images mcr.microsoft.com/windows/servercore:ltsc2022 --build ltsc2019 --build ltsc2025
  kubectl win images registry.k8s.io/pause:3.10 --build 10.0.26100.2700 -o json
  kubectl win images -A                                   # every Windows workload against its nodes
  kubectl win images -n shop --target-build ltsc2025      # plan the move to Windows Server 2025
  kubectl win images --from-dump cluster.json --target-build ltsc2025
  kubectl win images -f deploy/ --build ltsc2022          # manifests, before they are applied
  kubectl win images app:1 --build ltsc2022 --registry-mirror docker.io=mirror.local:5000 --registry-ca ca.pem

credentials come from $DOCKER_CONFIG/config.json (auths, credsStore, credHelpers), as docker and crane read
them; they are never printed or written anywhere.

exit status: 0 every image can run, 1 some image has no variant for a build it must run on, 2 bad input,
3 cluster unreachable
"""
FORMATS = ("table", "wide", "json", "yaml")


@dataclass(kw_only=True)
class ImagesFlags(Connection, Registries):
    image: list[str] | None = None
    build: list[str] | None = None
    pull_secrets: bool = False
    target_build: str | None = None
    filename: list[str] | None = None
    from_dump: str | None = None
    arch: str = "amd64"
    output: str = "table"


@dataclass(kw_only=True)
class ImagesRun:
    """The flags with the builds read."""

    flags: ImagesFlags
    builds: list[Platform] = field(default_factory=list)  # --build
    target: Platform | None = None  # --target-build


@shared(output_option(FORMATS, "table"), registry_options(), kube_options())
def images(
    image: Annotated[list[str] | None, typer.Argument(
        metavar="IMAGE...", show_default=False,
        help="image references to check (default: the images of the cluster's Windows workloads)")] = None,
    build: Annotated[list[str] | None, typer.Option(
        "--build", metavar="BUILD",
        help="a Windows node build: ltsc2019|ltsc2022|ltsc2025, 10.0.20348 or 10.0.20348.2700 (repeatable)")
    ] = None,
    pull_secrets: Annotated[bool, typer.Option(
        "--pull-secrets", help="live cluster only: also use the credentials of the workloads' imagePullSecrets "
                               "(reads those Secrets; their contents are never printed or written)")] = False,
    target_build: Annotated[str | None, typer.Option(
        "--target-build", metavar="BUILD",
        help="plan a move: check every Windows workload's images against this build, with a summary "
             "per namespace and owner")] = None,
    filename: Annotated[list[str] | None, typer.Option(
        "-f", "--filename", metavar="PATH",
        help="manifest file or directory whose Windows workloads to check (recursive; - for stdin; repeatable)")
    ] = None,
    from_dump: Annotated[str | None, typer.Option(
        "--from-dump", metavar="PATH",
        help="read workloads and nodes from a dump (kubectl get nodes,pods,... -A -o json, or doctor "
             "--save-dump) instead of the cluster")] = None,
    arch: Annotated[str, typer.Option(
        "--arch", metavar="ARCH", help="node architecture for images on the command line (default amd64)")
    ] = "amd64",
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("images", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(images)


def validate(flags: ImagesFlags) -> None:
    if flags.image and (flags.filename or flags.from_dump):
        raise UsageError("give images on the command line, or -f/--from-dump, not both")
    if flags.filename and flags.from_dump:
        raise UsageError("-f reads manifests and --from-dump a dump; give one of them")
    if flags.from_dump and flags.connection_given():
        raise UsageError(reads_a_file("--from-dump"))
    if flags.image:
        from kubectl_win.registry.reference import BadReference, parse_reference

        for given in flags.image:
            try:
                parse_reference(given)
            except BadReference as exc:
                raise UsageError(str(exc)) from None
    if flags.pull_secrets and (flags.image or flags.filename or flags.from_dump):
        raise UsageError("--pull-secrets reads Secrets from the live cluster: not with IMAGE, -f or --from-dump")
    flags.check_registries()
    if flags.image and not flags.build and not flags.target_build:
        raise UsageError("name the node builds to check with --build (e.g. --build ltsc2022 --build ltsc2025)")
    if flags.filename and not flags.build and not flags.target_build:
        raise UsageError("-f checks manifests without a cluster: name the node builds with --build "
                         "or --target-build")


def complete(flags: ImagesFlags, env: Env) -> ImagesRun:
    from kubectl_win.images.compat import parse_host

    try:
        builds = [parse_host(b) for b in flags.build or ()]
        target = parse_host(flags.target_build) if flags.target_build else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return ImagesRun(flags=flags, builds=builds, target=target)


def run(plan: ImagesRun, env: Env) -> int:
    from kubectl_win.images.service import exit_status

    flags = plan.flags
    with flags.registry_session(env) as session:
        if flags.image:
            from kubectl_win.images.service import check_images

            builds = plan.builds + ([plan.target] if plan.target is not None else [])
            report: Any = check_images(flags.image, builds, session.resolver, flags.arch)
        else:
            report = _workload_report(plan, session)
        session.finish()
    _render(report, flags.output, env)
    return exit_status(report.verdicts())


def _workload_report(plan: ImagesRun, session: Session):  # type: ignore[no-untyped-def]
    from kubectl_win.images.service import check_workloads, windows_workloads

    flags = plan.flags
    resolver = session.resolver
    snapshot, labels, secrets = _snapshot(flags)
    if flags.pull_secrets and secrets:
        session.credentials.add_auths(_pull_secret_auths(flags, secrets))
    if snapshot.images:  # a dump with resolved platforms: those are used, the registry only for the rest
        from kubectl_win.images.service import recorded_resolver

        resolver = recorded_resolver(snapshot.images, resolver)
    workloads = windows_workloads(snapshot, plan.builds)
    namespace = None if flags.all_namespaces else flags.namespace
    if namespace:
        workloads = [w for w in workloads if w.namespace == namespace]
    if flags.selector:
        workloads = _select(workloads, labels, flags.selector)
    return check_workloads(workloads, resolver, plan.target)


def _snapshot(flags: ImagesFlags):  # type: ignore[no-untyped-def]
    """The snapshot to check (manifests, a dump or the live cluster) and each workload's labels, for -l."""
    from kubectl_win.doctor.build import SnapshotBuilder
    from kubectl_win.manifests.objects import pod_templates

    labels: dict[tuple[str, str, str], dict[str, str]] = {}
    secrets: set[tuple[str, str]] = set()  # (namespace, name) of imagePullSecrets

    def keep(obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        for template in pod_templates(obj):
            for entry in template.spec.get("imagePullSecrets") or []:
                if isinstance(entry, dict) and entry.get("name"):
                    secrets.add((str(meta.get("namespace") or ""), str(entry["name"])))
        found = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        labels[(str(meta.get("namespace") or ""), str(obj.get("kind") or ""), str(meta.get("name") or ""))] = {
            str(k): str(v) for k, v in found.items()}

    builder = SnapshotBuilder(sink=keep)
    if flags.filename:
        from kubectl_win.errors import InputError
        from kubectl_win.manifests.inputs import Problem
        from kubectl_win.manifests.reader import read_objects

        problems = []
        for item in read_objects(flags.filename):
            if isinstance(item, Problem):
                problems.append(str(item))
                continue
            keep(item.obj)
            builder.add(item.obj)
        snapshot = builder.build()
        if problems and not (snapshot.workloads or snapshot.linux_workloads):
            raise InputError(problems[0])
        return snapshot, labels, secrets
    if flags.from_dump:
        from kubectl_win.doctor.read.dump import read_dump

        read_dump(flags.from_dump, builder)
    else:
        from kubectl_win.doctor.run import DoctorOptions, _read_live

        namespace = None if flags.all_namespaces else flags.namespace
        _read_live(DoctorOptions(kube_flags=flags.kube_flags(), namespace=namespace), builder)
    return builder.build(), labels, secrets


def _pull_secret_auths(flags: ImagesFlags, secrets: set[tuple[str, str]]) -> dict[str, Any]:
    """The `auths` of the workloads' pull secrets (kubernetes.io/dockerconfigjson or dockercfg); a Secret that
    cannot be read is passed over (its images are then read with the other credentials)."""
    import base64
    import json

    from kubectl_win.kube import ApiError, connect
    from kubectl_win.registry.credentials import auths_from_pull_secret

    out: dict[str, Any] = {}
    with connect(flags.kube_flags()) as cluster:
        for namespace, name in sorted(secrets):
            try:
                secret = cluster.get_object("secrets", name, namespace or None)
            except ApiError:
                continue
            data = secret.get("data") if isinstance(secret.get("data"), dict) else {}
            raw = data.get(".dockerconfigjson") or data.get(".dockercfg")
            if not raw:
                continue
            try:
                decoded = json.loads(base64.b64decode(raw))
            except (ValueError, TypeError):
                continue
            if isinstance(decoded, dict):
                for host, entry in auths_from_pull_secret(decoded).items():
                    out.setdefault(host, entry)
    return out


def _select(workloads: list, labels: dict, selector: str) -> list:  # type: ignore[type-arg]
    """-l: the workloads whose own labels match (as kubectl get -l reads a controller's labels)."""
    from kubectl_win.images.selector import matches, parse_selector

    try:
        requirements = parse_selector(selector)
    except ValueError as exc:
        raise UsageError(f"-l {selector!r}: {exc}") from None
    return [w for w in workloads if matches(requirements, labels.get((w.namespace, w.kind, w.name), {}))]


def _render(report: Any, output: str, env: Env) -> None:
    if output in ("json", "yaml"):
        from kubectl_win.output.structured import render_json, render_yaml

        (render_json if output == "json" else render_yaml)(report.to_dict(), env.stdout)
        return
    from kubectl_win.images.render import render_images, render_workloads
    from kubectl_win.images.service import ImagesReport

    width = None
    if env.stdout_isatty:
        from kubectl_win.output.fold import terminal_width

        width = terminal_width()
    render = render_images if isinstance(report, ImagesReport) else render_workloads
    render(report, env.stdout, wide=output == "wide", colour=env.color, width=width)


COMMAND = Command(ImagesFlags, run, validate, complete)
