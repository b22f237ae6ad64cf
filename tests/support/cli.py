"""Run the real entry point in-process and capture what a user would see."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from typing import Any

from kubectl_win.cli import main


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, stdin: str = "") -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(list(args))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return CliResult(code, out.getvalue(), err.getvalue())


def client_modules_loaded(*args: str) -> tuple[int, list[str]]:
    """Run the command in a fresh interpreter: its exit code and which of the Kubernetes client's packages it
    imported (an offline command must import none)."""
    import subprocess

    from tests.support.paths import ROOT

    code = ("import contextlib, io, sys\nfrom kubectl_win.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = main({list(args)!r})\n"
            "print(code, ' '.join(sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'urllib3', "
            "'aiohttp'})))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    first = result.stdout.split("\n")[0].split(" ", 1)
    assert first[0].lstrip("-").isdigit(), result.stdout + result.stderr
    return int(first[0]), first[1].split() if len(first) > 1 else []
