"""Filter log lines here the way the kubelet would (--since, --until, --pattern, --tail), for logs it serves as
files: as a stream, holding only the last N lines for --tail, whatever the size of the log.

Timestamps are read from the line starts Windows node components write: klog (`E1201 02:10:31.511870`,
no year: the year that puts it closest to now), RFC 3339 (`2026-12-01T02:10:31Z`), logrus
(`time="2026-12-01T02:10:31Z"`) and PowerShell tables (`12/1/2026 2:10:31 AM`). A line without one
(a wrapped message, a stack trace) belongs to the line before it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta

_KLOG = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})")
_RFC3339 = re.compile(r"(?:^|time=\")(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
_US = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) ?(AM|PM)?")


def timestamp(line: str, now: datetime) -> datetime | None:
    match = _KLOG.match(line)
    if match:
        month, day, hour, minute, second = (int(g) for g in match.groups())
        try:
            stamp = datetime(now.year, month, day, hour, minute, second, tzinfo=UTC)
        except ValueError:
            return None
        return stamp.replace(year=now.year - 1) if stamp - now > timedelta(days=1) else stamp
    match = _RFC3339.search(line[:64])
    if match:
        date, clock, zone = match.groups()
        try:
            stamp = datetime.fromisoformat(f"{date}T{clock}{'+00:00' if zone in (None, 'Z') else zone}")
        except ValueError:
            return None
        return stamp.astimezone(UTC)
    match = _US.match(line)
    if match:
        month, day, year, hour, minute, second, half = match.groups()
        hour_24 = int(hour) % 12 + (12 if half == "PM" else 0) if half else int(hour)
        try:
            return datetime(int(year), int(month), int(day), hour_24, int(minute), int(second), tzinfo=UTC)
        except ValueError:
            return None
    return None


def filter_stream(lines: Iterable[str], since: datetime | None = None, until: datetime | None = None,
                  pattern: re.Pattern[str] | None = None, tail: int | None = None, now: datetime | None = None
                  ) -> Iterator[str]:
    """The lines inside [since, until] that match pattern, only the last `tail` of them (held in a deque: memory
    bounded by the tail, not by the log). A line is placed in time by the last timestamp at or before it; lines
    before the first timestamp are outside any window."""
    now = now or datetime.now(UTC)
    current: datetime | None = None
    last: deque[str] | None = deque(maxlen=tail) if tail is not None else None
    for line in lines:
        stamp = timestamp(line, now)
        if stamp is not None:
            current = stamp
        if since is not None or until is not None:
            if current is None or (since is not None and current < since) or (until is not None and current > until):
                continue
        if pattern is not None and not pattern.search(line):
            continue
        if last is None:
            yield line
        else:
            last.append(line)
    if last:
        yield from last


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """`90s`, `15m`, `1h`, `2d`, `1h30m` before now, or an RFC 3339 time (--since and --until alike, as
    journalctl and oc adm node-logs take them); ValueError otherwise."""
    now = now or datetime.now(UTC)
    parts = re.fullmatch(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text.strip())
    if parts and any(parts.groups()):
        days, hours, minutes, seconds = (int(g or 0) for g in parts.groups())
        return now - timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r}: expected a duration (30m, 1h, 2d) or an RFC 3339 time") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
