"""Capped input: the text of the files, directories and stdin a user names, read with a size limit and in any
encoding Windows tools write (UTF-8, UTF-16/32 with a byte-order mark); binary and endless inputs refused."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO

MAX_FILE_BYTES = 64 * 1024 * 1024


MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(slots=True)
class Problem:
    """Something in the input that could not be used: an unreadable file, or a skipped document."""

    source: str
    message: str
    line: int | None = None
    fatal: bool = False  # the input could not be read (exit 2), as opposed to a skipped document

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.message}"


def iter_sources(paths: Iterable[str]) -> Iterator[str]:
    """Expand directories (recursively, manifest suffixes only, hidden entries skipped) in a stable order.

    Symlinked sub-directories are followed, each real directory once (a link loop ends there); FIFOs,
    sockets and devices inside a directory are passed over (opening a FIFO waits for a writer forever).
    A path named on the command line is used as it is: `-f <(kubectl get ...)` is a pipe."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        yield from _walk(path)


def _walk(top: str) -> Iterator[str]:
    import stat

    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(top, followlinks=True):
        try:
            info = os.stat(root)
        except OSError:
            dirs[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.lower().endswith(MANIFEST_SUFFIXES) or name.startswith("."):
                continue
            full = os.path.join(root, name)
            try:
                mode = os.stat(full).st_mode
            except OSError:
                yield full  # a dangling link: reading it says why
                continue
            if stat.S_ISREG(mode):
                yield full


def read_text(source: str, stdin: IO[str] | None = None, limit: int | None = None) -> str | Problem:
    """The text of one source, or a fatal Problem saying why it cannot be read."""
    limit = MAX_FILE_BYTES if limit is None else limit
    if source == "-":
        import sys

        stream = stdin or sys.stdin
        try:
            binary = getattr(stream, "buffer", None)
            data: bytes | str = read_stream(binary, limit) if binary is not None else stream.read(limit + 1)
        except (OSError, UnicodeDecodeError) as exc:
            return Problem("<stdin>", f"cannot read standard input: {one_line(exc)}", fatal=True)
        if len(data) > limit:
            return Problem("<stdin>", f"standard input is larger than {_size(limit)}", fatal=True)
        return decode_text(data, "<stdin>") if isinstance(data, bytes) else data
    try:
        raw = read_capped(source, limit)
    except FileNotFoundError:
        return Problem(source, "no such file or directory", fatal=True)
    except IsADirectoryError:
        return Problem(source, "is a directory", fatal=True)
    except TooLarge as exc:
        return Problem(source, str(exc), fatal=True)
    except OSError as exc:
        return Problem(source, f"cannot read: {exc.strerror or one_line(exc)}", fatal=True)
    return decode_text(raw, source)


_SNIFF_BYTES = 8192  # what decode_text looks at to tell binary from text


class TooLarge(OSError):
    """An input over the size limit (a huge file, or an endless one such as /dev/zero)."""


def read_capped(path: str, limit: int) -> bytes:
    """A file's bytes, reading at most `limit` + 1: a regular file's size is checked first, and a device
    or pipe that never ends (/dev/zero) stops at the limit instead of filling memory."""
    import stat

    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise TooLarge(f"file is too large ({_size(info.st_size)}; the limit is {_size(limit)})")
        raw = read_stream(handle, limit)
    if len(raw) > limit:
        raise TooLarge(f"input is larger than {_size(limit)} (an endless file?)")
    return raw


def read_stream(handle: IO[bytes], limit: int) -> bytes:
    """At most `limit` + 1 bytes (more than `limit` means too large); binary input (/dev/zero, an image)
    stops after its first block, which is all decode_text needs to say so."""
    raw = handle.read(min(limit + 1, _SNIFF_BYTES))
    if b"\x00" in raw and not raw.startswith(tuple(bom for bom, _ in _BOMS)):
        return raw
    while len(raw) <= limit:
        chunk = handle.read(limit + 1 - len(raw))
        if not chunk:
            break
        raw += chunk
    return raw


def _size(count: int) -> str:
    return f"{count / (1024 * 1024 * 1024):.1f} GiB" if count >= 1024 ** 3 else f"{count // (1024 * 1024)} MiB"


# Windows PowerShell 5.1 writes `kubectl get ... > file.yaml` as UTF-16 with a byte-order mark.
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"))


def encoding_of(head: bytes) -> str:
    """The encoding a file's first bytes say by their byte-order mark (UTF-32, UTF-16, UTF-8); UTF-8 without one.
    For readers that stream a file instead of decoding it whole (decode_text)."""
    return next((name for bom, name in _BOMS if head.startswith(bom)), "utf-8-sig")


def read_input_text(path: str, what: str, limit: int | None = None) -> str:
    """A whole file a user named (a dump, say) as text, in any encoding decode_text reads; an InputError
    naming `what` ("dump", "HNS dump") when it is missing, a directory, unreadable, binary or over `limit`."""
    from kubectl_win.errors import InputError

    try:
        raw = read_capped(path, MAX_FILE_BYTES if limit is None else limit)
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a {what} file") from None
    except TooLarge as exc:
        raise InputError(f"cannot read {what} {path}: {exc}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {' '.join(str(exc).split())}") from None
    text = decode_text(raw, path)  # also UTF-16, as Windows PowerShell 5.1 writes `... > dump.json`
    if isinstance(text, Problem):
        raise InputError(f"cannot read {what} {text}")
    return text


def decode_text(raw: bytes, source: str) -> str | Problem:
    """UTF-8 (with or without BOM), or UTF-16/32 with a BOM; a fatal Problem for binary or other encodings."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as exc:
                return Problem(source, f"not valid {encoding.upper()} text (byte {exc.start})", fatal=True)
    if b"\x00" in raw[:8192]:
        return Problem(source, "binary file, not YAML or JSON", fatal=True)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Problem(source, f"not UTF-8 text (byte {exc.start})", fatal=True)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
