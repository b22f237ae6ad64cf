"""`kubectl win explain`: pod fields Windows rejects, ignores or does not support.

Modes: FIELD (one field's rules), --list (the whole table), -f PATH... (manifests on disk or stdin),
TYPE/NAME or TYPE [-l SELECTOR] [-n NS | -A] (live objects through the shared access layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import (
    Connection,
    Policy,
    Registries,
    kube_options,
    output_option,
    policy_options,
    registry_options,
    shared,
)
from kubectl_win.env import Env
from kubectl_win.errors import UsageError
from kubectl_win.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version, format_version, parse_version

if TYPE_CHECKING:
    from kubectl_win.images.compat import Platform

DESCRIPTION = """\
Explain pod fields that are rejected, ignored or unsupported on Windows nodes.

  kubectl win explain FIELD             one field: status, reason, what to use instead, versions, sources
  kubectl win explain --list            every field kubectl-win knows about
  kubectl win explain -f PATH           lint manifests (files, directories, - for stdin)
  kubectl win explain TYPE/NAME         lint a live object; TYPE [-l SELECTOR] [-n NS | -A] for many

With spec.os.name=windows, fields the API server rejects are errors. Pods that only target Windows
(nodeSelector, affinity, tolerations, windowsOptions, Windows images) get warnings: those fields are
ignored on Windows nodes. Pods that target Linux or nothing are not reported unless --assume-windows."""
EXAMPLES = """\
examples:
  kubectl win explain containers.securityContext.privileged
  kubectl win explain pod.spec.securityContext.runAsUser --k8s-version 1.29
  kubectl win explain -f deploy/ -o sarif > kubectl-win.sarif
  helm template ./chart | kubectl win explain -f - --assume-windows
  kubectl win explain deploy -n web
  kubectl win explain pod/iis-7d9c -n web -o json"""

OUTPUTS = ("table", "wide", "json", "yaml", "sarif")


@dataclass(kw_only=True)
class ExplainFlags(Connection, Policy, Registries):
    """The flags; `version`, `mode` and `builds` are read from them once, when validate first asks (and refused
    there when they make no sense)."""

    target: list[str] | None = None
    filename: list[str] | None = None
    list: bool = False
    example: bool = False
    k8s_version: str = format_version(NEWEST_KNOWN)
    assume_windows: bool = False
    check_images: bool = False
    build: Sequence[str] | None = None
    output: str = "table"

    @cached_property
    def version(self) -> Version:
        try:
            version = parse_version(self.k8s_version)
        except ValueError as exc:
            raise UsageError(f"--k8s-version: {exc}") from None
        if not OLDEST_KNOWN <= version <= (NEWEST_KNOWN[0], NEWEST_KNOWN[1] + 1):
            raise UsageError(
                f"--k8s-version {self.k8s_version} is outside what kubectl-win knows "
                f"({format_version(OLDEST_KNOWN)} to {format_version(NEWEST_KNOWN)})"
            )
        return version

    @cached_property
    def mode(self) -> str:
        """field | list | files | live, from the arguments given."""
        targets, files = self.target or (), self.filename or ()
        if self.example:
            if targets or files or self.list:
                raise UsageError("--example checks the bundled manifests; give no FIELD, -f or --list with it")
            return "files"
        if self.list:
            return "list"
        if files:
            if targets:
                raise UsageError("give either -f PATH or a field/object, not both")
            return "files"
        if not targets:
            raise UsageError(
                "nothing to explain: give a FIELD, -f PATH, TYPE/NAME or --list (see 'kubectl win explain --help')"
            )
        if len(targets) > 2:
            raise UsageError("too many arguments: expected FIELD, TYPE/NAME or TYPE [NAME]")
        return "live" if _looks_like_resource(targets[0]) or len(targets) == 2 else "field"

    @cached_property
    def builds(self) -> tuple[Platform, ...]:
        from kubectl_win.images.compat import parse_host

        try:
            return tuple(parse_host(b) for b in self.build or ())
        except ValueError as exc:
            raise UsageError(f"--build: {exc}") from None

    @property
    def files(self) -> list[str]:
        return [bundled_examples()] if self.example else [*(self.filename or ())]


@shared(output_option(OUTPUTS, "table"), policy_options(), registry_options(), kube_options())
def explain(
    target: Annotated[list[str] | None, typer.Argument(
        metavar="FIELD | TYPE[/NAME] [NAME]", help="a field path, or live objects to check",
        show_default=False)] = None,
    filename: Annotated[list[str] | None, typer.Option(
        "-f", "--filename", metavar="PATH",
        help="manifest file or directory to check (recursive; - for stdin; repeatable)")] = None,
    list: Annotated[bool, typer.Option("--list", help="list every field rule")] = False,
    example: Annotated[bool, typer.Option(
        "--example", help="check the manifests bundled with kubectl-win (a tour of what explain finds)")] = False,
    k8s_version: Annotated[str, typer.Option(
        "--k8s-version", metavar="1.N",
        help=f"the Kubernetes version to judge by (default {format_version(NEWEST_KNOWN)})")] = format_version(
        NEWEST_KNOWN),
    assume_windows: Annotated[bool, typer.Option(
        "--assume-windows", help="check pods that do not target Windows as if they did")] = False,
    check_images: Annotated[bool, typer.Option(
        "--check-images", help="with -f: also read each Windows workload image's manifest list from its registry "
                               "and report images with no variant for --build (default: the build a workload pins "
                               "with node.kubernetes.io/windows-build)")] = False,
    build: Annotated[list[str] | None, typer.Option(
        "--build", metavar="BUILD",
        help="with --check-images: a Windows build the images must run on (ltsc2022, 10.0.20348; repeatable)")
    ] = None,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("explain", help=verbatim(DESCRIPTION), short_help=summary, epilog=verbatim(EXAMPLES))(explain)


def validate(flags: ExplainFlags) -> None:
    flags.version  # noqa: B018 - reading it checks --k8s-version
    if flags.mode in ("field", "list") and flags.output in ("sarif",):
        raise UsageError(f"-o {flags.output} is for findings; use -o table, json or yaml here")
    if (flags.check_images or flags.build) and flags.mode != "files":
        raise UsageError("--check-images and --build go with -f PATH")
    if flags.build and not flags.check_images:
        raise UsageError("--build goes with --check-images")
    if flags.check_images:
        flags.builds  # noqa: B018 - reading them checks --build
        flags.check_registries()


def bundled_examples() -> str:
    import os

    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "manifests")


def _looks_like_resource(word: str) -> bool:
    """TYPE/NAME or a resource type kubectl knows; field paths only carry '/' inside [map keys]."""
    if "/" in word and "[" not in word:
        return True
    from kubectl_win.errors import UsageError as Unknown
    from kubectl_win.kube.resources import resolve

    try:
        resolve(word)
    except Unknown:
        return False
    return True


def run(flags: ExplainFlags, env: Env) -> int:
    if flags.mode == "field":
        return _run_field(flags, env)
    if flags.mode == "list":
        return _run_list(flags, env)
    from kubectl_win.explain.render import render_report
    from kubectl_win.explain.service import ExplainOptions, explain_files
    from kubectl_win.findings import exit_code
    from kubectl_win.policy import load_policy

    options = ExplainOptions(flags.version, flags.assume_windows, load_policy(flags.config))
    with ExitStack() as stack:
        if flags.mode == "files" and flags.check_images:
            options.builds = flags.builds
            session = stack.enter_context(flags.registry_session(env))
            options.images = session.resolver
            report = explain_files(flags.files, options, env.stdin)
            session.finish()
        elif flags.mode == "files":
            report = explain_files(flags.files, options, env.stdin)
        else:
            report = _explain_live(flags, options)
    render_report(report, flags.output, env, live=flags.mode == "live")
    return 2 if report.unreadable else exit_code(report.findings, flags.fail_on)


def _explain_live(flags: ExplainFlags, options: Any) -> Any:
    from kubectl_win.explain.fetch import fetch_objects, fetch_runtime_classes, parse_live_target
    from kubectl_win.explain.service import explain_objects
    from kubectl_win.kube import connect

    info, name = parse_live_target(flags.target or [], flags.all_namespaces, flags.selector)
    cluster = connect(flags.kube_flags())
    objects = fetch_objects(
        cluster, info, name, namespace=flags.namespace, all_namespaces=flags.all_namespaces, selector=flags.selector
    )
    return explain_objects(objects, options, fetch_runtime_classes(cluster, objects))


def _run_field(flags: ExplainFlags, env: Env) -> int:
    from kubectl_win.explain.field_query import field_payload, find_fields
    from kubectl_win.explain.render import render_fields

    assert flags.target
    matches = find_fields(flags.target[0], flags.version)
    if flags.output in ("json", "yaml"):
        from kubectl_win.findings import SCHEMA_VERSION
        from kubectl_win.output.structured import render_json, render_yaml

        payload = {
            "schemaVersion": SCHEMA_VERSION,
            "fields": [field_payload(match, flags.version) for match in matches],
        }
        (render_json if flags.output == "json" else render_yaml)(payload, env.stdout)
        return 0
    render_fields(matches, flags.version, env)
    return 0


def _run_list(flags: ExplainFlags, env: Env) -> int:
    from kubectl_win.explain.render import render_rule_list

    render_rule_list(flags.output, flags.version, env)
    return 0


COMMAND = Command(ExplainFlags, run, validate)
