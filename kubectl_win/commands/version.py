"""`kubectl win version`: what is installed, in a form bug reports and scripts can use."""

from __future__ import annotations

from typing import Any

from kubectl_win.commands.base import KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import output_option, shared
from kubectl_win.env import Env

SUMMARY = "print the kubectl-win version and the runtime it uses"
EXAMPLES = """examples:
  kubectl win version
  kubectl win version -o json
"""


@shared(output_option(("text", "json", "yaml"), "text"))
def version(**shared: Any) -> int:
    return invoke(run, locals())


def register(app: KubectlWinTyper) -> None:
    app.command("version", help=SUMMARY[:1].upper() + SUMMARY[1:] + ".", short_help=SUMMARY,
                epilog=verbatim(EXAMPLES))(version)


def run(args: Any, env: Env) -> int:
    from kubectl_win.about import render_version, version_info

    render_version(version_info(), args.output, env.stdout)
    return 0
