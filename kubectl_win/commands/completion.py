"""`kubectl win completion SHELL`: print a shell completion script."""

from __future__ import annotations

import argparse

from kubectl_win.env import Env

DESCRIPTION = (
    "Print the completion script for SHELL on stdout.\n\n"
    "bash, zsh, fish and powershell complete the kubectl-win command itself. 'kubectl' prints\n"
    "kubectl_complete-win, the helper kubectl 1.26+ runs to complete `kubectl win ...`; pip and\n"
    "pipx installs already put it on PATH, krew installs need it saved beside the plugin."
)
EXAMPLES = """examples:
  source <(kubectl win completion bash)
  kubectl win completion zsh > "${fpath[1]}/_kubectl-win"
  kubectl win completion fish > ~/.config/fish/completions/kubectl-win.fish
  kubectl win completion powershell | Out-String | Invoke-Expression
  kubectl win completion kubectl > ~/.krew/bin/kubectl_complete-win && chmod +x ~/.krew/bin/kubectl_complete-win
"""

PROTOCOL = "__complete"  # hidden: `kubectl-win completion __complete WORD... CURRENT` answers one TAB


class _Shells(tuple):
    """The public choices, listed in help and offered by completion; the protocol word is accepted too."""

    def __contains__(self, item: object) -> bool:
        return item == PROTOCOL or tuple.__contains__(self, item)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from kubectl_win.completion.scripts import SHELLS

    parser.add_argument("shell", choices=_Shells(SHELLS), metavar="SHELL", help="|".join(SHELLS))
    parser.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.errors import UsageError

    if args.shell == PROTOCOL:
        from kubectl_win.completion.protocol import respond, silence_stderr

        silence_stderr()  # kubectl shows the completer's stderr in the middle of the prompt
        try:
            respond(args.words, env.stdout)
        except Exception:  # noqa: BLE001 - a non-zero exit makes kubectl fall back to file names
            return 1
        return 0
    if args.words:
        raise UsageError(f"unexpected arguments after {args.shell}: {' '.join(args.words)}")
    from kubectl_win.completion.scripts import script

    env.stdout.write(script(args.shell, windows=env.is_windows))
    return 0
