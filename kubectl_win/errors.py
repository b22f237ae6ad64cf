"""Typed errors carrying an exit code; `cli` turns them into one `error: ...` line."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FINDINGS = 1  # something at or above --fail-on
    USAGE = 2  # bad flags or unreadable input
    UNREACHABLE = 3  # the cluster could not be reached
    INTERNAL = 4  # a bug in kubectl-win
    INCOMPLETE = 5  # doctor could not read what it needs to judge (the nodes): never a clean pass
    INTERRUPTED = 130


class KubectlWinError(Exception):
    """An error the user should see as one line, with the exit code it implies."""

    exit_code: int = ExitStatus.USAGE

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(KubectlWinError):
    exit_code = ExitStatus.USAGE


class InputError(KubectlWinError):
    """A file, dump or other input could not be read."""

    exit_code = ExitStatus.USAGE


class ClusterUnreachable(KubectlWinError):
    exit_code = ExitStatus.UNREACHABLE
