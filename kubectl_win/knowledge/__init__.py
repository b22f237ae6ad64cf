"""Windows knowledge as data: YAML files in this folder, loaded once, each entry with sources and versions."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> Any:
    """Load knowledge/<name>.yaml (parsed once per process)."""
    import yaml

    text = resources.files(__package__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
