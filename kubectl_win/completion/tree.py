"""The command tree completion walks, exported from the typer application into `tree.json`.

A TAB must cost about as much as `kubectl version --client`: building the typer application
(importing typer and click, reading every command's signature) costs more than that by itself.
So the application's commands, options, arguments and choices are written to a small JSON file
when they change (`python -m kubectl_win.completion.export`), and completion reads only that file.
tests/test_cli_app.py fails when the file and the application disagree.

A node: {"help", "commands": {name: node}, "options": [...], "arguments": [...]}; an option:
{"names", "dest", "help", "metavar", "choices", "flag", "multiple"}; an argument: {"dest",
"metavar", "nargs" (1, or -1 for any number), "choices"}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TREE_FILE = Path(__file__).with_name("tree.json")

Node = dict[str, Any]


def load() -> Node:
    """The exported tree (what completion uses at run time)."""
    return json.loads(TREE_FILE.read_text(encoding="utf-8"))
