"""One module per command, and nothing else: each defines a typer function, `register(app, summary)`, an options
record built from the flags, `validate`, `complete` where needed, `run(options, env) -> int`, and the `Command`
that joins them (kubectl_win/commands/base.py). `kubectl_win.cli.COMMANDS` lists them and says how to add one."""
