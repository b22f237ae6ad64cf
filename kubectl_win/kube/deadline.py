"""A scan's deadline: the point in time by which one cluster's read is over, whatever it waits on (an exec
credential plugin, a server that sends its answer a byte at a time). --request-timeout bounds each read
from the socket; a deadline bounds the whole read of a cluster (`--scan-timeout`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kubectl_win.errors import ClusterUnreachable


class DeadlineExceeded(ClusterUnreachable):
    """The cluster's scan ran past its --scan-timeout."""


@dataclass(frozen=True)
class Deadline:
    at: float  # time.monotonic() by which the work is over
    seconds: float  # the budget as given, for messages

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def exceeded(self, doing: str) -> DeadlineExceeded:
        return DeadlineExceeded(f"the scan did not finish within {self.seconds:g}s (--scan-timeout) while {doing}")

    def check(self, doing: str) -> None:
        if self.expired:
            raise self.exceeded(doing)
