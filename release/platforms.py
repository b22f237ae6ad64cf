"""The os/arch pairs krew knows, and how our archives for them are named."""

from __future__ import annotations

import platform
import sys

# krew's supported pairs (cmd/validate-krew-manifest); a selector must match at least one.
KREW_PLATFORMS = (
    ("windows", "386"), ("windows", "amd64"), ("windows", "arm64"),
    ("linux", "386"), ("linux", "amd64"), ("linux", "arm"), ("linux", "arm64"), ("linux", "ppc64le"),
    ("darwin", "386"), ("darwin", "amd64"), ("darwin", "arm64"),
)

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def current() -> tuple[str, str]:
    os_name = {"win32": "windows", "darwin": "darwin"}.get(sys.platform, "linux")
    return os_name, _ARCH.get(platform.machine().lower(), platform.machine().lower())


def archive_name(version: str, os_name: str, arch: str) -> str:
    extension = "zip" if os_name == "windows" else "tar.gz"
    return f"kubectl-win_{version}_{os_name}_{arch}.{extension}"


def bin_path(os_name: str) -> str:
    """The executable inside the archive; krew links it as kubectl-<name>[.exe]."""
    return "kubectl-win/kubectl-win.exe" if os_name == "windows" else "kubectl-win/kubectl-win"
