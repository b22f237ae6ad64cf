"""Pack a frozen one-dir build into the archive krew downloads: regular files and directories only.

krew's tar extractor refuses symlinks ("unable to handle file type"), so links are followed
(dereferenced) when packing. Entries are sorted and stamped with one time so that the same
input gives the same bytes, and the same sha256.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import time
import zipfile
from pathlib import Path

LICENSE_NAMES = ("license", "license.txt", "license.md", "copying", "copying.txt")


def pack(frozen_dir: Path, license_file: Path, out: Path, mtime: int | None = None) -> Path:
    """Write `out` (.tar.gz or .zip) holding `kubectl-win/...` from frozen_dir plus LICENSE at the top."""
    stamp = int(os.environ.get("SOURCE_DATE_EPOCH", mtime if mtime is not None else time.time()))
    entries = [("LICENSE", license_file)]
    for path in _walk(frozen_dir):
        entries.append((f"kubectl-win/{path.relative_to(frozen_dir).as_posix()}", path))
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.name.endswith(".zip"):
        _write_zip(entries, out, stamp)
    else:
        _write_tar(entries, out, stamp)
    return out


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def problems(archive: Path, bin_path: str) -> list[str]:
    """What krew would trip over: links or special files, no LICENSE, no executable `bin`."""
    found: list[str] = []
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as bundle:
            names = bundle.namelist()
            for info in bundle.infolist():
                if stat.S_ISLNK(info.external_attr >> 16):
                    found.append(f"symlink in archive: {info.filename}")
    else:
        with tarfile.open(archive, "r:gz") as bundle:
            members = bundle.getmembers()
            names = [member.name for member in members]
            for member in members:
                if not (member.isfile() or member.isdir()):
                    found.append(f"not a regular file or directory: {member.name} (type {member.type!r})")
                if member.name == bin_path and not member.mode & 0o111:
                    found.append(f"{bin_path} is not executable")
    if not any(name.lower() in LICENSE_NAMES for name in names):
        found.append("no LICENSE at the top of the archive")
    if bin_path not in names:
        found.append(f"bin {bin_path} is not in the archive")
    return found


def _walk(root: Path) -> list[Path]:
    """Every directory and file under root, following directory links (their targets get packed)."""
    found = []
    for directory, subdirs, files in os.walk(root, followlinks=True):
        found.extend(Path(directory) / name for name in subdirs + files)
    return sorted(found)


def _write_tar(entries: list[tuple[str, Path]], out: Path, stamp: int) -> None:
    import gzip

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, dereference=True) as bundle:
        for name, path in entries:
            info = bundle.gettarinfo(str(path), arcname=name)  # follows links: dereference=True
            info.mtime, info.uid, info.gid, info.uname, info.gname = stamp, 0, 0, "", ""
            if info.isdir():
                bundle.addfile(info)
            else:
                with path.open("rb") as handle:
                    bundle.addfile(info, handle)
    with out.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=stamp) as zipped:
        zipped.write(buffer.getvalue())


def _write_zip(entries: list[tuple[str, Path]], out: Path, stamp: int) -> None:
    date_time = time.gmtime(max(stamp, 315532800))[:6]  # zip cannot hold dates before 1980
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, path in entries:
            resolved = path.resolve()
            if resolved.is_dir():
                info = zipfile.ZipInfo(name + "/", date_time)
                info.external_attr = (0o40755 << 16) | 0x10
                bundle.writestr(info, b"")
            else:
                info = zipfile.ZipInfo(name, date_time)
                info.external_attr = (0o100755 if os.access(resolved, os.X_OK) else 0o100644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, resolved.read_bytes())
