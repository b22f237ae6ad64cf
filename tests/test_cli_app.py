"""The typer application as a whole: every command's help renders, and completion offers exactly
what the application defines (through the exported tree, which must match the application)."""

from __future__ import annotations

import io

import click
import pytest

from kubectl_win.cli import click_app
from kubectl_win.commands.base import HELP_OPTIONS
from kubectl_win.completion.export import export_app
from kubectl_win.completion.protocol import respond
from kubectl_win.completion.tree import TREE_FILE, load
from tests.support.cli import run_cli
from tests.support.completion import directive, values
from tests.support.paths import SAMPLE_DUMP


def _walk(command: click.Command, path: tuple[str, ...], parent: click.Context | None):
    ctx = click.Context(command, parent=parent, info_name=path[-1] if path else "kubectl win",
                        help_option_names=HELP_OPTIONS)
    yield path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, name), (*path, name), ctx)


COMMANDS = list(_walk(click_app(), (), None))


def test_the_exported_tree_is_the_application():
    assert load() == export_app(), (f"{TREE_FILE.name} is out of date: run `python -m kubectl_win.completion.export` "
                                    "after changing a command")


def test_every_command_is_walked():
    paths = {" ".join(path) for path, _, _ in COMMANDS}
    assert {"", "explain", "doctor", "version", "completion", "port-forward", "scaffold", "scaffold deployment",
            "scaffold patch"} <= paths


@pytest.mark.parametrize("path", [path for path, _, _ in COMMANDS], ids=lambda path: " ".join(path) or "root")
def test_help_renders_and_completion_offers_exactly_the_commands_options(path):
    command, ctx = next((command, ctx) for p, command, ctx in COMMANDS if p == path)
    result = run_cli(*path, "--help")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.startswith(f"usage: {' '.join(('kubectl win', *path))}")
    for param in command.get_params(ctx):
        if isinstance(param, click.Option) and not param.hidden:
            assert param.opts[-1] in result.stdout, f"{param.opts[-1]} is missing from the help of {path}"

    out = io.StringIO()
    respond([*path, "-"], out)
    options = {name for param in command.get_params(ctx) if isinstance(param, click.Option) and not param.hidden
               for name in (*param.opts, *param.secondary_opts)}
    assert set(values(out.getvalue())) == options and directive(out.getvalue()) == 4

    if isinstance(command, click.Group):
        out = io.StringIO()
        respond([*path, ""], out)
        assert values(out.getvalue()) == [name for name in command.list_commands(ctx)
                                          if not command.get_command(ctx, name).hidden]


def test_usage_errors_are_one_line_pointing_at_the_commands_help():
    result = run_cli("scaffold", "deployment", "web", "--image", "x", "--no-such")
    assert result.exit_code == 2
    assert result.stderr == "error: unknown flag: --no-such (see 'kubectl win scaffold deployment --help')\n"
    result = run_cli("explain", "-o")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "(see 'kubectl win explain --help')" in result.stderr
    result = run_cli("scaffold", "deployment")
    assert result.stderr == "error: missing argument 'NAME' (see 'kubectl win scaffold deployment --help')\n"
    result = run_cli("scaffold", "deployment", "web")
    assert result.stderr == "error: missing option '--image' (see 'kubectl win scaffold deployment --help')\n"
    result = run_cli("completion", "cmd")
    assert result.stderr == ("error: SHELL: invalid choice: 'cmd' (choose from bash, zsh, fish, powershell, kubectl) "
                             "(see 'kubectl win completion --help')\n")
    result = run_cli("nope")
    assert (result.exit_code, result.stderr) == (2, "error: unknown command 'nope' for 'kubectl win' "
                                                    "(see 'kubectl win --help')\n")
    result = run_cli("bogus")  # click suggests a command: the word keeps its own quotes
    assert (result.exit_code, result.stderr) == (2, "error: unknown command 'bogus' for 'kubectl win'; did you "
                                                    "mean 'logs'? (see 'kubectl win --help')\n")


ROOT_VALUE_OPTIONS = [param for param in click_app().params
                      if isinstance(param, click.Option) and not param.is_flag and not param.hidden]


def test_the_root_has_options_with_a_value():
    assert {param.opts[0] for param in ROOT_VALUE_OPTIONS} >= {"--shell"}


@pytest.mark.parametrize("option", ROOT_VALUE_OPTIONS, ids=lambda option: option.opts[0])
def test_a_root_option_with_a_value_works_before_the_command_in_both_forms(option):
    """`kubectl win --shell powershell doctor --from-dump X`: the value is not taken for the command, so the
    command's own options are known (before, `--from-dump` was an unknown flag)."""
    value = list(option.type.choices)[-1] if isinstance(option.type, click.Choice) else "x"
    for given in ([option.opts[0], value], [f"{option.opts[0]}={value}"]):
        result = run_cli(*given, "doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
        assert (result.exit_code, result.stderr) in {(0, ""), (1, "")}, (given, result.stderr)
        assert result.json["findings"], given
        out = io.StringIO()
        respond([*given, "doctor", "--from-d"], out)  # a TAB after it completes the command's own options
        assert values(out.getvalue()) == ["--from-dump"], given


def test_process_flags_work_before_and_after_the_command():
    assert run_cli("--no-color", "version").exit_code == 0
    assert run_cli("version", "--no-color", "--debug").exit_code == 0
    assert run_cli("--version").stdout.startswith("kubectl-win ")
    bare = run_cli()
    assert bare.exit_code == 0 and bare.stdout.startswith("usage: kubectl win")


def test_a_reader_that_goes_away_is_not_an_error():
    """`kubectl win explain --list | head -1`: the pipe closes before the table is written."""
    import subprocess
    import sys

    from tests.support.paths import ROOT

    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "explain", "--list"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before the child writes anything
    stderr = process.stderr.read()
    assert (process.wait(timeout=60), stderr) == (0, b"")


def test_debug_shows_the_traceback_of_an_error_and_keeps_its_exit_code(tmp_path):
    missing = str(tmp_path / "nope.json")
    plain = run_cli("doctor", "--from-dump", missing)
    debug = run_cli("doctor", "--from-dump", missing, "--debug")
    assert plain.exit_code == debug.exit_code == 2
    assert "Traceback (most recent call last)" in debug.stderr and "InputError" in debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.strip()


def test_root_help_lists_every_command_with_its_summary():
    from kubectl_win.cli import COMMANDS as REGISTRY

    out = run_cli("--help").stdout
    listed = [line.split()[0] for line in out.split("Commands:", 1)[1].splitlines() if line.startswith("  ")
              and not line.startswith("   ")]
    assert listed == list(REGISTRY)
    for name, (_, summary) in REGISTRY.items():
        assert " ".join(summary.split()[:4]) in " ".join(out.split()), name


@pytest.mark.parametrize("argv,loaded", [(["--help"], set()), (["version"], {"version"}),
                                         (["explain", "--help"], {"explain"}), (["scaffold", "--help"], {"scaffold"})])
def test_a_run_builds_only_the_command_it_runs(argv, loaded):
    import subprocess
    import sys
    import textwrap

    from tests.support.paths import ROOT

    code = textwrap.dedent(f"""\
        import contextlib, io, sys
        from kubectl_win.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            main({argv!r})
        print(" ".join(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("kubectl_win.commands.")
                              and m.rsplit(".", 1)[1] not in ("base", "flags"))))
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == loaded


# The fewest words each command parses; a leaf of COMMANDS missing here fails the test below.
MINIMAL_ARGS = {"completion": ["bash"], "logs": ["node-1"], "scaffold patch": ["-f", "x.yaml"],
                "scaffold monitor": ["--image", "a:1"],
                **{f"scaffold {kind}": ["web", "--image", "a:1"]
                   for kind in ("deployment", "statefulset", "daemonset", "job", "cronjob")}}


LEAVES = [path for path, command, _ in COMMANDS if path and not isinstance(command, click.Group)]


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_gets_its_options_record_with_every_flag(path):
    """Each command's parsed flags arrive as its options record (a flag without a field fails here, at parse time,
    not when a user first runs the command), and a field's own default is its flag's."""
    import dataclasses

    from kubectl_win.cli import parse_args

    command, options = parse_args([*path, *MINIMAL_ARGS.get(" ".join(path), [])])
    assert dataclasses.is_dataclass(options) and isinstance(options, command.options)
    fields = {f.name: f for f in dataclasses.fields(options)}
    leaf = next(c for p, c, _ in COMMANDS if p == path)
    flags = {p.name: p for p in leaf.params if p.expose_value}
    assert set(flags) <= set(fields)
    differ = {name: (fields[name].default, getattr(options, name)) for name in flags
              if fields[name].default is not dataclasses.MISSING and fields[name].default != getattr(options, name)
              and name not in ("name", "image", "filename", "node", "shell")}  # given by MINIMAL_ARGS
    assert differ == {}
