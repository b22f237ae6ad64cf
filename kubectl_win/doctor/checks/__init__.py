"""Doctor's checks: one module per area, each `run(snapshot) -> list[Finding]` (listed in doctor/registry.py)."""

from __future__ import annotations

from collections.abc import Iterable


def name_list(names: Iterable[str], limit: int = 3) -> str:
    """'a, b, c and 4 more' (sorted, for stable messages)."""
    items = sorted(names)
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} more"
