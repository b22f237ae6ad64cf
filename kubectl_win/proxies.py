"""Which proxy a request goes through, from HTTPS_PROXY, HTTP_PROXY and NO_PROXY, exactly as kubectl reads
them (Go's golang.org/x/net/http/httpproxy, which net/http's ProxyFromEnvironment uses). Shared by the
Kubernetes access layer (API requests and exec/port-forward websockets) and any registry client.

Written here because Python's urllib.request.proxy_bypass_environment differs from Go on the forms
corporate NO_PROXY lists use: it ignores CIDR entries (10.0.0.0/8), IPv6 literals and ports. Go's rules:

- the upper-case variable wins over the lower-case one, when set and non-empty;
- https:// URLs use HTTPS_PROXY, http:// URLs HTTP_PROXY; a proxy without a scheme is http://;
- localhost and loopback addresses are never proxied;
- NO_PROXY is comma-separated, case-insensitive: `*` (nothing is proxied); an IP (`10.1.2.3`, `::1`), a
  CIDR (`10.0.0.0/8`, `fd00::/8`), either with a port (`10.1.2.3:6443`, `[fd00::1]:6443`); a domain
  (`corp.example`: the domain and its sub-domains), `.corp.example` or `*.corp.example` (sub-domains
  only), with or without `:port`. A port in an entry must equal the request's port (443 and 80 by default).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}


@dataclass(frozen=True)
class _Entry:
    kind: str  # "ip", "cidr" or "domain"
    value: str = ""
    port: str = ""
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    match_host: bool = False  # a bare domain also matches itself, not only its sub-domains


@dataclass(frozen=True)
class ProxyEnvironment:
    http_proxy: str = ""
    https_proxy: str = ""
    no_proxy: str = ""
    _entries: tuple[_Entry, ...] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ProxyEnvironment:
        env = os.environ if environ is None else environ

        def first(*names: str) -> str:
            return next((env[name] for name in names if env.get(name)), "")

        return cls(first("HTTP_PROXY", "http_proxy"), first("HTTPS_PROXY", "https_proxy"),
                   first("NO_PROXY", "no_proxy"))

    def proxy_for(self, url: str) -> str | None:
        """The proxy URL for a request to `url` (http, https, ws, wss), or None to connect directly."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        proxy = self.https_proxy if scheme in ("https", "wss") else self.http_proxy if scheme in ("http", "ws") \
            else ""
        if not proxy:
            return None
        try:
            host = (parts.hostname or "").lower()
            port = str(parts.port) if parts.port else DEFAULT_PORTS.get(scheme, "")
        except ValueError:
            return None
        if not self.use_proxy(host, port):
            return None
        return proxy if "://" in proxy else f"http://{proxy}"

    def use_proxy(self, host: str, port: str) -> bool:
        """Go's useProxy: False for localhost, loopback addresses and hosts NO_PROXY matches."""
        host = host.strip().lower().strip("[]")
        if not host:
            return True
        if host == "localhost":
            return False
        ip = _ip(host)
        if ip is not None and ip.is_loopback:
            return False
        for entry in self.entries():
            if entry.kind == "all":
                return False
            if entry.kind == "cidr" and ip is not None and entry.network is not None:
                plain = _unmapped(ip)
                if plain.version == entry.network.version and plain in entry.network:
                    return False
            elif entry.kind == "ip" and ip is not None and entry.ip is not None:
                if _unmapped(ip) == _unmapped(entry.ip) and entry.port in ("", port):
                    return False
            elif entry.kind == "domain":
                if (host.endswith(entry.value) or (entry.match_host and host == entry.value[1:])) \
                        and entry.port in ("", port):
                    return False
        return True

    def entries(self) -> tuple[_Entry, ...]:
        if self._entries is None:
            object.__setattr__(self, "_entries", tuple(_parse_no_proxy(self.no_proxy)))
        return self._entries  # type: ignore[return-value]


def proxy_for(url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The environment's proxy for `url`, as kubectl would choose it (None: connect directly)."""
    return ProxyEnvironment.from_environment(environ).proxy_for(url)


def _parse_no_proxy(value: str) -> list[_Entry]:
    entries: list[_Entry] = []
    for raw in value.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        if item == "*":
            return [_Entry("all")]
        try:
            network = ipaddress.ip_network(item, strict=False) if "/" in item else None
        except ValueError:
            network = None
        if network is not None:
            entries.append(_Entry("cidr", item, network=network))
            continue
        host, port = _split_host_port(item)
        if host is None:
            continue  # ":80" and the like: no host, ignored as Go ignores it
        ip = _ip(host)
        if ip is not None:
            entries.append(_Entry("ip", host, port, ip=ip))
            continue
        if not host:
            continue
        if host.startswith("*."):
            host = host[1:]
        match_host = not host.startswith(".")
        if match_host:
            host = "." + host
        try:
            host = host.encode("idna").decode("ascii") if not host.isascii() else host
        except UnicodeError:
            pass
        entries.append(_Entry("domain", host, port, match_host=match_host))
    return entries


def _split_host_port(item: str) -> tuple[str | None, str]:
    """Go's net.SplitHostPort where it succeeds (host:port, [v6]:port), else the whole item as the host."""
    if item.startswith("["):
        close = item.find("]")
        if close != -1 and item[close + 1:close + 2] == ":" and item[close + 2:].isdigit():
            return item[1:close], item[close + 2:]
        return item.strip("[]"), ""
    if item.count(":") == 1:
        host, _, port = item.partition(":")
        if not host:
            return None, ""
        return host, port
    return item, ""  # no port, or a bare IPv6 address


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _unmapped(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """As Go's net.IP compares: an IPv4-mapped IPv6 address (::ffff:10.0.0.1) is its IPv4 address."""
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip
