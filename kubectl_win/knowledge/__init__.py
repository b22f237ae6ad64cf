"""Windows knowledge as data: YAML files in this folder, loaded once, each entry with sources and versions.

Parsing YAML costs more than a short command's whole run, so each file ships precompiled next to it as
compiled/<name>.json, stamped with a hash of the YAML it came from (`python -m kubectl_win.knowledge`
rewrites them; a test fails when one is stale). A stale or missing compiled file is ignored and the
YAML parsed instead, so an edit is never masked; nothing is ever written at run time.
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
COMPILED_DIR = os.path.join(_HERE, "compiled")


@cache
def load(name: str) -> Any:
    """Load knowledge/<name>.yaml (its precompiled JSON when that is current, else the YAML itself)."""
    with open(os.path.join(_HERE, f"{name}.yaml"), "rb") as handle:
        raw = handle.read()
    try:
        with open(compiled_path(name), "rb") as handle:
            compiled = json.loads(handle.read())
        if isinstance(compiled, dict) and compiled.get("source") == digest(raw):
            return compiled["data"]
    except (OSError, ValueError, KeyError):
        pass
    return parse(raw)


def parse(raw: bytes) -> Any:
    import yaml

    return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def digest(raw: bytes) -> str:
    import hashlib

    return hashlib.blake2b(raw, digest_size=12).hexdigest()


def compiled_path(name: str) -> str:
    return os.path.join(COMPILED_DIR, f"{name}.json")


def names() -> list[str]:
    return sorted(entry[:-5] for entry in os.listdir(_HERE) if entry.endswith(".yaml"))


def compile_all() -> list[str]:
    """Rewrite compiled/*.json from the YAML files; returns the names written. Raises ValueError for data
    JSON cannot hold unchanged (integer keys, dates), which must then be written differently in the YAML."""
    os.makedirs(COMPILED_DIR, exist_ok=True)
    written = []
    for name in names():
        with open(os.path.join(_HERE, f"{name}.yaml"), "rb") as handle:
            raw = handle.read()
        data = parse(raw)
        text = json.dumps({"source": digest(raw), "data": data}, ensure_ascii=False, separators=(",", ":"))
        if json.loads(text)["data"] != data:
            raise ValueError(f"knowledge/{name}.yaml has data JSON would change (integer keys or dates)")
        with open(compiled_path(name), "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        written.append(name)
    return written
