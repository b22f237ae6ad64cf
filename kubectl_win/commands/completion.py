"""`kubectl win completion SHELL`: print a shell completion script."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Choice
from kubectl_win.completion.scripts import SHELLS
from kubectl_win.env import Env

DESCRIPTION = (
    "Print the completion script for SHELL on stdout.\n\n"
    "bash, zsh, fish and powershell complete the kubectl-win command itself. 'kubectl' prints\n"
    "kubectl_complete-win, the helper kubectl 1.26+ runs to complete `kubectl win ...`; pip and\n"
    "pipx installs already put it on PATH, krew installs need it saved beside the plugin."
)
# `kubectl-win completion __complete WORD... CURRENT`, which the scripts run on every TAB, never
# reaches this command: kubectl_win.cli.main answers it before the typer application is built.
EXAMPLES = """examples:
  source <(kubectl win completion bash)
  kubectl win completion zsh > "${fpath[1]}/_kubectl-win"
  kubectl win completion fish > ~/.config/fish/completions/kubectl-win.fish
  kubectl win completion powershell | Out-String | Invoke-Expression
  kubectl win completion kubectl > ~/.krew/bin/kubectl_complete-win && chmod +x ~/.krew/bin/kubectl_complete-win
"""


@dataclass(kw_only=True)
class CompletionOptions:
    shell: str


def completion(
    shell: Annotated[str, typer.Argument(metavar="SHELL", click_type=Choice(SHELLS), help="|".join(SHELLS))],
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("completion", help=verbatim(DESCRIPTION), short_help=summary, epilog=verbatim(EXAMPLES))(completion)


def run(options: CompletionOptions, env: Env) -> int:
    from kubectl_win.completion.scripts import script

    env.stdout.write(script(options.shell, windows=env.is_windows))
    return 0


COMMAND = Command(CompletionOptions, run)
