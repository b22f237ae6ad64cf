"""Files written for sharing (a doctor dump, an HTML report, a support bundle): checked before any work
starts, then written private and whole.

- `check_target` runs before the scan: a directory, a missing folder, a folder that cannot be written in,
  an existing file without --force, or the same file as an input (compared by real path, so
  `--from-dump big.json --save-dump ./big.json` and a symlink to the input are caught) each end in one
  line and exit 2, before a cluster is read.
- `SharedFile` writes to a `mkstemp` name in the target's folder (unpredictable, created exclusively,
  so no symlink planted there is followed), mode 0600 (the content describes a cluster), flushed to
  disk, then moved into place: `os.replace` with --force, `os.link` otherwise (fails if the target
  appeared meanwhile, so an existing file is never replaced without --force). Nothing is left behind
  when the run fails.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from types import TracebackType
from typing import IO, Any

from kubectl_win.errors import InputError, UsageError

PRIVATE_MODE = 0o600


def same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: by real path (symlinks, `./`, `..`), or by inode when both exist."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def check_target(path: str, flag: str, *, force: bool = False, inputs: Iterable[tuple[str, str]] = ()) -> None:
    """Refuse an output path before any work is done. `inputs` are (flag, path) pairs it must differ from."""
    for input_flag, input_path in inputs:
        if input_path and input_path != "-" and same_file(path, input_path):
            raise UsageError(f"{flag} {path} is the same file as {input_flag} {input_path}; name another file")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory (name a file in it)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: folder {folder} does not exist")
    if os.path.lexists(path) and not force:
        raise UsageError(f"{path} already exists (use --force to overwrite)")
    check_writable(folder, f"{flag} {path}")


def check_writable(folder: str, what: str) -> None:
    """Refuse a folder no file can be written in, by writing one (a temporary file, removed at once): the
    permission bits do not tell (root, ACLs, a read-only mount, a quota)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".kubectl-win-probe.", dir=folder)
    except OSError as exc:
        raise UsageError(f"{what}: cannot write in {folder}: {exc.strerror or exc}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


class SharedFile:
    """A text file written in pieces and published whole by `commit`; `abort` (or an exception inside
    `with`) removes the temporary file and leaves the target as it was."""

    def __init__(self, path: str, *, force: bool = False, what: str = "file", binary: bool = False) -> None:
        self.path = path
        self.force = force
        self.what = what
        folder = os.path.dirname(os.path.abspath(path))
        try:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise InputError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
        with contextlib.suppress(AttributeError, OSError):  # mkstemp's mode already; said, not assumed
            os.fchmod(fd, PRIVATE_MODE)
        self._out: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        self._done = False

    @property
    def handle(self) -> IO[Any]:
        """The open temporary file, for writers that take a file object (tarfile, say)."""
        return self._out

    def write(self, text: str | bytes) -> None:
        try:
            self._out.write(text)
        except OSError as exc:
            self.abort()
            raise InputError(f"cannot write {self.what} {self.path}: {exc.strerror or exc}") from None

    def commit(self) -> None:
        try:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            if self.force:
                os.replace(self._tmp, self.path)
            else:
                try:
                    os.link(self._tmp, self.path)
                except FileExistsError:
                    raise UsageError(f"{self.path} already exists (use --force to overwrite)") from None
                except OSError:  # a file system without hard links: check, then rename (a small window)
                    if os.path.lexists(self.path):
                        raise UsageError(f"{self.path} already exists (use --force to overwrite)") from None
                    os.replace(self._tmp, self.path)
        except OSError as exc:
            raise InputError(f"cannot write {self.what} {self.path}: {exc.strerror or exc}") from None
        finally:
            self._done = True
            self._remove_tmp()
        _sync_folder(os.path.dirname(os.path.abspath(self.path)))

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        with contextlib.suppress(OSError):
            self._out.close()
        self._remove_tmp()

    def _remove_tmp(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)

    def __enter__(self) -> SharedFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def write_shared(path: str, text: str, *, force: bool = False, what: str = "file") -> None:
    """Write a whole file for sharing (0600, atomic, never over an existing file without force)."""
    with SharedFile(path, force=force, what=what) as out:
        out.write(text)


def _sync_folder(folder: str) -> None:
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
