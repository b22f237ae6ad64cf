"""The process environment a command runs in, built at call time (never at import)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO


@dataclass(slots=True)
class Env:
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    stdin: IO[str] = field(default_factory=lambda: sys.stdin)
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    color: bool = False
    is_windows: bool = False
    debug: bool = False
    # The shell fix commands are quoted for (kubectl_win.shells): --shell, else detected on Windows.
    shell: str = "posix"

    @classmethod
    def from_process(cls, debug: bool = False, no_color: bool = False, shell: str | None = None) -> Env:
        from kubectl_win.shells import resolve_shell

        out_tty = _isatty(sys.stdout)
        color = out_tty and not no_color and "NO_COLOR" not in os.environ
        if color and os.name == "nt":
            from kubectl_win.console import colours_allowed

            color = colours_allowed(sys.stdout)  # legacy conhost would show the escape codes
        return cls(
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdin=sys.stdin,
            stdout_isatty=out_tty,
            stderr_isatty=_isatty(sys.stderr),
            color=color,
            is_windows=os.name == "nt",
            debug=debug,
            shell=resolve_shell(shell),
        )

    def warn(self, message: str) -> None:
        print(f"warning: {message}", file=self.stderr)


def kubeconfig_candidates(explicit: str | None) -> list[Path]:
    """Where kubectl reads kubeconfig from: --kubeconfig, else each file in $KUBECONFIG
    (os.pathsep-separated), else ~/.kube/config. Whether they exist is the caller's business."""
    from pathlib import Path

    if explicit:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(part).expanduser() for part in env.split(os.pathsep) if part]
    return [Path.home() / ".kube" / "config"]


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
