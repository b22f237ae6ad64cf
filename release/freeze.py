"""Freeze kubectl-win with PyInstaller (one-dir: no unpacking on every TAB, fewer AV false alarms).

PyInstaller cannot cross-compile: this builds for the machine it runs on. CI runs it once per
OS/arch on native runners (.github/workflows/release.yml).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Optional imports of our dependencies that the program never takes (they only bloat the bundle
# when the build environment happens to have them installed).
EXCLUDED = ("tkinter", "IPython", "jedi", "numpy", "pandas", "matplotlib", "PIL", "pytest", "_pytest",
            "setuptools", "pkg_resources", "docutils", "pygments", "sqlite3", "lib2to3", "pydoc_data",
            "hypothesis", "rich", "markdown_it")


def freeze(work_dir: Path) -> Path:
    """Build into work_dir and return the one-dir folder (holding kubectl-win[.exe] and _internal/)."""
    dist, work = work_dir / "dist", work_dir / "work"
    command = [
        sys.executable, "-m", "PyInstaller", "--onedir", "--name", "kubectl-win", "--noconfirm", "--clean",
        "--log-level", "WARN", "--distpath", str(dist), "--workpath", str(work), "--specpath", str(work_dir),
        "--paths", str(ROOT),
        # Commands are imported by name from kubectl_win.commands.COMMANDS, which static analysis can't see.
        "--collect-submodules", "kubectl_win",
        "--collect-data", "kubectl_win",
        "--copy-metadata", "kubernetes",  # `kubectl win version` reports the client's version
        *(arg for module in EXCLUDED for arg in ("--exclude-module", module)),
        str(ROOT / "release" / "entry.py"),
    ]
    subprocess.run(command, check=True, cwd=ROOT)
    return dist / "kubectl-win"
