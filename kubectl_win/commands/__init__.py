"""The explicit registry of subcommands: name -> module.

Each module defines HELP (one line), optional DESCRIPTION and EXAMPLES, `add_arguments(parser)`
and `run(args, env) -> int`. Command modules import only argparse-level code at the top; the
work (and any heavy import) happens inside `run`.
"""

COMMANDS: dict[str, str] = {
    "explain": "kubectl_win.commands.explain",
    "doctor": "kubectl_win.commands.doctor",
    "completion": "kubectl_win.commands.completion",
    "version": "kubectl_win.commands.version",
    "scaffold": "kubectl_win.commands.scaffold",
    "port-forward": "kubectl_win.commands.port_forward",
}
