"""The thin command-line layer: parse flags, build the Env, call one command, map errors to exit codes.

Only argparse and our own light modules are imported here, so `--help` and offline commands
start quickly (the kubernetes package is imported lazily by the commands that talk to a cluster).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kubectl_win import __version__
from kubectl_win.commands import COMMANDS, SUMMARIES
from kubectl_win.env import Env
from kubectl_win.errors import ExitStatus, KubectlWinError, UsageError

PROG = "kubectl win"

DESCRIPTION = (
    "Find and fix what goes wrong with Windows nodes: doctor inspects a cluster, explain flags pod "
    "fields Windows rejects or ignores, port-forward reaches Windows pods through an in-pod relay, "
    "scaffold writes Windows workloads that schedule right the first time."
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `only` just that command's arguments (the others are listed, not
    imported): a run of one command, or `--help` with only="", then loads nothing it does not need."""
    parser = _Parser(prog=PROG, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kubectl-win {__version__}")
    _add_process_flags(parser, suppress=False)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        summary = SUMMARIES[name]
        if only is not None and name != only:
            subparsers.add_parser(name, help=summary, add_help=False)
            continue
        module = importlib.import_module(module_name)
        sub = subparsers.add_parser(
            name,
            help=summary,
            description=getattr(module, "DESCRIPTION", summary),
            epilog=getattr(module, "EXAMPLES", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_process_flags(sub, suppress=True)
        module.add_arguments(sub)
        sub.set_defaults(_module=module)
    return parser


def command_word(argv: Sequence[str]) -> str | None:
    """The command named in argv ("" when none is), or None when the first word is not a command."""
    for word in argv:
        if word.startswith("-"):
            continue
        return word if word in COMMANDS else None
    return ""


def _add_process_flags(parser: argparse.ArgumentParser, suppress: bool) -> None:
    # Defined on the root and on every subcommand, so they work before or after the verb;
    # SUPPRESS on subcommands keeps a root value from being reset by the subparser's default.
    default = argparse.SUPPRESS if suppress else False
    parser.add_argument(
        "--debug", action="store_true", default=default, help="show a traceback instead of a one-line error"
    )
    parser.add_argument("--no-color", action="store_true", default=default, help="never colour output")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    command = command_word(argv)
    parser = build_parser(only=command)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        message = str(exc)
        if command:  # point at the command's own help, not the root's
            message = message.replace(f"(see '{PROG} --help')", f"(see '{PROG} {command} --help')")
        print(f"error: {message}", file=sys.stderr)
        return ExitStatus.USAGE
    if getattr(args, "_module", None) is None:
        parser.print_help()
        return ExitStatus.OK
    env = Env.from_process(debug=args.debug, no_color=args.no_color)
    try:
        return int(args._module.run(args, env))
    except KubectlWinError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; that is not an error for us.
        _silence_stdout()
        return ExitStatus.OK
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        if debug:
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)", file=sys.stderr)
        return ExitStatus.INTERNAL


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
