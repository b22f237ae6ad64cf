"""Pure parsing and validation of port pairs, listen addresses and the in-pod destination host.

Everything that can end up on a relay's command line passes through `validate_port` or
`validate_remote_host` first; both return canonical text built from the parsed value, never the
user's original string.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from kubectl_win.errors import UsageError

_PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$")  # IANA_SVC_NAME, as Kubernetes
_SCOPE_ID = re.compile(r"^[A-Za-z0-9]{1,15}$")
_HOST_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class PortPair:
    """One `[LOCAL:]REMOTE` argument. local 0 means "pick a free port"; remote may be a port name."""

    local: int
    remote: int | str
    local_from_remote: bool = False  # LOCAL omitted: use the resolved remote number locally
    protocol: str = "tcp"  # "tcp" or "udp" (`/udp` after the pair)

    def __str__(self) -> str:
        suffix = "/udp" if self.protocol == "udp" else ""
        return f"{self.local}:{self.remote}{suffix}"


def parse_port_pair(text: str) -> PortPair:
    """`[LOCAL:]REMOTE[/tcp|/udp]`."""
    body, slash, protocol = text.partition("/")
    if slash:
        if protocol.lower() not in ("tcp", "udp"):
            raise UsageError(f"invalid port pair {text!r}: the protocol must be tcp or udp")
        pair = _parse_pair(body)
        return PortPair(pair.local, pair.remote, pair.local_from_remote, protocol.lower())
    return _parse_pair(text)


def _parse_pair(text: str) -> PortPair:
    if text.count(":") > 1:
        raise UsageError(f"invalid port pair {text!r}: expected [LOCAL:]REMOTE")
    if ":" in text:
        local_text, remote_text = text.split(":")
        local = 0 if local_text == "" else validate_port(local_text, what="local port")
        return PortPair(local=local, remote=_parse_remote(remote_text, text))
    remote = _parse_remote(text, text)
    if isinstance(remote, int):
        return PortPair(local=remote, remote=remote)
    return PortPair(local=0, remote=remote, local_from_remote=True)


def _parse_remote(text: str, whole: str) -> int | str:
    if text.isdigit():
        return validate_port(text, what="remote port")
    if _PORT_NAME.fullmatch(text):
        return text
    raise UsageError(f"invalid port {whole!r}: the remote port must be a number 1-65535 or a port name")


def validate_port(value: str | int, what: str = "port") -> int:
    text = str(value)
    if not text.isascii() or not text.isdigit() or len(text) > 5:
        raise UsageError(f"invalid {what} {text!r}: expected a number 1-65535")
    number = int(text)
    if not 1 <= number <= 65535:
        raise UsageError(f"invalid {what} {text!r}: expected a number 1-65535")
    return number


def validate_remote_host(text: str, what: str = "remote host") -> str:
    """Return a canonical IP address or DNS name for use on a relay command line; `what` names it in errors."""
    candidate = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        pass
    else:
        # ipaddress accepts any text as an IPv6 scope id ("fe80::1%$(id)"); allow interface names only.
        scope = getattr(address, "scope_id", None)
        if scope is not None and not _SCOPE_ID.fullmatch(scope):
            raise UsageError(f"invalid {what} {text!r}: the zone must be an interface name or number")
        return str(address)
    name = candidate.rstrip(".") if candidate.endswith(".") and len(candidate) > 1 else candidate
    labels = name.split(".")
    if (0 < len(name) <= 253 and name.isascii() and all(_HOST_LABEL.fullmatch(label) for label in labels)
            and not labels[-1].isdigit()):
        return name.lower()
    raise UsageError(f"invalid {what} {text!r}: expected an IP address or a DNS name")


def parse_listen_addresses(values: list[str] | None, what: str = "listen address") -> list[str]:
    """Addresses to listen on (repeatable, comma-separated; default localhost, as kubectl's); `localhost`
    means 127.0.0.1 and ::1, of which at least one must bind. `what` names them in errors."""
    addresses: list[str] = []
    for value in values or ["localhost"]:
        for item in value.split(","):
            item = item.strip()
            if item == "localhost":
                expanded = ["127.0.0.1", "::1"]
            else:
                try:
                    expanded = [str(ipaddress.ip_address(item.strip("[]")))]
                except ValueError:
                    raise UsageError(f"invalid {what} {item!r}: expected an IP address or localhost") from None
            addresses.extend(a for a in expanded if a not in addresses)
    return addresses


def format_hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
