"""Windows Server retirement on managed Kubernetes (knowledge/windows_lifecycle.yaml): a node's platform and pool
(from the platform model), whether its build is retired or retiring there, and the day its support ends."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from functools import cache
from typing import Any

from kubectl_win import clock
from kubectl_win.knowledge import load


@cache
def _data() -> dict[str, Any]:
    return load("windows_lifecycle")


def platform_of(platform_id: str, labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(platform name, pool) of a node whose platform (kubectl_win/platforms.py) is `platform_id`, or None for a
    cluster no platform marker recognises (kubeadm, unknown)."""
    from kubectl_win import platforms

    entry = platforms.platform(platform_id)
    return (entry.name, entry.pool_of(labels)) if entry.specific else None


def retirement(platform: str, build: int, today: dt.date | None = None) -> tuple[str, dict[str, Any]] | None:
    """("retired" | "retiring", entry) when the platform retires the build within the warning window."""
    today = today or clock.today()
    window = dt.timedelta(days=int(_data()["warn_days_before"]))
    for entry in _data()["retirements"]:
        if entry["platform"] == platform and int(entry["build"]) == build:
            date = dt.date.fromisoformat(str(entry["date"]))
            if today >= date:
                return "retired", entry
            if today >= date - window:
                return "retiring", entry
    return None


def offers(platform: str) -> dict[str, Any] | None:
    return next((o for o in _data()["offers"] if o["platform"] == platform), None)


def support_end(build: int, platform: str | None = None) -> dt.date | None:
    """The day support for `build` ends: Microsoft's end of support, or the platform's retirement of the build
    when that comes first; None for a build the data does not date."""
    dates = [dt.date.fromisoformat(str(e["date"])) for e in _data().get("support_ends", ())
             if int(e["build"]) == build]
    if platform is not None:
        dates += [dt.date.fromisoformat(str(e["date"])) for e in _data()["retirements"]
                  if e["platform"] == platform and int(e["build"]) == build]
    return min(dates, default=None)
