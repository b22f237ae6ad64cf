"""Windows knowledge as data: YAML files in this folder, loaded once, each entry with sources and versions.

Parsing YAML costs more than a short command's whole run, so the parsed data is kept as JSON in the
user's cache directory, keyed by a hash of the YAML text (a changed file is simply a new key). A cache
that cannot be read or written is ignored.
"""

from __future__ import annotations

import json
import os
from functools import cache

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

# Plain os.path, not importlib.resources: that import alone costs more than reading every file here.
_HERE = os.path.dirname(os.path.abspath(__file__))


@cache
def load(name: str) -> Any:
    """Load knowledge/<name>.yaml (parsed once per process, and once per content across processes)."""
    with open(os.path.join(_HERE, f"{name}.yaml"), "rb") as handle:
        raw = handle.read()
    cached = _cache_file(name, raw)
    if cached is not None:
        try:
            with open(cached, "rb") as handle:
                return json.loads(handle.read())
        except (OSError, ValueError):
            pass
    import yaml

    data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if cached is not None:
        _store(cached, data)
    return data


def cache_dir() -> str | None:
    explicit = os.environ.get("KUBECTL_WIN_CACHE_DIR")
    if explicit:
        return explicit
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA")
        return os.path.join(base, "kubectl-win", "cache") if base else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kubectl-win") if not base.startswith("~") else None


def _cache_file(name: str, raw: bytes) -> str | None:
    if os.environ.get("KUBECTL_WIN_NO_CACHE"):
        return None
    directory = cache_dir()
    if directory is None:
        return None
    import hashlib

    digest = hashlib.blake2b(raw, digest_size=12).hexdigest()
    return os.path.join(directory, f"knowledge-{name}-{digest}.json")


def _store(path: str, data: Any) -> None:
    try:
        text = json.dumps(data, ensure_ascii=False)
        if json.loads(text) != data:  # e.g. integer keys: JSON would change them, so do not cache
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except (OSError, TypeError, ValueError):
        pass
