"""explain and doctor on a real terminal (a pty of a given width) and piped: fitted, grouped, folded."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_win.output.table import render_table
from tests.support.paths import ROOT, SAMPLE_DUMP
from tests.support.tools import require_corpus

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(args: list[str], columns: int | None, cwd: Path = ROOT) -> tuple[int, str]:
    """kubectl-win with stdout on a pty `columns` wide (None: piped); (exit code, stdout without colour)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR")}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "kubectl_win", *args]
    if columns is None:
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
        return done.returncode, done.stdout
    env["COLUMNS"] = str(columns)
    master, slave = pty.openpty()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=slave, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    return process.wait(timeout=60), ANSI.sub("", text)


def widest(text: str) -> int:
    """The widest line of prose: fix commands stay whole however wide (commands(text) checks them)."""
    return max(len(line) for line in text.splitlines() if not line.lstrip().startswith("kubectl "))


def commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith("kubectl ")]


def test_fix_commands_are_never_wrapped_on_a_terminal() -> None:
    # Pasted, a wrapped `kubectl patch ... --type merge` runs without its -p: commands stay one line.
    _, narrow = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], 60)
    _, piped = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], None)
    patch = ("kubectl patch daemonset node-exporter -n monitoring --type merge -p "
             "'{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"kubernetes.io/os\":\"linux\"}}}}}'")
    assert patch in commands(narrow) and patch in commands(piped)
    assert set(commands(narrow)) <= set(commands(piped))  # (a folded check lists objects, -o wide their fixes)


@pytest.fixture(scope="module")
def corpus() -> Path:
    return require_corpus()


@pytest.mark.parametrize("columns", [80, 120])
def test_explain_on_a_terminal_fits_groups_and_folds(corpus: Path, columns: int) -> None:
    code, out = run(["explain", "-f", str(corpus)], columns, cwd=corpus.parent)
    piped_code, piped = run(["explain", "-f", str(corpus)], None)
    assert code == piped_code == 1
    assert widest(out) <= columns
    assert widest(piped) > 200  # piped output keeps its one-line-per-finding table
    assert piped.startswith("LOCATION ")
    folded = re.search(r"^WARNING  windows-memory-limit-missing on (\d+) objects(?: \(\d+ findings\))?: ", out, re.M)
    assert folded and int(folded.group(1)) >= 20
    assert out.count("windows-memory-limit-missing") == 1
    # file locations relative to the working directory, as the user would type them
    assert f"{corpus.name}/aws-ebs-csi-driver__examples-windows.yaml" in out and str(corpus) not in out
    # errors first: no object block with an error comes after one without
    severities = [line.split()[0] for line in out.splitlines() if re.match(r"^  (ERROR|WARNING|INFO) ", line)]
    assert severities[0] == "ERROR"
    assert re.match(r"\d+ errors?, \d+ warnings?, \d+ info in ", out.rstrip().split("\n\n")[-1])  # summary, last


def test_explain_wide_on_a_terminal_unfolds_and_shows_fixes(corpus: Path) -> None:
    code, out = run(["explain", "-f", str(corpus), "-o", "wide"], 100, cwd=corpus.parent)
    assert code == 1
    assert widest(out) <= 100
    assert " on " not in "".join(line for line in out.splitlines() if line.startswith("WARNING"))
    assert out.count("windows-memory-limit-missing") >= 20
    assert "fix: " in out


def test_explain_json_is_the_same_on_a_terminal(corpus: Path) -> None:
    tty_code, tty = run(["explain", "-f", str(corpus), "-o", "json"], 80)
    piped_code, piped = run(["explain", "-f", str(corpus), "-o", "json"], None)
    assert (tty_code, tty) == (piped_code, piped)


def test_doctor_on_a_narrow_terminal(tmp_path: Path) -> None:
    code, out = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], 70)
    assert code == 1
    assert widest(out) <= 70
    blocks = out.split("\n\n")
    worst = [("ERROR" in b) for b in blocks[:-1]]
    assert worst == sorted(worst, reverse=True)  # every block with an error comes first
    assert ("WARNING windows-memory-limit-missing on 3 objects: A Windows workload has no memory limit"
            in " ".join(out.split()))
    assert "fix:\n" in out and "kubectl taint nodes win22-1 os=windows:NoSchedule" in commands(out)
    assert out.rstrip().splitlines()[-1].startswith("12 errors, 14 warnings, 2 info;")


def _folded(text: str, check: str) -> str:
    return next(block for block in text.split("\n\n") if block.startswith(f"WARNING  {check} on "))


def test_a_folded_check_shows_its_fix_an_example_and_how_to_unfold_it() -> None:
    """`windows-updates-behind on 3 objects` listed the nodes and nothing else: not how far behind, not what to do."""
    _, out = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], 120)
    block = _folded(out, "windows-updates-behind")
    lines = block.splitlines()
    assert lines[:4] == [
        "WARNING  windows-updates-behind on 3 objects: A Windows node is several monthly updates behind",
        "  Node/win19-0", "  Node/win22-0", "  Node/win22-1"]
    assert "monthly updates behind the newest known" in block and lines[4].startswith("  e.g. Node win19-0 runs ")
    assert "  fix for Node/win19-0 (the others: alike):" in lines
    assert "    kubectl cordon win19-0" in lines and "    kubectl drain win19-0 --ignore-daemonsets " \
        "--delete-emptydir-data" in lines
    assert lines[-1] == "  -o wide unfolds this: each of the 3 findings with its message and fix"
    _, unfolded = run(["doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "wide"], 120)
    assert "windows-updates-behind on" not in unfolded and unfolded.count("windows-updates-behind ") == 3


@pytest.mark.parametrize("columns", [70, 120])
def test_piped_doctor_output_is_what_the_terminal_showed(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pasted into a ticket, `kubectl win doctor > out.txt` reads as the terminal did (COLUMNS wide; 120 unset)."""
    _, tty = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], columns)
    monkeypatch.setenv("COLUMNS", str(columns))
    _, piped = run(["doctor", "--from-dump", str(SAMPLE_DUMP)], None)
    assert piped == tty
    assert "fix for Node/win19-0 (the others: alike):" in piped


def test_doctor_nodes_fit_the_terminal_as_a_table_or_as_records() -> None:
    # 160 columns: the patch columns (revision, update, behind) made the table wider than 130 can hold.
    _, wide_terminal = run(["doctor", "nodes", "--from-dump", str(SAMPLE_DUMP)], 160)
    assert wide_terminal.startswith("NAME      READY   OS-IMAGE ")
    assert widest(wide_terminal) <= 160
    _, narrow = run(["doctor", "nodes", "--from-dump", str(SAMPLE_DUMP)], 60)
    assert narrow.startswith("NAME         win19-0\nREADY        Ready\nOS-IMAGE     Windows Server 2019 Datacenter\n")
    assert widest(narrow) <= 60


def test_render_table_wraps_the_widest_column_between_words() -> None:
    out = io.StringIO()
    render_table(["id", "message"], [["a-check", "word " * 30], ["b", "short"]], out, width=40)
    lines = out.getvalue().splitlines()
    assert lines[0] == "ID        MESSAGE"
    assert lines[1].startswith("a-check   word word") and lines[2].startswith("          word")
    assert all(len(line) <= 40 for line in lines)
    assert "b         short" in lines


def test_hns_on_a_narrow_terminal_fits_like_doctor(tmp_path: Path) -> None:
    import json

    from tests.test_hns import SCENARIOS

    dump, items = dict((s.name, s) for s in SCENARIOS)["missing load balancer"].build()
    (tmp_path / "hns.json").write_text(json.dumps(dump))
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": items}))
    args = ["hns", "--from-file", str(tmp_path / "hns.json"), "--cluster-from-dump", str(tmp_path / "cluster.json")]
    code, text = run(args, 60)
    assert code == 1
    assert widest(text) <= 60, text
    assert "hns-missing-loadbalancer" in text and "1 error," in text and "1 errors" not in text
    code, piped = run(args, None)
    assert code == 1 and "ERRORS (1)" in piped and "  fix:" in piped


def test_names_and_messages_from_a_cluster_reach_the_terminal_with_control_characters_escaped(tmp_path):
    """The hostile dump's node name holds a bell, an escape sequence, a NUL and bidirectional overrides."""
    from tests.support.html_reports import hostile_dump

    code, out = run(["doctor", "--from-dump", str(hostile_dump(tmp_path)), "-o", "wide"], None)
    assert code == 1
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", out), "a raw control character"
    assert "\\u202ewin19-0\\u200f\\x07\\x1b[31m\\x00" in out
