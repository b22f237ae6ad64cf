"""IP address tests on values read from the cluster or a dump (any type: a wrong-typed field is no address)."""

from __future__ import annotations

import ipaddress
from typing import Any


def is_ip(value: Any) -> bool:
    try:
        ipaddress.ip_address(str(value))
    except ValueError:
        return False
    return True


def in_prefix(ip: str, prefix: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return False
