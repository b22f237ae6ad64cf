"""`kubectl win version`: what is installed, in a form bug reports and scripts can use."""

from __future__ import annotations

import argparse

from kubectl_win.commands.flags import add_output_flag
from kubectl_win.env import Env

EXAMPLES = """examples:
  kubectl win version
  kubectl win version -o json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_output_flag(parser, ("text", "json", "yaml"), "text")


def run(args: argparse.Namespace, env: Env) -> int:
    from kubectl_win.about import render_version, version_info

    render_version(version_info(), args.output, env.stdout)
    return 0
