"""Kubernetes resource quantities ("16Gi", "8388608Ki", "1.5e9") as bytes."""

from __future__ import annotations

import re
from typing import Any

_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "m": 0.001}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$")


def parse_bytes(value: Any) -> int | None:
    """Bytes for a memory quantity, or None when absent or unreadable."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return int(value)
    match = _QUANTITY.match(str(value).strip())
    if not match:
        return None
    try:
        return int(float(match.group(1)) * _SUFFIX[match.group(2) or ""])
    except ValueError:
        return None


def format_bytes(value: int | None) -> str:
    """1073741824 -> '1.0Gi' (kubectl-like binary units)."""
    if value is None:
        return "<unknown>"
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)
