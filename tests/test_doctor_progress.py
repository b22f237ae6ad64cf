"""doctor's progress line: on a terminal (a real pty) only, never piped or under CI, and --progress overrides."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

import pytest

from kubectl_win.doctor.render.progress import Progress, wanted
from tests.conftest import ApiServerHandle
from tests.support.paths import ROOT, SAMPLE_DUMP


def seed_sample(apiserver: ApiServerHandle) -> None:
    for item in json.loads(SAMPLE_DUMP.read_text())["items"]:
        apiserver.put(item)


def run_doctor(apiserver: ApiServerHandle, *args: str, tty: bool, ci: bool, columns: int = 0) -> tuple[int, str, str]:
    """Run the plugin as a user would, stderr on a pseudo-terminal (tty=True) or a pipe; (code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "kubectl_win", "doctor", "--kubeconfig", str(apiserver.kubeconfig),
               "-o", "json", *args]
    if not tty:
        done = subprocess.run(command, env=env, capture_output=True, timeout=120)  # bytes: keep the \r
        return done.returncode, done.stdout.decode(), done.stderr.decode()
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = b""
    out_chunks = []
    assert process.stdout is not None
    streams = {master, process.stdout.fileno()}
    while streams:
        ready, _, _ = select.select(list(streams), [], [], 60)
        assert ready, "doctor hung"
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty's other side closed
                chunk = b""
            if not chunk:
                streams.discard(fd)
            elif fd == master:
                err += chunk
            else:
                out_chunks.append(chunk)
    os.close(master)
    return process.wait(timeout=60), b"".join(out_chunks).decode(), err.decode()


def test_progress_on_a_terminal_counts_pages_objects_and_time(apiserver: ApiServerHandle) -> None:
    seed_sample(apiserver)
    apiserver.faults.delay("/api/v1/pods", 1.2, count=1)  # a slow page: the elapsed time keeps moving
    code, out, err = run_doctor(apiserver, tty=True, ci=False)
    assert code == 1
    assert json.loads(out)["summary"]["podsScanned"] == 26  # stdout carries only the report
    assert "\rreading nodes: 1 page fetched, 6 objects read, " in err
    assert "reading pods: " in err and "objects read" in err
    pods = [re.match(r"reading pods: (\d+) pages fetched, (\d+) objects read", line)
            for line in err.split("\r") if line.startswith("reading pods")]
    assert pods and all(pods)
    assert int(pods[-1].group(1)) >= 2 and int(pods[-1].group(2)) >= 6 + 26  # the nodes and the pods, at least
    times = [float(line.rsplit(", ", 1)[1].split("s")[0]) for line in err.split("\r") if line.startswith("reading")]
    assert max(times) >= 1.0  # redrawn while the slow page was on its way
    assert err.endswith("\r\x1b[K")  # the line is erased when the scan ends


def test_progress_line_never_wraps_on_a_narrow_terminal(apiserver: ApiServerHandle) -> None:
    seed_sample(apiserver)
    code, _, err = run_doctor(apiserver, tty=True, ci=False, columns=40)
    assert code == 1
    lines = [line.removesuffix("\x1b[K") for line in err.split("\r") if line.strip("\x1b[K")]
    assert lines and all(len(line) <= 39 for line in lines)
    assert any(line.startswith("reading pods: ") for line in lines)


@pytest.mark.parametrize("tty, ci, flag", [
    (False, False, ()),                       # piped
    (True, True, ()),                         # a terminal, but CI
    (True, False, ("--progress", "never")),
])
def test_no_progress_when_piped_in_ci_or_asked_not_to(apiserver: ApiServerHandle, tty: bool, ci: bool,
                                                       flag: tuple[str, ...]) -> None:
    seed_sample(apiserver)
    code, out, err = run_doctor(apiserver, *flag, tty=tty, ci=ci)
    assert code == 1
    assert json.loads(out)["schemaVersion"] == "kubectl-win/v1"
    assert err == ""


def test_progress_always_shows_even_when_piped(apiserver: ApiServerHandle) -> None:
    seed_sample(apiserver)
    code, _, err = run_doctor(apiserver, "--progress", "always", tty=False, ci=True)
    assert code == 1
    assert "reading events: " in err and err.endswith("\r\x1b[K")


def test_bad_progress_value_is_a_usage_error(apiserver: ApiServerHandle) -> None:
    code, out, err = run_doctor(apiserver, "--progress", "sometimes", tty=False, ci=False)
    assert (code, out) == (2, "")
    assert err.startswith("error: --progress: invalid choice: 'sometimes' (choose from auto, always, never)")


def test_wanted_follows_mode_terminal_and_ci() -> None:
    assert wanted("auto", True, {}) is True
    assert wanted("auto", False, {}) is False
    assert wanted("auto", True, {"CI": "true"}) is False
    assert wanted("auto", True, {"CI": "false"}) is True
    assert wanted("always", False, {"CI": "1"}) is True
    assert wanted("never", True, {}) is False


def test_progress_line_counts() -> None:
    now = [100.0]
    stream = io.StringIO()
    progress = Progress(stream, clock=lambda: now[0])
    progress("nodes", 6)
    progress("pods", 500)
    now[0] = 102.5
    progress("pods", 1000)
    assert progress.line() == "reading pods: 3 pages fetched, 1,006 objects read, 2.5s"
    progress.stop()
    assert stream.getvalue().endswith("\r\x1b[K")
