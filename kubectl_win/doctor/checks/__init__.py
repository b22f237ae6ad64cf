"""Doctor's checks: one module per area, each `run(snapshot) -> list[Finding]` (listed in checks/plan.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubectl_win.knowledge import load


def name_list(names: Iterable[str], limit: int = 3) -> str:
    """'a, b, c and 4 more' (sorted, for stable messages)."""
    items = sorted(names)
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} more"


def knowledge(key: str) -> Any:
    """A setting of knowledge/doctor_checks.yaml beside its checks (agents, service_ports_warn_at, ...)."""
    return load("doctor_checks")[key]
