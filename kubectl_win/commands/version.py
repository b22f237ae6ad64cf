"""`kubectl win version`: what is installed, in a form bug reports and scripts can use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import output_option, shared
from kubectl_win.env import Env

EXAMPLES = """examples:
  kubectl win version
  kubectl win version -o json
"""


@dataclass(kw_only=True)
class VersionOptions:
    output: str = "text"


@shared(output_option(("text", "json", "yaml"), "text"))
def version(**shared: Any) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("version", help=summary[:1].upper() + summary[1:] + ".", short_help=summary,
                epilog=verbatim(EXAMPLES))(version)


def run(options: VersionOptions, env: Env) -> int:
    from kubectl_win.about import render_version, version_info

    render_version(version_info(), options.output, env.stdout)
    return 0


COMMAND = Command(VersionOptions, run)
