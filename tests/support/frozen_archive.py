"""The frozen linux/amd64 archive the krew install tests use, built once per set of inputs and cached.

    python -m tests.support.frozen_archive     # build it if the cache lacks it (CI's build step), print its path

PyInstaller takes about half a minute; the archive depends only on the package's files, the release code, the
interpreter and the installed distributions, so a build is kept under the test cache (tests/realcluster/build.py:
cache_root) in a folder named by a digest of all of them. Any change to one of them builds anew.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from tests.support.paths import ROOT

INPUTS = ("kubectl_win", "release")
FILES = ("pyproject.toml", "LICENSE")


def inputs_digest() -> str:
    """A digest of everything the frozen build reads."""
    digest = hashlib.sha256()
    paths = [ROOT / name for name in FILES]
    for folder in INPUTS:
        paths += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.version.encode())
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions())
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()[:20]


def cached_archive(tag: str) -> Path:
    """The folder holding the archive for `tag` (and its .sha256): from the cache, or built into it now."""
    from release.build import build_archive
    from tests.realcluster.build import cache_root

    folder = cache_root() / "frozen" / f"{tag}-{inputs_digest()}"
    if (folder / "done").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        built = Path(scratch) / "out"
        build_archive(tag, built, Path(scratch) / "work")
        (built / "done").write_text("", encoding="utf-8")
        try:
            os.replace(built, folder)  # atomic: a concurrent or interrupted build never leaves half an archive
        except OSError:
            if not (folder / "done").is_file():
                raise
    for stale in folder.parent.glob(f"{tag}-*"):
        if stale != folder:
            shutil.rmtree(stale, ignore_errors=True)  # keep one build per tag
    return folder


if __name__ == "__main__":
    from kubectl_win import __version__

    print(cached_archive(f"v{__version__}"))
