"""Options shared by several commands, spelled the way kubectl spells them, as typer parameters.

A group is a list of `inspect.Parameter`s; `@shared(...)` appends groups to a command function's
signature, which is what typer reads, so a flag defined here looks and completes the same in every
command that takes it. The function receives them in its `**shared` keyword arguments.

Each group has its record (`Connection`, `Policy`, `Registries`): a command's options record inherits
the records of the groups it takes, so the parsed flags arrive typed, and the checks of a group's
values (`check_registries`, `at_least_one`) are written once, here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer

from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from kubectl_win.env import Env
    from kubectl_win.kube.config import KubeFlags
    from kubectl_win.registry.session import Session

SEVERITIES = ("error", "warning", "info")
F = TypeVar("F", bound=Callable[..., Any])


class Choice(click.Choice):
    """click's Choice, failing with argparse's words (scripts and tests grep for "invalid choice")."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        self.fail(f"invalid choice: {value!r} (choose from {', '.join(map(str, self.choices))})", param, ctx)


class Seconds(click.ParamType):
    """A number of seconds, with kubectl's optional `s` suffix (30, 30s, 0.5)."""

    name = "seconds"

    def __init__(self, allow_zero: bool = False) -> None:
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            seconds = float(str(value).rstrip("s"))
        except ValueError:
            self.fail(f"not a number of seconds: {value!r}", param, ctx)
        if not 0 <= seconds < float("inf"):
            self.fail(f"must be a number of seconds >= 0: {value!r}", param, ctx)
        if seconds == 0 and not self.allow_zero:
            self.fail(f"must be greater than 0: {value!r}", param, ctx)
        return seconds


class PositiveInt(click.ParamType):
    """A whole number of 1 or more."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"not a whole number: {value!r}", param, ctx)
        if number < 1:
            self.fail(f"must be 1 or more: {value!r}", param, ctx)
        return number


def reads_a_file(flag: str) -> str:
    """The message refusing a connection flag beside `flag`, which reads a file instead of a cluster."""
    return f"{flag} reads a file; it cannot be combined with --kubeconfig/--context/--cluster/--user"


def one_or_more(flag: str) -> str:
    """The message for a count below 1 that was parsed as a plain integer (our own checks' words, not click's
    "FLAG: ..." of PositiveInt)."""
    return f"{flag} must be 1 or more"


def at_least_one(*counts: tuple[str, int]) -> None:
    """Refuse the first (flag, value) below 1."""
    for flag, value in counts:
        if value < 1:
            raise UsageError(one_or_more(flag))


def param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    """One keyword parameter for a shared group: `annotation` is Annotated[type, typer.Option(...)]."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def shared(*groups: list[inspect.Parameter]) -> Callable[[F], F]:
    """Append option groups to the decorated command's signature (typer reads `__signature__`)."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        params = own + [p for group in groups for p in group]
        func.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        func.__annotations__ = {p.name: p.annotation for p in params}
        return func

    return decorate


def help_panel(group: list[inspect.Parameter], title: str) -> list[inspect.Parameter]:
    """The options of `group` shown under their own heading in --help."""
    for parameter in group:
        parameter.annotation.__metadata__[0].rich_help_panel = title
    return group


def output_option(choices: tuple[str, ...], default: str) -> list[inspect.Parameter]:
    return [param("output", Annotated[str, typer.Option(
        "-o", "--output", metavar="FORMAT", click_type=Choice(choices),
        help=f"output format: {'|'.join(choices)} (default {default})")], default)]


def _one_context(ctx: click.Context, parameter: click.Parameter, value: Any) -> Any:
    if value and len(value) > 1:
        raise click.BadParameter("given more than once (only kubectl win doctor reads several contexts)", ctx,
                                 parameter)
    return value


def kube_options(selector: bool = True, all_namespaces: bool = True, contexts: bool = False
                 ) -> list[inspect.Parameter]:
    """kubectl's connection flags; kubectl does not pass its own flags to plugins. `contexts`: --context may
    be repeated (doctor reads several clusters in one run); elsewhere a repeat is a usage error."""
    context_help = ("the kubeconfig context to use; repeat it to read several clusters in one run"
                    if contexts else "the kubeconfig context to use")
    group = [
        param("kubeconfig", Annotated[str | None, typer.Option(
            "--kubeconfig", metavar="PATH",
            help="path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")], None),
        param("context", Annotated[list[str] | None, typer.Option(
            "--context", metavar="NAME", help=context_help, callback=None if contexts else _one_context)], None),
        param("cluster", Annotated[str | None, typer.Option(
            "--cluster", metavar="NAME", help="the kubeconfig cluster to use")], None),
        param("user", Annotated[str | None, typer.Option(
            "--user", metavar="NAME", help="the kubeconfig user to use")], None),
        param("namespace", Annotated[str | None, typer.Option(
            "-n", "--namespace", metavar="NS", help="namespace (default: the context's namespace)")], None),
    ]
    if all_namespaces:
        group.append(param("all_namespaces", Annotated[bool, typer.Option(
            "-A", "--all-namespaces", help="look in every namespace")], False))
    if selector:
        group.append(param("selector", Annotated[str | None, typer.Option(
            "-l", "--selector", metavar="SELECTOR", help="label selector, e.g. app=web,tier!=db")], None))
    group.append(param("request_timeout", Annotated[float, typer.Option(
        "--request-timeout", metavar="SECONDS", click_type=Seconds(),
        help="timeout for each API request (default 30)")], 30.0))
    return help_panel(group, "Cluster connection")


def policy_options() -> list[inspect.Parameter]:
    """--fail-on and --config, shared by explain and doctor."""
    return [
        param("fail_on", Annotated[str, typer.Option(
            "--fail-on", metavar="LEVEL", click_type=Choice(SEVERITIES + ("never",)),
            help="exit 1 when a finding is at or above LEVEL: error|warning|info|never (default error)")], "error"),
        param("config", Annotated[str | None, typer.Option(
            "--config", metavar="PATH",
            help="suppression config (default: .kubectl-win.yaml in the working directory, if present)")], None),
    ]


@dataclass(kw_only=True)
class Connection:
    """kube_options() as parsed (a command without -A or -l keeps their defaults)."""

    kubeconfig: str | None = None
    context: list[str] | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str | None = None
    request_timeout: float = 30.0

    def connection_given(self) -> bool:
        """Whether a flag chose a kubeconfig, context, cluster or user (which a command reading a file refuses)."""
        return bool(self.kubeconfig or self.context or self.cluster or self.user)

    def kube_flags(self, context: str | None = None) -> KubeFlags:
        """The flags the access layer reads; `context` in place of the first --context."""
        from kubectl_win.kube.config import KubeFlags

        return KubeFlags(kubeconfig=self.kubeconfig, context=context or (self.context[0] if self.context else None),
                         cluster=self.cluster, user=self.user, namespace=self.namespace,
                         all_namespaces=self.all_namespaces, selector=self.selector,
                         request_timeout=self.request_timeout or 30.0)


@dataclass(kw_only=True)
class Policy:
    """policy_options() as parsed."""

    fail_on: str = "error"
    config: str | None = None


class Integer(click.ParamType):
    """An integer, failing with argparse's words."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"invalid int value: {value!r}", param, ctx)


def registry_options() -> list[inspect.Parameter]:
    """How to reach image registries (images, doctor --check-images); credentials come from DOCKER_CONFIG."""
    group = [
        param("registry_ca", Annotated[list[str] | None, typer.Option(
            "--registry-ca", metavar="FILE",
            help="also trust this CA bundle for registries (besides the system store and SSL_CERT_FILE; "
                 "repeatable)")], None),
        param("insecure_registry", Annotated[list[str] | None, typer.Option(
            "--insecure-registry", metavar="HOST",
            help="speak plain HTTP to this registry host[:port] (repeatable)")], None),
        param("registry_mirror", Annotated[list[str] | None, typer.Option(
            "--registry-mirror", metavar="REGISTRY=MIRROR",
            help="read REGISTRY's images from MIRROR first, e.g. docker.io=mirror.local:5000 (repeatable)")], None),
        param("registry_timeout", Annotated[float, typer.Option(
            "--registry-timeout", metavar="SECONDS", click_type=Seconds(),
            help="time budget for all registry reads; what is left unread is unknown (default 60)")], 60.0),
        param("concurrency", Annotated[int, typer.Option(
            "--concurrency", metavar="N", click_type=Integer(),
            help="concurrent requests per registry (default 8)")], 8),
    ]
    return help_panel(group, "Registries")


@dataclass(kw_only=True)
class Registries:
    """registry_options() as parsed."""

    registry_ca: list[str] | None = None
    insecure_registry: list[str] | None = None
    registry_mirror: list[str] | None = None
    registry_timeout: float = 60.0
    concurrency: int = 8

    def check_registries(self) -> None:
        """The registry flags, refused before anything is read (a command calls this when it reads registries)."""
        import os
        import ssl

        from kubectl_win.registry.client import parse_mirrors

        at_least_one(("--concurrency", self.concurrency))
        try:
            parse_mirrors(self.registry_mirror or ())
        except ValueError as exc:
            raise UsageError(f"--registry-mirror {exc}") from None
        for path in self.registry_ca or ():
            if not os.path.isfile(path):
                raise UsageError(f"--registry-ca {path}: no such file")
            try:
                ssl.create_default_context().load_verify_locations(cafile=path)
            except (OSError, ssl.SSLError) as exc:
                raise UsageError(f"cannot load --registry-ca {path}: {getattr(exc, 'strerror', None) or exc}") from None

    def registry_session(self, env: Env) -> AbstractContextManager[Session]:
        """The registry session these flags ask for (checked by check_registries first), with progress on a
        terminal."""
        from kubectl_win.registry.client import RegistryOptions, parse_mirrors
        from kubectl_win.registry.session import registry_session

        options = RegistryOptions(ca_files=tuple(self.registry_ca or ()), insecure=tuple(self.insecure_registry or ()),
                                  mirrors=parse_mirrors(self.registry_mirror or ()), per_registry=self.concurrency,
                                  budget=self.registry_timeout)
        return registry_session(options, env.stderr if env.stderr_isatty else None)
