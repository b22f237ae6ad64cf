"""Shared by the completion tests: put kubectl-win and kubectl_complete-win on a PATH of our own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.paths import ROOT


def make_bin(directory: Path) -> Path:
    """Wrappers that run this checkout with this interpreter, installed or not."""
    directory.mkdir(parents=True, exist_ok=True)
    programs = {"kubectl-win": "kubectl_win", "kubectl_complete-win": "kubectl_win.completion.protocol"}
    for name, module in programs.items():
        path = directory / name
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n', encoding="utf-8")
        path.chmod(0o755)
    return directory


def shell_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def values(stdout: str) -> list[str]:
    """Candidate values from protocol output (without descriptions and the directive line)."""
    lines = [line for line in stdout.splitlines() if line]
    return [line.split("\t", 1)[0] for line in lines if not line.startswith(":")]


def directive(stdout: str) -> int:
    last = [line for line in stdout.splitlines() if line][-1]
    assert last.startswith(":"), f"no directive line in {stdout!r}"
    return int(last[1:])
