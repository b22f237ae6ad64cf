"""Run one child process for a benchmark and measure it: wall time, CPU time and peak RSS."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class ChildRun:
    wall: float  # seconds
    cpu: float  # user + system seconds
    rss_mib: float  # peak resident set size
    exit_code: int
    stderr: str


def run_child(argv: list[str], env: dict[str, str], ok_codes: tuple[int, ...] = (0,)) -> ChildRun:
    """Run argv with stdout to /dev/null; exit with its stderr when its exit code is not in ok_codes."""
    with open(os.devnull, "w") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=devnull, stderr=subprocess.PIPE, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in ok_codes:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed with {code}: {err.strip()[-1000:]}")
    return ChildRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code, err)
