"""Kubernetes resource quantities ("16Gi", "8388608Ki", "1.5e9", "500m"): the one parser the tool uses,
for doctor's node and container memory and for scaffold's --cpu/--memory flags."""

from __future__ import annotations

import re
from typing import Any

_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "m": 0.001}
# k8s.io/apimachinery resource.Quantity: a signed decimal, then a binary or decimal SI suffix or an exponent.
QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE]|[eE][-+]?[0-9]+)?$"
)


def parse_quantity(value: Any) -> tuple[float, str] | None:
    """(value in base units, suffix as written) for a quantity, or None when it is not one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value), ""
    match = QUANTITY.match(str(value).strip())
    if not match:
        return None
    suffix = match.group("suffix") or ""
    try:
        number = float(match.group("num"))
        if suffix[:1] in ("e", "E"):
            return number * 10.0 ** int(suffix[1:]), suffix
        return number * _SUFFIX[suffix], suffix
    except (ValueError, OverflowError):
        return None


def parse_bytes(value: Any) -> int | None:
    """Bytes for a memory quantity, or None when absent or unreadable."""
    parsed = parse_quantity(value)
    if parsed is None:
        return None
    try:
        return int(parsed[0])
    except (ValueError, OverflowError):
        return None


def format_bytes(value: int | None) -> str:
    """1073741824 -> '1.0Gi' (kubectl-like binary units)."""
    if value is None:
        return "<unknown>"
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)
