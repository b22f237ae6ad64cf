"""Put a `kubectl-win` executable on PATH that runs this checkout, as an installed plugin would."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from tests.support.paths import ROOT


def install_shim(directory: Path) -> Path:
    """Write directory/kubectl-win (a console-script-like launcher for this checkout) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    shim = directory / "kubectl-win"
    shim.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from kubectl_win.__main__ import main\nmain()\n"
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return shim


def path_with(directory: Path) -> str:
    return f"{directory}{os.pathsep}{os.environ.get('PATH', '')}"
