"""Reading fields of objects that may have any shape (a dump can come from anyone): a field of the wrong type
reads as absent, never as an error. Used for every object doctor reads, so these are plain functions."""

from __future__ import annotations

from typing import Any


def meta_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def as_text(value: Any) -> str:
    """A field read as text: strings as they are, numbers as their digits, anything else (a list or a
    mapping where a string belongs) as absent."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def as_dict(value: Any) -> dict[str, Any]:
    """A field read as a mapping: a mapping as it is, anything else as an empty one."""
    return value if isinstance(value, dict) else {}
