"""Tables through tabulate, laid out the way kubectl lays them out."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

from kubectl_win.output.table import RESET, SEVERITY_COLOURS, render_rows, render_table
from tests.support.paths import ROOT


def test_headers_upper_case_three_spaces_apart_nothing_padded_at_the_end():
    out = io.StringIO()
    render_table(["name", "ready", "taints"], [["win-1", True, None], ["a-much-longer-name", False, "os=windows"]], out)
    assert out.getvalue() == ("NAME                 READY   TAINTS\n"
                              "win-1                True    <none>\n"
                              "a-much-longer-name   False   os=windows\n")


def test_numbers_stay_text_and_left_aligned():
    out = io.StringIO()
    render_table(["build", "n"], [["10.0.17763", "7"], ["10.0.20348", "12345"]], out)
    assert out.getvalue().splitlines()[1:] == ["10.0.17763   7", "10.0.20348   12345"]


def test_colour_does_not_move_the_columns():
    plain, coloured = io.StringIO(), io.StringIO()
    rows = [["a", "error", "x"], ["bbbb", "warning", "y"]]
    render_table(["id", "severity", "message"], rows, plain, colour_column=1, colour=False)
    render_table(["id", "severity", "message"], rows, coloured, colour_column=1, colour=True)
    assert SEVERITY_COLOURS["error"] + "error" + RESET in coloured.getvalue()
    stripped = coloured.getvalue()
    for code in (*SEVERITY_COLOURS.values(), RESET):
        stripped = stripped.replace(code, "")
    assert stripped == plain.getvalue()


def test_label_rows_keep_continuation_lines_under_the_value():
    out = io.StringIO()
    render_rows([("FIELD", "spec.hostPID"), ("INSTEAD", "first line"), ("", "second line")], out, indent="  ")
    assert out.getvalue() == "  FIELD    spec.hostPID\n  INSTEAD  first line\n           second line\n"


def test_a_table_leaves_importlib_metadata_to_whoever_needs_it():
    code = textwrap.dedent("""\
        import contextlib, io, sys
        from kubectl_win.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            main(["explain", "--list"])
        assert "ID " in out.getvalue()
        print("importlib.metadata" in sys.modules)
        from importlib.metadata import version
        print(version("tabulate") == sys.modules["tabulate"].__version__ or "real metadata works")
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.split("\n")[:2] == ["False", "real metadata works"]


def test_counts_read_as_english():
    from kubectl_win.output.words import counted, severity_counts

    assert severity_counts(1, 0, 0) == "1 error, 0 warnings, 0 info"
    assert severity_counts(2, 1, 1) == "2 errors, 1 warning, 1 info"
    assert counted(1, "node") == "1 node" and counted(3, "pod") == "3 pods"
