"""What every command shares: the typer application class, the process flags, and the steps every command
runs through (`Command`): the parsed flags become the command's typed options record, `validate` refuses bad
combinations without any I/O, `complete` resolves what needs the kubeconfig (or the file system), and `run`
does the work.

`KubectlWinTyper` is `typer.Typer` with our defaults (plain click help, which prints fast, no
typer completion installer, no pretty tracebacks) and command classes that add `--debug` and
`--no-color` to every command, so they work before or after the verb as they always have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import click
import typer
from typer.core import TyperCommand, TyperGroup

from kubectl_win.commands.flags import Choice
from kubectl_win.env import Env
from kubectl_win.shells import SHELLS

HELP_OPTIONS = ["-h", "--help"]


class ProcessFlags:
    """--debug and --no-color as given anywhere on the line (set by the options' callbacks)."""

    debug = False
    no_color = False
    shell: str | None = None
    # When set, `invoke` hands the command and its options here instead of running it (tests).
    capture: Callable[[Command[Any, Any], Any], None] | None = None

    @classmethod
    def reset(cls) -> None:
        cls.debug = cls.no_color = False
        cls.shell = None


def _set_flag(name: str) -> Callable[[click.Context, click.Parameter, bool], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            setattr(ProcessFlags, name, True)

    return callback


def process_options() -> list[click.Option]:
    return [
        click.Option(["--debug"], is_flag=True, expose_value=False, callback=_set_flag("debug"),
                     help="show a traceback instead of a one-line error"),
        click.Option(["--no-color"], is_flag=True, expose_value=False, callback=_set_flag("no_color"),
                     help="never colour output"),
        click.Option(["--shell", "fix_shell"], type=Choice(SHELLS), expose_value=False, callback=_set_shell,
                     metavar="SHELL", help="quote fix commands for this shell: posix|powershell|cmd (default: the "
                                           "shell it runs in on Windows, else posix)"),
    ]


def root_value_options() -> frozenset[str]:
    """The names of the options given before the command that take a value (`--shell SHELL`)."""
    return frozenset(name for option in process_options() if not option.is_flag for name in option.opts
                     if name.startswith("-"))


def _set_shell(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        ProcessFlags.shell = value


class _Behaviour:
    """Shared by our command and group classes (a mixin: typer needs its own base classes)."""

    params: list[click.Parameter]

    def _adopt(self) -> None:
        for param in self.params:
            if isinstance(param, click.Option):
                param.show_default = False  # our help texts say "(default X)" where it helps
        self.params.extend(process_options())

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except click.UsageError as exc:
            if exc.ctx is None:  # click's parser leaves it out; the message points at this command's help
                exc.ctx = ctx
            raise

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        pieces = self.collect_usage_pieces(ctx)  # type: ignore[attr-defined]
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix="usage: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Arguments, then options grouped by their help panel (e.g. "Cluster connection")."""
        arguments: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {"Options": []}
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if isinstance(param, click.Argument):
                arguments.append(record)
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        for title, records in panels.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


class KubectlWinCommand(_Behaviour, TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._adopt()


class KubectlWinGroup(_Behaviour, TyperGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._adopt()

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)
        self.format_commands(ctx, formatter)


class KubectlWinTyper(typer.Typer):
    """typer.Typer with our defaults; `command()` makes commands that carry the process flags."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", KubectlWinGroup)
        kwargs.setdefault("add_completion", False)
        kwargs.setdefault("rich_markup_mode", None)
        kwargs.setdefault("pretty_exceptions_enable", False)
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", KubectlWinCommand)
        return super().command(*args, **kwargs)


def add_root_callback(app: typer.Typer, version_text: str) -> None:
    """`kubectl win` alone prints its help; `--version` prints one line and exits."""

    def print_version(value: bool) -> None:
        if value:
            typer.echo(version_text)
            raise typer.Exit(0)

    @app.callback(invoke_without_command=True)
    def root(ctx: typer.Context, version: bool = typer.Option(  # default style: the callback is a local
            False, "--version", is_eager=True, callback=print_version, help="print the version and exit")) -> None:
        if ctx.invoked_subcommand is None:
            typer.echo(ctx.get_help())


def verbatim(text: str) -> str:
    """Help text printed as written: click rewraps paragraphs unless they start with a \\b line."""
    return "\n\n".join(f"\b\n{paragraph}" for paragraph in text.strip("\n").split("\n\n"))


OptionsT = TypeVar("OptionsT")  # a command's options record, as built from its flags
RunT = TypeVar("RunT")  # what `complete` makes of it, and `run` takes


def _valid(options: Any) -> None:
    return None


def _as_is(options: Any, env: Env) -> Any:
    return options


@dataclass(frozen=True)
class Command(Generic[OptionsT, RunT]):
    """A command's steps, in the order they run: options, validate, complete, run (kubectl's pkg/cmd/<verb>
    shape, with validate first so a bad flag combination is refused before the kubeconfig is read)."""

    options: Callable[..., OptionsT]  # the options record, built from the flags by their parameter names
    run: Callable[[RunT, Env], int]
    validate: Callable[[OptionsT], None] = _valid  # pure: refuses a bad flag combination, reads nothing
    complete: Callable[[OptionsT, Env], RunT] = _as_is  # resolves what needs the kubeconfig or the file system

    def __call__(self, options: OptionsT, env: Env) -> int:
        self.validate(options)
        return int(self.run(self.complete(options, env), env) or 0)


def invoke(command: Command[Any, Any], params: dict[str, Any]) -> int:
    """Run `command` with the parsed parameters as its options record.

    `params` is the typer function's `locals()`: its own parameters plus the `shared` groups.
    """
    values = {name: value for name, value in params.items() if name != "shared"}
    values.update(params.get("shared") or {})
    options = command.options(**values)
    if ProcessFlags.capture is not None:
        ProcessFlags.capture(command, options)
        return 0
    try:
        env = Env.from_process(debug=ProcessFlags.debug, no_color=ProcessFlags.no_color, shell=ProcessFlags.shell)
        return command(options, env)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error for us. Handled here, before click's
        # main loop turns it into exit 1.
        silence_stdout()
        return 0


def silence_stdout() -> None:
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
