"""Atomic file writes that never replace an existing file unless asked to.

A file is written to a temporary name in the target's folder, flushed to disk, then moved into place:
with os.replace when replacing is allowed, with os.link otherwise (link fails if the target exists, so
a file that appears between our check and our write is still never overwritten).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence

from kubectl_win.errors import InputError, UsageError


def write_files(files: Sequence[tuple[str, str]], force: bool = False) -> list[str]:
    """Write (path, text) pairs; all or nothing as far as the checks go. Returns the paths written."""
    if not force:
        existing = [p for p, _ in files if os.path.lexists(p)]
        if existing:
            raise UsageError(f"{existing[0]} already exists (use --force to overwrite)")
    written: list[str] = []
    created: list[str] = []
    try:
        for path, text in files:
            existed = os.path.lexists(path)
            write_atomic(path, text, replace=force)
            written.append(path)
            if not existed:
                created.append(path)
    except BaseException:
        # Leave the folder as we found it: remove what this run created (replaced files stay replaced).
        for path in created:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    return written


def write_atomic(path: str, text: str, replace: bool) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        _keep_mode(path, tmp)
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UsageError(f"{path} already exists (use --force to overwrite)") from None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _sync_folder(folder)


def check_folder(folder: str, what: str = "output folder") -> None:
    """Before any work, without creating anything: `folder` is a folder files can be written in, or can be
    made in one that exists."""
    from kubectl_win.sharefile import check_writable

    existing = os.path.abspath(folder)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(f"{what} {folder}: {existing} is not a directory")
    check_writable(existing, f"{what} {folder}")


def ensure_folder(folder: str, what: str = "output folder") -> None:
    """Make `folder` (named `what` in errors) unless it exists."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{what} {folder}: not a directory")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what} {folder}: cannot create it: {exc.strerror or exc}") from None
    from kubectl_win.sharefile import check_writable

    check_writable(folder, f"{what} {folder}")


def _keep_mode(path: str, tmp: str) -> None:
    # mkstemp creates 0600 files; a replaced file keeps its mode, a new one gets the usual umask mode.
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)


def _sync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
