"""The command line: one typer application, errors mapped to one line and an exit code.

Commands are registered in `COMMANDS` below, in the order `kubectl win --help` lists them. To add
a command:

1. write `kubectl_win/commands/NAME.py` with a typer function (its parameters are the command's
   arguments and options: `Annotated[type, typer.Option(...)]`; `@shared(kube_options(), ...)` from
   `commands/flags.py` adds kubectl's flags), a `register(app, summary)` that calls
   `app.command(name, short_help=summary, ...)` (or `app.add_typer(...)` for a command with
   subcommands), an options record (a dataclass whose fields are the parameters; the records in
   `commands/flags.py` hold the shared groups), a pure `validate(options)`, a `complete(options, env)`
   where something needs the kubeconfig, and a `run(options, env) -> int` that calls the service
   function; the function's body is `return invoke(COMMAND, locals())`, where
   `COMMAND = Command(Options, run, validate, complete)` (see `commands/base.py`);
2. add the name, module and one-line summary to `COMMANDS`;
3. run `python -m kubectl_win.completion.export` to refresh the command tree completion reads
   (tests/test_cli_app.py fails until the file and the application agree).

A new option of an existing command needs its field in the command's options record, and step 3.
Completion of the option's value comes from its choices, or from `kubectl_win/completion/hints.py`
(by parameter name or metavar).

Help and completion import no command's heavy dependencies: a command module imports only typer
and our light modules at the top, and does its work inside `run`. A TAB never imports typer at
all: it is answered from the exported command tree (see kubectl_win/completion/).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from kubectl_win import __version__
from kubectl_win.errors import ExitStatus, KubectlWinError, UsageError

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

    import click
    import typer

PROG = "kubectl win"

DESCRIPTION = (
    "Find and fix what goes wrong with Windows nodes: doctor inspects a cluster, explain flags pod "
    "fields Windows rejects or ignores, port-forward reaches Windows pods through an in-pod relay, "
    "scaffold writes Windows workloads that schedule right the first time."
)

# name -> (module, one-line summary). The order is the order of `kubectl win --help`.
COMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("kubectl_win.commands.explain",
        "explain pod fields that Windows rejects, ignores or does not support"),
    "doctor": ("kubectl_win.commands.doctor",
        "inspect a cluster (or a dump of one) for Windows node and workload problems"),
    "completion": ("kubectl_win.commands.completion",
        "print a shell completion script (bash, zsh, fish, powershell, kubectl)"),
    "version": ("kubectl_win.commands.version",
        "print the kubectl-win version and the runtime it uses"),
    "scaffold": ("kubectl_win.commands.scaffold",
        "write Windows workload manifests, or add OS placement to existing ones"),
    "port-forward": ("kubectl_win.commands.port_forward",
        "forward local ports to a Windows (or Linux) pod through an in-pod relay"),
    "hns": ("kubectl_win.commands.hns",
        "check a Windows node's HNS load balancers and endpoints against the cluster's Services"),
    "logs": ("kubectl_win.commands.logs",
        "read a Windows node's kubelet, containerd, kube-proxy and CNI logs through the API server"),
    "images": ("kubectl_win.commands.images",
        "check from the registry whether images run on Windows node builds; plan a Windows Server move"),
    "collect": ("kubectl_win.commands.collect",
        "gather a support bundle from Windows nodes (for doctor --from-bundle) without RDP or SSH"),
    "serve": ("kubectl_win.commands.serve",
        "run doctor on an interval and serve the results as Prometheus metrics"),
}

COMPLETION_REQUEST = ("completion", "__complete")  # what our shell scripts run on every TAB


def build_app(only: str | None = None) -> typer.Typer:
    """The typer application; with `only`, just that command (only="": none)."""
    import importlib

    from kubectl_win.commands.base import HELP_OPTIONS, KubectlWinTyper, add_root_callback

    app = KubectlWinTyper(help=DESCRIPTION, context_settings={"help_option_names": HELP_OPTIONS})
    add_root_callback(app, f"kubectl-win {__version__}")
    for name, (module_name, summary) in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module_name).register(app, summary)
    return app


def click_app(only: str | None = None) -> click.Group:
    """The application as click runs it. With `only`, the other commands are placeholders carrying
    their summary: a run of one command, or `--help` (only=""), imports no other command module
    and has typer convert no other signature."""
    import click
    import typer.main

    group: click.Group = typer.main.get_command(build_app(only))  # type: ignore[assignment]
    if only is not None:
        group.commands = {name: group.commands.get(name) or click.Command(name, help=summary, short_help=summary)
                          for name, (_, summary) in COMMANDS.items()}
    return group


def command_word(argv: Sequence[str]) -> str:
    """The command named in argv, or "" when there is none. A root option's value (`--shell powershell`)
    is not a command: the word after such an option is skipped, as click will take it as the value."""
    from kubectl_win.commands.base import root_value_options

    takes_value = root_value_options()
    words = iter(argv)
    for word in words:
        if word == "--":
            break
        if word in takes_value:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMANDS else ""
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if tuple(argv[:2]) == COMPLETION_REQUEST:
        return _complete(argv[2:])
    debug = "--debug" in argv
    import click

    from kubectl_win.commands.base import ProcessFlags

    ProcessFlags.reset()
    try:
        return int(click_app(command_word(argv)).main(argv, prog_name=PROG, standalone_mode=False) or 0)
    except click.UsageError as exc:
        print(f"error: {usage_message(exc)}", file=sys.stderr)
        return ExitStatus.USAGE
    except click.ClickException as exc:
        print(f"error: {_one_line(exc.format_message())}", file=sys.stderr)
        return ExitStatus.USAGE
    except click.Abort:  # Ctrl-C or end of input at a prompt
        return ExitStatus.INTERRUPTED
    except KubectlWinError as exc:
        return _report_error(f"error: {exc}", exc.exit_code, debug)
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not an error for us.
        from kubectl_win.commands.base import silence_stdout

        silence_stdout()
        return ExitStatus.OK
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        return _report_error(f"error: internal error: {type(exc).__name__}: {exc}"
                             + ("" if debug else " (rerun with --debug for details)"), ExitStatus.INTERNAL, debug)


def _report_error(line: str, exit_code: int, debug: bool) -> int:
    """Print an error (with --debug, after its traceback), redacted, and return its exit code: the
    exit code is the same with and without --debug, and no credential is ever printed."""
    from kubectl_win.redact import redact
    from kubectl_win.terminal import terminal_safe

    if debug:
        import traceback

        sys.stderr.write(redact(traceback.format_exc()))
    print(terminal_safe(redact(line)), file=sys.stderr)  # names from a kubeconfig can hold escape sequences
    return exit_code


def parse_args(argv: Sequence[str]) -> tuple[Any, Any]:
    """The command (called as `command(options, env)`: validate, complete, run) and the options record it would
    get, without running it (for tests). A usage error raises UsageError, with the message `main` would print."""
    import click

    from kubectl_win.commands.base import ProcessFlags

    captured: list[tuple[Any, Any]] = []
    ProcessFlags.capture = lambda command, options: captured.append((command, options))
    try:
        click_app(command_word(argv)).main(list(argv), prog_name=PROG, standalone_mode=False)
    except click.UsageError as exc:
        raise UsageError(usage_message(exc)) from None
    finally:
        ProcessFlags.capture = None
    if not captured:
        raise UsageError("no command was given")
    return captured[0]


def usage_message(exc: click.UsageError) -> str:
    """click's usage error as our one line, pointing at the help of the command that was typed."""
    import click

    path = exc.ctx.command_path if exc.ctx is not None else PROG
    if isinstance(exc, click.NoSuchOption):  # kubectl's words
        return f"unknown flag: {exc.option_name} (see '{path} --help')"
    if type(exc).__name__ == "NoSuchCommand" or exc.message.startswith("No such command"):
        return _unknown_command(exc.message, path)
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter) and exc.param:
        param = exc.param
        name = "/".join(param.opts) if isinstance(param, click.Option) else (param.human_readable_name or "")
        message = f"{name}: {exc.message}" if name else exc.message
    else:
        message = exc.format_message()
    return f"{_one_line(message)} (see '{path} --help')"


def _unknown_command(message: str, path: str) -> str:
    """click's "No such command 'x'. Did you mean 'y'?" in kubectl's words, quotes matched."""
    import re

    named = re.match(r"No such command (['\"])(?P<word>.*?)\1\.?", message)
    word = named.group("word") if named else message.partition("command")[2].strip(" '\".")
    suggestion = re.search(r"Did you mean (['\"])(?P<word>.+?)\1\?", message)
    hint = f"; did you mean {suggestion.group('word')!r}?" if suggestion else ""
    return f"unknown command {word!r} for '{path}'{hint} (see '{path} --help')"


def _one_line(message: str) -> str:
    text = " ".join(message.split()).rstrip(".")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]  # "No such option" -> "no such option", like our own errors
    return text


def _complete(words: list[str]) -> int:
    """One TAB from our shell scripts: answered from the exported command tree, typer never loads."""
    from kubectl_win.completion.protocol import respond, silence_stderr

    silence_stderr()  # the shell shows the completer's stderr in the middle of the prompt
    try:
        respond(words, sys.stdout)
    except Exception:  # noqa: BLE001 - a non-zero exit makes the shell fall back to file names
        return 1
    return 0
