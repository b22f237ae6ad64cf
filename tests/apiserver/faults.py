"""Fault injection: make chosen requests fail the ways real clusters and networks fail.

A rule matches a request by path (regex, searched against the path plus query string) and method,
optionally only for its first `count` matches, and then does one of:
  status   answer with a Status body and that HTTP code (429 carries Retry-After)
  delay    sleep `delay` seconds, then serve normally (combine with status to delay a failure)
  drop     close the connection without sending a response
  truncate send the real response's headers and only half its body, then close
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

ACTIONS = ("status", "delay", "drop", "truncate")

_REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "AlreadyExists",
    410: "Expired", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
    504: "Timeout",
}


def reason_for(code: int) -> str:
    return _REASONS.get(code, "Unknown")


@dataclass
class FaultRule:
    path: str
    action: str = "status"
    status: int = 500
    methods: tuple[str, ...] = ()  # empty: every method
    count: int | None = None  # None: every matching request
    delay: float = 0.0
    retry_after: int | None = None
    message: str | None = None
    hits: int = 0
    _regex: re.Pattern = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fault action {self.action!r}; expected one of {ACTIONS}")
        self._regex = re.compile(self.path)
        self.methods = tuple(m.upper() for m in self.methods)

    def matches(self, method: str, path_qs: str) -> bool:
        if self.methods and method.upper() not in self.methods:
            return False
        return self._regex.search(path_qs) is not None

    @property
    def exhausted(self) -> bool:
        return self.count is not None and self.hits >= self.count


class FaultInjector:
    """Rules are checked in the order added; the first live match applies."""

    def __init__(self) -> None:
        self._rules: list[FaultRule] = []
        self._lock = threading.Lock()

    def add(self, path: str, action: str = "status", status: int = 500, *, methods: tuple[str, ...] | str = (),
            count: int | None = None, delay: float = 0.0, retry_after: int | None = None,
            message: str | None = None) -> FaultRule:
        if isinstance(methods, str):
            methods = (methods,)
        if action == "status" and status == 429 and retry_after is None:
            retry_after = 1
        rule = FaultRule(path, action, status, tuple(methods), count, delay, retry_after, message)
        with self._lock:
            self._rules.append(rule)
        return rule

    # Shorthands that read well in tests.
    def status(self, path: str, code: int, **kw) -> FaultRule:
        return self.add(path, "status", code, **kw)

    def delay(self, path: str, seconds: float, **kw) -> FaultRule:
        return self.add(path, "delay", delay=seconds, **kw)

    def drop(self, path: str, **kw) -> FaultRule:
        return self.add(path, "drop", **kw)

    def truncate(self, path: str, **kw) -> FaultRule:
        return self.add(path, "truncate", **kw)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    @property
    def rules(self) -> list[FaultRule]:
        return list(self._rules)

    def match(self, method: str, path_qs: str) -> FaultRule | None:
        with self._lock:
            for rule in self._rules:
                if not rule.exhausted and rule.matches(method, path_qs):
                    rule.hits += 1
                    return rule
        return None

    @staticmethod
    def parse_spec(spec: str) -> dict:
        """Parse the command line's `ACTION[:ARG][:key=value...]@PATH_REGEX`, e.g.
        `status:429:count=2@^/api/v1/pods`, `delay:1.5@/apis/apps`, `drop:count=1@/api/v1/nodes`."""
        head, sep, path = spec.partition("@")
        if not sep or not path:
            raise ValueError(f"fault spec {spec!r}: expected ACTION[:ARG][:key=value...]@PATH_REGEX")
        action, *parts = head.split(":")
        kw: dict = {"path": path, "action": action}
        for part in parts:
            key, eq, value = part.partition("=")
            if not eq:
                if action == "status":
                    kw["status"] = int(key)
                elif action == "delay":
                    kw["delay"] = float(key)
                else:
                    raise ValueError(f"fault spec {spec!r}: {action} takes no argument")
            elif key == "count":
                kw["count"] = int(value)
            elif key == "method":
                kw["methods"] = (value,)
            elif key == "retry_after":
                kw["retry_after"] = int(value)
            elif key == "delay":
                kw["delay"] = float(value)
            else:
                raise ValueError(f"fault spec {spec!r}: unknown option {key!r}")
        return kw
