"""Writes `tree.json` from the real typer application (`python -m kubectl_win.completion.export`).

A build-time step, apart from tree.py: it imports the whole application, which completion at run time never
does (tree.py only reads the file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kubectl_win.completion.tree import TREE_FILE, Node


def export_app() -> Node:
    """The tree of the real application (imports typer and every command module)."""
    import click

    from kubectl_win.cli import click_app
    from kubectl_win.commands.base import HELP_OPTIONS

    def node(command: click.Command, parent: click.Context | None, name: str) -> Node:
        ctx = click.Context(command, parent=parent, info_name=name, help_option_names=HELP_OPTIONS)
        options, arguments = [], []
        for param in command.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            choices = [str(c) for c in param.type.choices] if isinstance(param.type, click.Choice) else None
            if isinstance(param, click.Argument):
                arguments.append({"dest": param.name, "metavar": param.metavar or (param.name or "").upper(),
                                  "nargs": param.nargs, "choices": choices})
            elif isinstance(param, click.Option):
                names = sorted({*param.opts, *param.secondary_opts}, key=lambda n: (n.startswith("--"), n))
                options.append({"names": names, "dest": param.name,
                                "help": " ".join((param.help or "").split()), "metavar": param.metavar,
                                "choices": choices, "flag": bool(param.is_flag or param.count),
                                "multiple": bool(param.multiple or param.count)})
        commands = {}
        if isinstance(command, click.Group):
            for sub_name in command.list_commands(ctx):
                sub = command.get_command(ctx, sub_name)
                if sub is not None and not sub.hidden:
                    commands[sub_name] = node(sub, ctx, sub_name)
        return {"help": command.get_short_help_str(limit=200), "commands": commands, "options": options,
                "arguments": arguments}

    return node(click_app(), None, "kubectl win")


def write(path: Path = TREE_FILE) -> Node:
    tree = export_app()
    path.write_text(json.dumps(tree, indent=1) + "\n", encoding="utf-8", newline="\n")
    return tree


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else TREE_FILE)
    print(f"wrote {TREE_FILE if len(sys.argv) < 2 else sys.argv[1]}")
