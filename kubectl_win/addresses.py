"""IP address tests on values read from the cluster or a dump (any type: a wrong-typed field is no address)."""

from __future__ import annotations

import ipaddress
from typing import Any


def is_ip(value: Any, version: int | None = None) -> bool:
    """An IP address (of `version`, 4 or 6, when given)."""
    try:
        address = ipaddress.ip_address(str(value))
    except ValueError:
        return False
    return version is None or address.version == version


def in_prefix(ip: str, prefix: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return False
