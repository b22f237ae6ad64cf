"""The byte pipe under the exec websocket: TCP to the API server, optionally through an HTTP(S)
CONNECT proxy (kubeconfig `proxy-url` or HTTPS_PROXY, as the rest of the access layer), with TLS.

Why TLS runs on memory BIOs rather than an `ssl.SSLSocket`: the websocket is read by one thread
while others write bulk stdin, and an SSL object must not be used by two threads at once
(records get corrupted under load). Here the SSL object is only touched under a short lock and
the blocking socket calls happen outside it. The same class wraps the API server's TLS inside an
https:// proxy's TLS, so both proxy schemes share one code path.

Parsing the proxy URL and its CONNECT answer is left to the websockets library.
"""

from __future__ import annotations

import base64
import socket
import ssl
import threading
from typing import Protocol
from urllib.parse import urlsplit


class WireError(Exception):
    """The connection could not be set up; the message is one line for the user."""


class ByteChannel(Protocol):
    def send(self, data: bytes | bytearray | memoryview) -> None: ...

    def recv_into(self, view: memoryview) -> int: ...


class PlainIO:
    """Bytes over a TCP socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self.sock.sendall(data)

    def recv_into(self, view: memoryview) -> int:
        return self.sock.recv_into(view)


class TlsIO:
    """TLS over memory BIOs on top of another channel, so one thread can read while another writes."""

    def __init__(self, raw: ByteChannel, context: ssl.SSLContext, hostname: str | None) -> None:
        self.raw = raw
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_hostname=hostname)
        self._lock = threading.Lock()  # the SSL object and its BIOs
        self._buffer = bytearray(262144)  # raw reads (only the one reader thread uses it)
        self._send_lock = threading.Lock()  # keeps records in order on the wire
        while True:
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                count = raw.recv_into(memoryview(self._buffer))
                if not count:
                    raise ConnectionResetError("the peer closed the connection during the TLS handshake") from None
                self._incoming.write(memoryview(self._buffer)[:count])
        self._flush()

    def _flush(self) -> None:
        with self._send_lock:
            with self._lock:
                data = self._outgoing.read()
            if data:
                self.raw.send(data)

    def send(self, data: bytes | bytearray | memoryview) -> None:
        with self._send_lock:
            with self._lock:
                self._tls.write(data)
                records = self._outgoing.read()
            self.raw.send(records)

    def recv_into(self, view: memoryview) -> int:
        """Decrypt into `view` all that is already received (several TLS records if there are);
        0 at the end of the stream."""
        size = len(view)
        raw = memoryview(self._buffer)
        while True:
            data = 0
            with self._lock:
                try:
                    while data < size:  # one lock round trip for every record already buffered
                        count = self._tls.read(size - data, view[data:])
                        if not count:  # the peer's close_notify: the end of the stream
                            if not data:
                                return 0
                            break
                        data += count
                except ssl.SSLWantReadError:
                    pass
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    if not data:
                        return 0
                pending = self._outgoing.pending
            if pending and self._send_lock.acquire(blocking=False):
                # TLS answered something (e.g. a key update); a writer busy sending will carry it otherwise.
                try:
                    with self._lock:
                        records = self._outgoing.read()
                    self.raw.send(records)
                finally:
                    self._send_lock.release()
            if data:
                return data
            count = self.raw.recv_into(raw)
            with self._lock:
                if count:
                    self._incoming.write(raw[:count])
                else:
                    self._incoming.write_eof()


def open_channel(url: str, *, timeout: float, ssl_context: ssl.SSLContext | None, server_hostname: str | None,
                 proxy: str | None) -> tuple[socket.socket, ByteChannel]:
    """Connect to the host of a ws:// or wss:// URL (through `proxy` when given), TLS included.

    Returns the TCP socket (for timeouts and shutdown) and the channel to read and write.
    """
    parts = urlsplit(url)
    secure = parts.scheme in ("wss", "https")
    host = parts.hostname or "localhost"
    port = parts.port or (443 if secure else 80)
    if proxy:
        sock, channel = _through_proxy(proxy, host, port, timeout)
    else:
        sock = _connect(host, port, timeout, "the API server")
        channel = PlainIO(sock)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if secure:
            context = ssl_context or ssl.create_default_context()
            channel = TlsIO(channel, context, server_hostname or host)
    except (OSError, ssl.SSLError) as exc:
        sock.close()
        raise WireError(f"TLS handshake with {format_address(host, port)} failed: {os_reason(exc)}") from None
    except BaseException:
        sock.close()
        raise
    return sock, channel


def _connect(host: str, port: int, timeout: float, what: str) -> socket.socket:
    try:
        return socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise WireError(f"cannot reach {what} at {format_address(host, port)}: {os_reason(exc)}") from None


def _through_proxy(proxy_url: str, host: str, port: int, timeout: float) -> tuple[socket.socket, ByteChannel]:
    from websockets.exceptions import InvalidProxy
    from websockets.proxy import parse_proxy

    try:
        proxy = parse_proxy(proxy_url)
    except InvalidProxy:
        raise WireError("the proxy URL (proxy-url or HTTPS_PROXY) is not valid") from None
    where = format_address(proxy.host, proxy.port)
    if proxy.scheme not in ("http", "https"):
        raise WireError(f"{proxy.scheme}:// proxies are not supported for port-forward; use an http:// or "
                        "https:// proxy")
    sock = _connect(proxy.host, proxy.port, timeout, "the proxy")
    try:
        channel: ByteChannel = PlainIO(sock)
        if proxy.scheme == "https":
            channel = TlsIO(channel, ssl.create_default_context(), proxy.host)
        authority = format_address(host, port)
        lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}", "User-Agent: kubectl-win"]
        if proxy.user_info is not None:
            token = base64.b64encode(":".join(proxy.user_info).encode()).decode()
            lines.append(f"Proxy-Authorization: Basic {token}")
        channel.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        status, reason = _read_connect_answer(channel)
    except WireError:
        sock.close()
        raise
    except (OSError, ssl.SSLError) as exc:
        sock.close()
        raise WireError(f"the proxy at {where} failed: {os_reason(exc)}") from None
    except BaseException:
        sock.close()
        raise
    if not 200 <= status < 300:
        sock.close()
        raise WireError(f"the proxy at {where} refused to connect to {format_address(host, port)}: "
                        f"HTTP {status} {reason}".rstrip())
    return sock, channel


def _read_connect_answer(channel: ByteChannel) -> tuple[int, str]:
    """The proxy's status and reason, read exactly to the end of its headers (what follows is the tunnel)."""
    from websockets.http11 import Response
    from websockets.streams import StreamReader

    reader = StreamReader()
    parser = Response.parse(reader.read_line, reader.read_exact, reader.read_to_eof, proxy=True)
    one = memoryview(bytearray(1))  # byte by byte: nothing of the tunnel may be consumed here
    try:
        next(parser)
        while True:
            if channel.recv_into(one):
                reader.feed_data(one)
            else:
                reader.feed_eof()
            next(parser)
    except StopIteration as done:
        response = done.value
        return response.status_code, response.reason_phrase
    except (EOFError, ValueError, LookupError) as exc:
        raise WireError(f"the proxy sent an invalid answer to CONNECT: {exc}") from None


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def os_reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
