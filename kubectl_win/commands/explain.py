"""`kubectl win explain`: pod fields Windows rejects, ignores or does not support.

Modes: FIELD (one field's rules), --list (the whole table), -f PATH... (manifests on disk or stdin),
TYPE/NAME or TYPE [-l SELECTOR] [-n NS | -A] (live objects through the shared access layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from kubectl_win.commands.base import KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import kube_options, output_option, policy_options, registry_options, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError
from kubectl_win.versions import NEWEST_KNOWN, OLDEST_KNOWN, Version, format_version, parse_version

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


@dataclass(slots=True)
class ExplainCommand:
    """The options a run needs, resolved from the flags (kubectl's Complete step)."""

    mode: str  # field | list | files | live
    args: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    output: str = "table"
    k8s_version: Version = NEWEST_KNOWN
    assume_windows: bool = False
    fail_on: str = "error"
    config: str | None = None


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
    return invoke(run, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("explain", help=verbatim(DESCRIPTION), short_help=summary, epilog=verbatim(EXAMPLES))(explain)


def complete(args: Any) -> ExplainCommand:
    """Decide the mode and validate the flags; pure (no I/O)."""
    try:
        version = parse_version(args.k8s_version)
    except ValueError as exc:
        raise UsageError(f"--k8s-version: {exc}") from None
    if not OLDEST_KNOWN <= version <= (NEWEST_KNOWN[0], NEWEST_KNOWN[1] + 1):
        raise UsageError(
            f"--k8s-version {args.k8s_version} is outside what kubectl-win knows "
            f"({format_version(OLDEST_KNOWN)} to {format_version(NEWEST_KNOWN)})"
        )
    targets = list(args.target or ())
    files = list(args.filename or ())
    if args.example:
        if targets or files or args.list:
            raise UsageError("--example checks the bundled manifests; give no FIELD, -f or --list with it")
        mode = "files"
        files = [bundled_examples()]
    elif args.list:
        mode = "list"
    elif files:
        mode = "files"
        if targets:
            raise UsageError("give either -f PATH or a field/object, not both")
    elif not targets:
        raise UsageError(
            "nothing to explain: give a FIELD, -f PATH, TYPE/NAME or --list (see 'kubectl win explain --help')"
        )
    elif len(targets) > 2:
        raise UsageError("too many arguments: expected FIELD, TYPE/NAME or TYPE [NAME]")
    elif _looks_like_resource(targets[0]) or len(targets) == 2:
        mode = "live"
    else:
        mode = "field"
    if mode in ("field", "list") and args.output in ("sarif",):
        raise UsageError(f"-o {args.output} is for findings; use -o table, json or yaml here")
    return ExplainCommand(
        mode, targets, files, args.output, version, args.assume_windows, args.fail_on, args.config
    )


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


def run(args: Any, env: Env) -> int:
    command = complete(args)
    if (args.check_images or args.build) and command.mode != "files":
        raise UsageError("--check-images and --build go with -f PATH")
    if args.build and not args.check_images:
        raise UsageError("--build goes with --check-images")
    if command.mode == "field":
        return _run_field(command, env)
    if command.mode == "list":
        return _run_list(command, env)
    from kubectl_win.explain.service import ExplainOptions, explain_files
    from kubectl_win.policy import load_policy

    options = ExplainOptions(command.k8s_version, command.assume_windows, load_policy(command.config))
    if command.mode == "files" and args.check_images:
        return _run_files_with_images(command, args, options, env)
    if command.mode == "files":
        report = explain_files(command.files, options, env.stdin)
    else:
        report = _explain_live(command, args, options)
    from kubectl_win.explain.render import render_report

    render_report(report, command.output, env, live=command.mode == "live")
    if report.unreadable:
        return 2
    from kubectl_win.findings import exit_code

    return exit_code(report.findings, command.fail_on)


def _run_files_with_images(command: ExplainCommand, args: Any, options: Any, env: Env) -> int:
    from kubectl_win.commands.registry_session import registry_session
    from kubectl_win.explain.render import render_report
    from kubectl_win.explain.service import explain_files
    from kubectl_win.findings import exit_code
    from kubectl_win.images.compat import parse_host

    try:
        options.builds = tuple(parse_host(b) for b in args.build or ())
    except ValueError as exc:
        raise UsageError(f"--build: {exc}") from None
    with registry_session(args, env) as (resolver, finish):
        options.images = resolver
        report = explain_files(command.files, options, env.stdin)
        finish()
    render_report(report, command.output, env, live=False)
    return 2 if report.unreadable else exit_code(report.findings, command.fail_on)


def _explain_live(command: ExplainCommand, args: Any, options: Any) -> Any:
    from kubectl_win.explain.fetch import fetch_objects, parse_live_target
    from kubectl_win.explain.service import explain_objects
    from kubectl_win.kube import KubeFlags, connect

    info, name = parse_live_target(command.args, args.all_namespaces, args.selector)
    cluster = connect(KubeFlags.from_args(args))
    objects = fetch_objects(
        cluster, info, name, namespace=args.namespace, all_namespaces=args.all_namespaces, selector=args.selector
    )
    return explain_objects(objects, options)


def _run_field(command: ExplainCommand, env: Env) -> int:
    from kubectl_win.explain.field_query import field_payload, find_fields
    from kubectl_win.explain.render import render_fields

    matches = find_fields(command.args[0], command.k8s_version)
    if command.output in ("json", "yaml"):
        from kubectl_win.findings import SCHEMA_VERSION
        from kubectl_win.output.structured import render_json, render_yaml

        payload = {
            "schemaVersion": SCHEMA_VERSION,
            "fields": [field_payload(match, command.k8s_version) for match in matches],
        }
        (render_json if command.output == "json" else render_yaml)(payload, env.stdout)
        return 0
    render_fields(matches, command.k8s_version, env)
    return 0


def _run_list(command: ExplainCommand, env: Env) -> int:
    from kubectl_win.explain.render import render_rule_list

    render_rule_list(command.output, command.k8s_version, env)
    return 0
