"""Waiting on events in tests. A test waits for the thing it needs (a session started, a line printed, a
process gone), never for a time budget sized for an idle machine: under load (another build beside the
suite) every step takes longer, and only a stuck process should fail. HANG_GUARD is that limit: it turns
a hang into a failure and is never reached by slow work."""

from __future__ import annotations

import time
from collections.abc import Callable

HANG_GUARD = 600.0


def wait_until(condition: Callable[[], object], what: str, guard: float = HANG_GUARD, poll: float = 0.05) -> None:
    """Return as soon as `condition()` is true; fail naming `what` if it never becomes true (a hang)."""
    deadline = time.monotonic() + guard
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not the case after {guard:g} s (hung?)")
        time.sleep(poll)
