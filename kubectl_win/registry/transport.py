"""HTTP for the registry client: kept-alive connections per host, TLS verified against the system store,
`SSL_CERT_FILE` and `--registry-ca` files, plain HTTP only for hosts named insecure, proxies from the
environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, read by kubectl_win.proxies as kubectl reads them),
redirects (blob storage often answers from another host; the Authorization header is not sent there), and
one-line errors for what went wrong on the wire.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Mapping

MAX_REDIRECTS = 5


class WireError(Exception):
    """The request did not get an HTTP answer; the message is one line a user can act on."""


class Response:
    __slots__ = ("body", "headers", "status", "url")

    def __init__(self, status: int, headers: dict[str, str], body: bytes, url: str) -> None:
        self.status, self.headers, self.body, self.url = status, headers, body, url

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


def _split_host(netloc: str, default_port: int) -> tuple[str, int]:
    parsed = urllib.parse.urlsplit(f"//{netloc}")
    return parsed.hostname or netloc, parsed.port or default_port


class Transport:
    def __init__(self, ca_files: tuple[str, ...] = (), insecure_hosts: tuple[str, ...] = (),
                 environ: Mapping[str, str] | None = None, user_agent: str = "kubectl-win") -> None:
        self._environ = dict(os.environ if environ is None else environ)
        # The system store; OpenSSL's default paths already honour the process's SSL_CERT_FILE (on Windows too).
        self._context = ssl.create_default_context()
        cert_file = self._environ.get("SSL_CERT_FILE")
        if cert_file and cert_file != os.environ.get("SSL_CERT_FILE") and os.path.isfile(cert_file):
            self._context.load_verify_locations(cafile=cert_file)  # an environment other than the process's
        for path in ca_files:
            try:
                self._context.load_verify_locations(cafile=path)
            except (OSError, ssl.SSLError) as exc:
                raise WireError(f"cannot load the CA bundle {path}: {getattr(exc, 'strerror', None) or exc}") from None
        self._insecure = {h.strip().lower() for h in insecure_hosts if h.strip()}
        from kubectl_win.proxies import ProxyEnvironment

        self._proxies = ProxyEnvironment.from_environment(self._environ)
        self._idle: dict[tuple[str, str, int], list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self.user_agent = user_agent

    def scheme_for(self, host: str) -> str:
        """http for hosts named with --insecure-registry (by host:port or by host alone), https otherwise."""
        bare = _split_host(host, 0)[0].lower()
        return "http" if host.lower() in self._insecure or bare in self._insecure else "https"

    def proxy_for(self, scheme: str, host: str) -> str | None:
        """The proxy for a request to host, as kubectl chooses it (kubectl_win.proxies, Go's rules)."""
        return self._proxies.proxy_for(f"{scheme}://{host}/")

    def request(self, method: str, url: str, headers: Mapping[str, str], timeout: float,
                max_body: int = 8 << 20, data: bytes | None = None) -> Response:
        """One request, following redirects; the Authorization header goes only to the first host."""
        first_host = urllib.parse.urlsplit(url).netloc
        for _ in range(MAX_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(url)
            sent = dict(headers)
            if parts.netloc != first_host:
                sent.pop("Authorization", None)
            response = self._once(method, parts, sent, timeout, max_body, data)
            if response.status in (301, 302, 303, 307, 308) and response.header("location"):
                url = urllib.parse.urljoin(url, response.header("location"))
                if response.status == 303:
                    method, data = "GET", None
                continue
            return response
        raise WireError(f"too many redirects from {first_host}")

    def _once(self, method: str, parts: urllib.parse.SplitResult, headers: dict[str, str], timeout: float,
              max_body: int, data: bytes | None) -> Response:
        scheme = parts.scheme
        default_port = 443 if scheme == "https" else 80
        host, port = _split_host(parts.netloc, default_port)
        proxy = self.proxy_for(scheme, parts.netloc)
        key = (f"{scheme}|{proxy or ''}", host, port)
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        if proxy and scheme == "http":
            target = urllib.parse.urlunsplit(parts._replace(fragment=""))
        headers.setdefault("User-Agent", self.user_agent)
        headers.setdefault("Host", parts.netloc)
        for attempt in (0, 1):
            connection, reused = self._connection(key, scheme, host, port, proxy, timeout)
            try:
                connection.timeout = timeout
                if connection.sock is not None:
                    connection.sock.settimeout(timeout)
                connection.request(method, target, body=data, headers=headers)
                raw = connection.getresponse()
                body = raw.read(max_body + 1)
                if len(body) > max_body:
                    connection.close()
                    raise WireError(f"{parts.netloc} answered with more than {max_body >> 20} MiB")
                answer = Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, body,
                                  urllib.parse.urlunsplit(parts))
                if raw.will_close:
                    connection.close()
                else:
                    self._release(key, connection)
                return answer
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                connection.close()
                if reused and attempt == 0:
                    continue  # a kept-alive connection the server had closed: once more on a new one
                raise WireError(f"{parts.netloc} closed the connection ({type(exc).__name__})") from None
            except ssl.SSLCertVerificationError as exc:
                connection.close()
                reason = exc.verify_message or exc.reason or "certificate verify failed"
                raise WireError(f"TLS: certificate of {parts.netloc} not trusted ({reason}); "
                                "pass --registry-ca FILE or set SSL_CERT_FILE") from None
            except ssl.SSLError as exc:
                connection.close()
                raise WireError(f"TLS handshake with {parts.netloc} failed ({exc.reason or exc})") from None
            except TimeoutError:
                connection.close()
                raise WireError(f"timed out after {timeout:.0f}s waiting for {parts.netloc}") from None
            except ConnectionRefusedError:
                connection.close()
                raise WireError(f"connection refused by {parts.netloc}" + (f" (through proxy {proxy})" if proxy
                                                                            else "")) from None
            except socket.gaierror:
                connection.close()
                raise WireError(f"cannot resolve {host}") from None
            except http.client.HTTPException as exc:
                connection.close()
                raise WireError(f"{parts.netloc} broke the HTTP protocol ({type(exc).__name__})") from None
            except OSError as exc:
                connection.close()
                if "Tunnel connection failed" in str(exc):
                    raise WireError(f"proxy {proxy} refused the tunnel to {parts.netloc} ({exc})") from None
                raise WireError(f"cannot reach {parts.netloc}: {exc.strerror or exc}") from None
        raise WireError(f"{parts.netloc} closed the connection")  # pragma: no cover - the loop returns or raises

    def _connection(self, key: tuple[str, str, int], scheme: str, host: str, port: int, proxy: str | None,
                    timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop(), True
        if proxy:
            proxy_parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            proxy_host, proxy_port = proxy_parts.hostname or "", proxy_parts.port or 80
            tunnel_headers = {}
            if proxy_parts.username:
                import base64

                raw = f"{urllib.parse.unquote(proxy_parts.username)}:{urllib.parse.unquote(proxy_parts.password or '')}"
                tunnel_headers["Proxy-Authorization"] = "Basic " + base64.b64encode(raw.encode()).decode()
            if scheme == "https":
                connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                    proxy_host, proxy_port, timeout=timeout, context=self._context)
                connection.set_tunnel(host if ":" not in host else f"[{host}]", port, headers=tunnel_headers)
            else:
                connection = http.client.HTTPConnection(proxy_host, proxy_port, timeout=timeout)
        elif scheme == "https":
            connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=self._context)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout)
        return connection, False

    def _release(self, key: tuple[str, str, int], connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.setdefault(key, []).append(connection)

    def close(self) -> None:
        with self._lock:
            pools, self._idle = self._idle, {}
        for connections in pools.values():
            for connection in connections:
                connection.close()
