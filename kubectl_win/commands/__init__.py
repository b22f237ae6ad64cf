"""One module per command. Each defines a typer function, `register(app)` and `run(args, env) -> int`;
`kubectl_win.cli.COMMANDS` lists them and says how to add one."""
