"""serve's HTTP side: /metrics, /healthz and /readyz answered from a Board, on the standard library's
ThreadingHTTPServer.

Not prometheus_client's start_http_server: that one answers metrics on every path (no /healthz or /readyz,
no 404), binds in a thread of its own and leaves no hook to refuse a busy port with one line or to stop at
once on SIGTERM. Its exposition pieces (format negotiation, gzip) are used, through fleet/metrics.py.
"""

from __future__ import annotations

import os
import socket
import socketserver
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import TYPE_CHECKING

from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.fleet.figures import ClusterFigures

NOT_READY = b"no scan has completed yet\n"


class Board:
    """What the server answers with: the figures of the last completed scan, one immutable mapping replaced
    whole (a scrape never sees a scan half done)."""

    def __init__(self, cluster_label: str | None = None) -> None:
        self.cluster_label = cluster_label  # the label that names each cluster (metrics.label_for)
        self.figures: Mapping[str, ClusterFigures] = MappingProxyType({})
        self.completed = threading.Event()

    def publish(self, figures: Mapping[str, ClusterFigures]) -> None:
        self.figures = MappingProxyType(dict(figures))
        self.completed.set()


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection between scrapes

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        path = self.path.split("?", 1)[0]
        board = self.server.board
        if path == "/metrics":
            if not board.completed.is_set():
                self._answer(503, NOT_READY)
                return
            from kubectl_win.fleet.metrics import exposition

            body, headers = exposition(board.figures, self.headers.get("Accept", ""),
                                       self.headers.get("Accept-Encoding", ""), cluster_label=board.cluster_label)
            self._answer(200, body, headers)
        elif path == "/healthz":
            self._answer(200, b"ok\n")
        elif path == "/readyz" and board.completed.is_set():
            self._answer(200, b"ok\n")
        elif path == "/readyz":
            self._answer(503, NOT_READY)
        else:
            self._answer(404, b"not found: try /metrics, /healthz or /readyz\n")

    def _answer(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "text/plain; charset=utf-8"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        """No line per request: a scrape every 15 s would drown the log."""


class MetricsServer(ThreadingHTTPServer):
    daemon_threads = True  # a request under way never holds up the exit
    # SO_REUSEADDR lets a restart bind past TIME_WAIT on POSIX; on Windows it would let two servers share
    # the port, so there a busy port is refused instead.
    allow_reuse_address = os.name != "nt"

    def __init__(self, host: str, port: int, board: Board) -> None:
        self.board = board
        self.address_family = _family(host, port)
        try:
            super().__init__((host, port), _Handler)
        except OSError as exc:
            raise UsageError(f"cannot listen on {_show(host, port)}: {_reason(exc)}") from None

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse lookup of the address (getfqdn), which can stall a pod's start
        for as long as its DNS takes to give up."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{_show(str(host), int(port))}"


def _family(host: str, port: int) -> socket.AddressFamily:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {_show(host, port)}: {exc.strerror}") from None


def _show(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _reason(exc: OSError) -> str:
    import errno

    if exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048:
        return "the address is already in use (another serve or exporter?)"
    return exc.strerror or str(exc)
