"""The README's first two commands are the ones that work: the first runs, the second is what CI runs."""

from __future__ import annotations

import re
import shlex

from tests.support.cli import run_cli
from tests.support.paths import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block, "the README starts with a sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_first_command_runs_the_plugin_on_a_bundled_file(monkeypatch) -> None:
    first, _ = readme_commands()
    install, run = first.split(" && ")
    assert install == "pip install ."
    argv = shlex.split(run)
    assert argv[0] == "kubectl-win"
    monkeypatch.chdir(ROOT)
    result = run_cli(*argv[1:])
    assert result.exit_code == 1, result.stderr  # the sample cluster has problems to find
    assert " ERROR " in result.stdout and "fix:" in result.stdout


def test_the_second_command_is_what_ci_runs() -> None:
    """Every step of the README's test command (virtualenv, install, Go builds, pytest) is a line of .ci/run."""
    _, second = readme_commands()
    steps = second.split(" && ")
    assert steps[0].startswith("python3 -m venv ") and steps[-1] == "python -m pytest -q"
    ci = {line.replace(" -q ", " ").strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()}
    assert [step for step in steps if step not in ci] == []


def test_every_readme_example_on_a_bundled_file_runs() -> None:
    """`$ kubectl win ...` lines that read kubectl_win/examples/ run as shown, from the checkout."""
    import os

    text = (ROOT / "README.md").read_text()
    lines = [line[2:] for block in re.findall(r"```console\n(.*?)```", text, re.S)
             for line in block.splitlines() if line.startswith("$ kubectl win ") and "kubectl_win/examples/" in line]
    assert any(" hns --from-file kubectl_win/examples/" in line for line in lines)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for line in lines:
            argv = shlex.split(line.split("  #")[0])[2:]
            for arg in argv:
                if arg.startswith("kubectl_win/examples/"):
                    assert (ROOT / arg).is_file(), arg
            result = run_cli(*argv)
            assert result.exit_code in (0, 1) and result.stderr == "", (line, result.stderr)
    finally:
        os.chdir(cwd)


def test_readme_example_output_is_what_the_commands_print() -> None:
    """Checked against the real output; `python -m tests.support.readme_examples --update` rewrites stale blocks."""
    from tests.support.readme_examples import differences, examples, real_output

    checked = examples()
    assert {e.command.split()[2] for e in checked} >= {"doctor", "explain"}
    stale = {e.command: differences(e.output, real_output(e.command)) for e in checked}
    assert {command: problems for command, problems in stale.items() if problems} == {}, \
        "run: python -m tests.support.readme_examples --update"


def test_the_readme_checker_catches_a_wrong_order_and_a_wrong_line() -> None:
    from tests.support.readme_examples import differences, updated

    real = ["ERRORS (2)", "ID  OBJECT  MESSAGE", "a   x       first", "b   y       second", "  fix:", "    do it"]
    assert differences(["ERRORS (2)", "...", "b y second", "  fix:"], real) == []
    assert differences(["ID OBJECT MESSAGE", "b y second", "a x first"], real[1:]) == \
        ["not printed here: b y second"]
    assert differences(["a x ... first"], real[2:]) == []
    assert differences(["a x changed"], real) != []
    assert updated(["ID OBJECT MESSAGE", "b y second", "a x old text"], real) == \
        ["ID OBJECT MESSAGE", "a   x       first", "b y second"]
