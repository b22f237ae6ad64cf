"""The support bundle: `kubectl-win-bundle/1`, a tar.gz (or a folder of the same layout). docs/collect.md
describes it.

    bundle.json                        format, createdAt, cluster ("cluster.json"), nodes: {name: {dir,
                                       collected, errors, leftOut, redacted, ...}}
    cluster.json                       what doctor --save-dump writes
    nodes/<node>/manifest.json         the node script's own record: each item's command and outcome
    nodes/<node>/hns.json              the format hns --from-file reads
    nodes/<node>/logs/<component>.log  kubelet, containerd, kube-proxy, csi-proxy, cni, ...
    nodes/<node>/...                   events/, config/, node/, ports/, network/

Writing: through kubectl_win/sharefile.py (mkstemp in the target's folder, 0600 from the start, moved into
place with os.link, never over an existing file, or with --force os.replace). Reading accepts only
regular files and folders under the bundle's root: absolute names, `..`, links and devices are refused
or passed over, and sizes are capped (per file, in total, in count) so a hostile bundle cannot exhaust
memory. tarfile, because the bundle must be readable by `tar` and Windows' `tar.exe`; our own checks,
because we read members into memory rather than extract them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import stat
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.errors import InputError

BUNDLE_FORMAT = "kubectl-win-bundle/1"
MAX_MEMBER_BYTES = 256 << 20
MAX_TOTAL_BYTES = 2 << 30
MAX_MEMBERS = 50_000
_NODE_DIR = re.compile(r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$")


def node_dir(node: str) -> str:
    """nodes/<node>: a node name is a DNS subdomain; anything else is made into one (never a path)."""
    name = node if _NODE_DIR.match(node) and ".." not in node else \
        re.sub(r"[^a-z0-9.-]+", "-", node.lower()).replace("..", "-").strip(".-") or "node"
    return f"nodes/{name}"


def clean_name(name: str) -> str | None:
    """A member name as a relative POSIX path, or None when it would leave the bundle (absolute, `..`,
    a drive letter, a backslash path)."""
    if "\\" in name or "\x00" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or any(p == ".." for p in parts) or re.match(r"^[A-Za-z]:", parts[0]):
        return None
    return "/".join(parts)


@dataclass
class Bundle:
    """A bundle read into memory: member name -> bytes, plus what was passed over and why."""

    origin: str
    files: dict[str, bytes] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)

    def text(self, name: str) -> str:
        return self.files[name].decode("utf-8", "replace")

    def json(self, name: str) -> Any:
        from kubectl_win.manifests.yamlsafe import NestingError, json_loads

        try:
            return json_loads(self.files[name].decode("utf-8-sig"))
        except NestingError:
            raise InputError(f"{self.origin}: {name} is nested too deeply to be a bundle file") from None
        except ValueError as exc:
            raise InputError(f"{self.origin}: {name} is not JSON: {exc}") from None

    def under(self, prefix: str) -> list[str]:
        prefix = prefix.rstrip("/") + "/"
        return sorted(n for n in self.files if n.startswith(prefix))


class _Budget:
    def __init__(self, origin: str, max_member: int, max_total: int, max_members: int) -> None:
        self.origin, self.max_member, self.max_total, self.max_members = origin, max_member, max_total, max_members
        self.total = 0
        self.count = 0

    def admit(self, name: str, size: int) -> None:
        self.count += 1
        if self.count > self.max_members:
            raise InputError(f"{self.origin}: more than {self.max_members} files; not a bundle this tool wrote")
        if size > self.max_member:
            raise InputError(f"{self.origin}: {name} is {size >> 20} MiB, over the {self.max_member >> 20} MiB "
                             "a bundle file may hold")
        self.total += size
        if self.total > self.max_total:
            raise InputError(f"{self.origin}: over {self.max_total >> 20} MiB unpacked; not a bundle this tool wrote")


def read_tar(data_or_path: str | bytes, origin: str, max_member: int = MAX_MEMBER_BYTES,
             max_total: int = MAX_TOTAL_BYTES, max_members: int = MAX_MEMBERS) -> Bundle:
    """A tar (plain or compressed) as a Bundle; links, devices and names leaving the root are refused."""
    bundle = Bundle(origin)
    budget = _Budget(origin, max_member, max_total, max_members)
    try:
        handle = tarfile.open(name=data_or_path, mode="r:*") if isinstance(data_or_path, str) else \
            tarfile.open(fileobj=io.BytesIO(data_or_path), mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"{origin}: not a tar archive ({exc})") from None
    with handle:
        try:
            for member in handle:
                name = clean_name(member.name)
                if member.isdir():
                    continue
                if name is None:
                    bundle.refused.append(f"{member.name}: outside the bundle")
                    continue
                if not member.isreg():
                    bundle.refused.append(f"{name}: not a regular file")
                    continue
                budget.admit(name, member.size)
                source = handle.extractfile(member)
                data = source.read(member.size + 1) if source is not None else b""
                if len(data) > member.size:
                    raise InputError(f"{origin}: {name} is longer than its header says")
                bundle.files[name] = data
        except (tarfile.TarError, OSError, EOFError, UnicodeError) as exc:
            raise InputError(f"{origin}: damaged archive ({' '.join(str(exc).split()) or type(exc).__name__})") \
                from None
    return bundle


def read_folder(path: str, max_member: int = MAX_MEMBER_BYTES, max_total: int = MAX_TOTAL_BYTES,
                max_members: int = MAX_MEMBERS) -> Bundle:
    """A folder of the bundle layout; links (to files or folders) are not followed."""
    bundle = Bundle(path)
    budget = _Budget(path, max_member, max_total, max_members)
    root = os.path.abspath(path)
    for folder, dirs, names in os.walk(root, followlinks=False):
        for entry in list(dirs):
            if os.path.islink(os.path.join(folder, entry)):
                dirs.remove(entry)
                bundle.refused.append(f"{os.path.relpath(os.path.join(folder, entry), root)}: a link")
        for entry in names:
            full = os.path.join(folder, entry)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode):
                bundle.refused.append(f"{relative}: {'a link' if stat.S_ISLNK(info.st_mode) else 'not a file'}")
                continue
            budget.admit(relative, info.st_size)
            with open(full, "rb") as handle:
                bundle.files[relative] = handle.read(max_member + 1)
    return bundle


def open_bundle(path: str) -> Bundle:
    """A bundle from a .tar.gz (or any tar) or a folder; a one-line error for anything else."""
    if os.path.isdir(path):
        bundle = read_folder(path)
    elif os.path.isfile(path):
        bundle = read_tar(path, path)
    else:
        raise InputError(f"{path}: no such file or folder")
    if "bundle.json" not in bundle.files:
        raise InputError(f"{path}: no bundle.json (expected a bundle written by kubectl win collect)")
    header = bundle.json("bundle.json")
    if not isinstance(header, dict) or header.get("format") != BUNDLE_FORMAT:
        found = header.get("format") if isinstance(header, dict) else None
        raise InputError(f"{path}: unsupported bundle format {found!r} (expected {BUNDLE_FORMAT})")
    return bundle


def check_target(path: str, force: bool) -> None:
    """Before any work: the folder exists, and the file does not (or --force); as every shared file."""
    from kubectl_win.sharefile import check_target as check_shared

    check_shared(path, "-o", force=force)


class BundleWriter:
    """Members go into a gzip tar at a temporary name next to the target; finish() moves it into place."""

    def __init__(self, path: str, force: bool = False) -> None:
        from kubectl_win.sharefile import SharedFile

        check_target(path, force)
        self.path, self.force = path, force
        self._out = SharedFile(path, force=force, what="bundle", binary=True)  # 0600, atomic, no overwrite
        self._tar = tarfile.open(fileobj=self._out.handle, mode="w:gz", format=tarfile.PAX_FORMAT)
        self._dirs: set[str] = set()
        self._mtime = int(time.time())
        self.names: list[str] = []

    def add(self, name: str, data: bytes) -> None:
        clean = clean_name(name)
        if clean is None or clean != name:
            raise ValueError(f"bundle member name {name!r} is not a clean relative path")
        parts = name.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in self._dirs:
                self._dirs.add(folder)
                self._tar.addfile(self._info(folder, 0, tarfile.DIRTYPE, 0o700))
        self._tar.addfile(self._info(name, len(data), tarfile.REGTYPE, 0o600), io.BytesIO(data))
        self.names.append(name)

    def add_json(self, name: str, doc: Any) -> None:
        self.add(name, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))

    def _info(self, name: str, size: int, kind: bytes, mode: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.size, info.type, info.mode, info.mtime = size, kind, mode, self._mtime
        return info

    def finish(self) -> None:
        try:
            self._tar.close()
        except OSError as exc:
            self._out.abort()
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self._out.commit()

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._tar.close()
        self._out.abort()


def node_entries(bundle: Bundle) -> Iterator[tuple[str, dict[str, Any]]]:
    """(node, its bundle.json entry) in name order; entries whose dir is not a clean path are passed over."""
    nodes = bundle.json("bundle.json").get("nodes") or {}
    if not isinstance(nodes, dict):
        raise InputError(f"{bundle.origin}: bundle.json 'nodes' must be a mapping")
    for name in sorted(nodes):
        entry = nodes[name] if isinstance(nodes[name], dict) else {}
        folder = clean_name(str(entry.get("dir") or node_dir(str(name))))
        if folder is None:
            bundle.refused.append(f"bundle.json node {name}: its dir leaves the bundle")
            continue
        yield str(name), {**entry, "dir": folder}
