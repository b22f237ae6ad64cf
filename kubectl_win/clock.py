"""The day a report counts to: today, or the KUBECTL_WIN_TODAY=YYYY-MM-DD that makes a run repeatable (a report
of an old dump, the documentation's examples). One day for everything a report dates: patch levels, support
ends and platform retirements."""

from __future__ import annotations

import datetime as dt
import os

TODAY_ENV = "KUBECTL_WIN_TODAY"


def today() -> dt.date:
    given = os.environ.get(TODAY_ENV, "").strip()
    if given:
        try:
            return dt.date.fromisoformat(given)
        except ValueError:
            from kubectl_win.errors import UsageError

            raise UsageError(f"{TODAY_ENV}={given!r} is not a day (YYYY-MM-DD)") from None
    return dt.datetime.now(dt.UTC).date()
