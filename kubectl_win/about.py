"""Facts about this installation, for `kubectl win version` and bug reports. Reads package
metadata only: the kubernetes client's version is looked up, never imported."""

from __future__ import annotations

import platform
import sys
from typing import IO, Any

from kubectl_win import __version__
from kubectl_win.versions import NEWEST_KNOWN, OLDEST_KNOWN, format_version

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386", "i686": "386"}


def version_info() -> dict[str, Any]:
    return {
        "kubectlWin": __version__,
        "python": platform.python_version(),
        "platform": f"{_os_name()}/{_ARCH.get(platform.machine().lower(), platform.machine().lower())}",
        "build": "frozen" if getattr(sys, "frozen", False) else "python",
        "kubernetesClient": _distribution_version("kubernetes"),
        "knowledge": {"oldest": format_version(OLDEST_KNOWN), "newest": format_version(NEWEST_KNOWN)},
        "updateData": _update_data(),
    }


def _update_data() -> dict[str, str]:
    """How current the Windows update history is: its newest update's day and the day it was last reviewed."""
    from kubectl_win import updates

    return {"updatesTo": updates.updates_to().isoformat(), "reviewed": updates.assembled()}


def render_version(info: dict[str, Any], output: str, out: IO[str]) -> None:
    if output == "json":
        from kubectl_win.output.structured import render_json

        render_json(info, out)
    elif output == "yaml":
        from kubectl_win.output.structured import render_yaml

        render_yaml(info, out)
    else:
        from kubectl_win.output.table import render_rows

        out.write(f"kubectl-win {info['kubectlWin']}\n")
        knowledge = info["knowledge"]
        render_rows([("python", f"{info['python']} ({info['build']}), {info['platform']}"),
                     ("kubernetes client", info["kubernetesClient"] or "not installed"),
                     ("knows Kubernetes", f"{knowledge['oldest']} to {knowledge['newest']}"),
                     ("Windows update data", f"Microsoft's updates to {info['updateData']['updatesTo']} (reviewed "
                                             f"{info['updateData']['reviewed']})")], out, indent="  ")


def _os_name() -> str:
    return {"win32": "windows", "darwin": "darwin"}.get(sys.platform, sys.platform.rstrip("0123456789") or "linux")


def _distribution_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
