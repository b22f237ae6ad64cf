"""`serve`'s options and the pure parsing of its flags: --listen (host:port, [v6]:port) and --interval."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_win.addresses import is_ip
from kubectl_win.errors import UsageError

# The durations `scaffold monitor` writes (5m, 90s, 1h30m); fractions of a second for short test loops.
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


@dataclass(frozen=True)
class ServeOptions:
    host: str
    port: int
    interval: float  # seconds from the start of one scan to the start of the next
    contexts: tuple[str | None, ...] = (None,)  # None: the current context (in a pod: the in-cluster config)
    parallel: int = 4
    kubeconfig: str | None = None
    request_timeout: float = 30.0
    config: str | None = None  # doctor's suppression config
    scan_timeout: float = 120.0  # seconds one cluster's scan may take (--scan-timeout; default 4x the request's)
    cluster_label: str | None = None  # --cluster-label (None: `cluster`, left out for the in-cluster config)


def parse_listen(text: str, what: str = "listen address") -> tuple[str, int]:
    """'127.0.0.1:9108', '[::1]:9108', 'localhost:9108', '0.0.0.0:9108' -> (host, port); port 0: any free one.
    `what` names the value in errors."""
    value = text.strip()
    host, sep, port = value.rpartition(":")
    if not sep or not host:
        raise UsageError(f"invalid {what} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9108, 0.0.0.0:9108 "
                         "or [::]:9108")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not is_ip(host, 6):
            raise UsageError(f"invalid {what} {text!r}: {host!r} is not an IPv6 address")
    elif ":" in host:
        raise UsageError(f"invalid {what} {text!r}: put an IPv6 address in brackets, e.g. [::1]:9108")
    elif not (is_ip(host, 4) or (_HOSTNAME.match(host) and not host.replace(".", "").isdigit())):
        raise UsageError(f"invalid {what} {text!r}: {host!r} is not an IP address or host name")
    if not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"invalid {what} {text!r}: the port must be a number from 0 to 65535")
    return host, int(port)


def parse_interval(text: str, what: str = "interval") -> float:
    """'5m', '90s', '1h30m', '0.5s' -> seconds (more than zero); `what` names the value in errors."""
    match = _DURATION.match(text.strip())
    seconds = 0.0
    if match and text.strip():
        hours, minutes, secs = match.groups()
        seconds = int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs or 0)
    if seconds <= 0:
        raise UsageError(f"invalid {what} {text!r}: expected a duration like 5m, 90s or 1h30m")
    return seconds
