"""serve's HTTP side: /metrics, /healthz and /readyz answered from a Board, on the standard library's
ThreadingHTTPServer, with the limits a long-running exporter needs (docs/serve.md, "Limits"):

- a listen backlog of BACKLOG, so that a burst of scrapes (many Prometheus replicas, a federation) queues
  instead of being dropped (the standard library's default is 5);
- at most MAX_CONNECTIONS connections at once (a thread each): when every one is taken, the connection that
  has been idle longest is closed to make room, else the next one waits in the backlog for a request to end
  (each is bounded, below) and is answered 503 only if none does, so idle or slow clients can never take
  every thread and file descriptor, nor keep a scraper out;
- a connection that sends nothing for IDLE_SECONDS is closed, and a request (line, headers and answer)
  must be over within REQUEST_SECONDS of its first byte, however slowly it trickles in;
- the request line and headers together are at most MAX_HEADER_BYTES (431 past it), so a client cannot
  make the process hold megabytes of headers.

Not prometheus_client's start_http_server: that one answers metrics on every path (no /healthz or /readyz,
no 404), binds in a thread of its own and leaves no hook to refuse a busy port with one line, to stop at
once on SIGTERM, or to bound connections and slow clients. Its exposition pieces (format negotiation, gzip)
are used, through fleet/metrics.py. A server library (waitress, for one) would bound connections and header
sizes too, but not the time a client may take to trickle its headers in, which is the limit that matters
against a slow client; these few limits on the standard library's server keep the dependency list as it is.
"""

from __future__ import annotations

import errno
import http.client
import os
import socket
import socketserver
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.fleet.figures import ClusterFigures

BACKLOG = 512
MAX_CONNECTIONS = 64
IDLE_SECONDS = 30.0
REQUEST_SECONDS = 15.0
_TEST_ENV = "KUBECTL_WIN_TEST_SERVE_"  # tests shorten IDLE_SECONDS and REQUEST_SECONDS; no user path reads it
MAX_HEADER_BYTES = 16 * 1024
BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

NOT_READY = b"not every cluster has been scanned yet\n"
NO_FIGURES = b"no scan has finished yet\n"
STALE = b"no scan has finished for too long: the scan loop is stuck\n"


class Board:
    """What the server answers with: each cluster's figures from its last finished scan, in one immutable
    mapping replaced whole (a scrape never sees a cluster half updated). A cluster's figures are published as
    soon as its scan ends, so one slow cluster never holds back the others'.

    Ready once every cluster has had a first result (success or failure). Healthy while scans keep finishing:
    a scan loop that produced nothing for `stale_after` seconds (a bug, a wedged thread) turns /healthz to 503
    so that the kubelet restarts the pod."""

    def __init__(self, clusters: tuple[str, ...] = (), stale_after: float | None = None,
                 cluster_label: str | None = None) -> None:
        self.cluster_label = cluster_label  # the label that names each cluster (metrics.label_for)
        self.figures: Mapping[str, ClusterFigures] = MappingProxyType({})
        self.clusters = clusters
        self.stale_after = stale_after
        self.completed = threading.Event()  # every cluster has a first result
        self._lock = threading.Lock()
        self._progress = time.monotonic()

    def publish(self, figures: Mapping[str, ClusterFigures]) -> None:
        with self._lock:
            self.figures = MappingProxyType(dict(figures))
            self._progress = time.monotonic()
            self._check_complete()

    def publish_one(self, label: str, figures: ClusterFigures) -> None:
        with self._lock:
            self.figures = MappingProxyType({**self.figures, label: figures})
            self._progress = time.monotonic()
            self._check_complete()

    def _check_complete(self) -> None:
        if all(label in self.figures for label in self.clusters):
            self.completed.set()

    @property
    def healthy(self) -> bool:
        return self.stale_after is None or time.monotonic() - self._progress <= self.stale_after


class _CappedReader:
    """The request's reader, refusing to hand out more than `left` bytes of request line and headers: past
    that, http.server answers 431 instead of buffering whatever the client sends."""

    def __init__(self, raw: Any, left: int) -> None:
        self._raw, self.left = raw, left

    def readline(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise http.client.LineTooLong("request headers")
        line = self._raw.readline(self.left + 1 if size < 0 else min(size, self.left + 1))
        self.left -= len(line)
        if self.left < 0:
            raise http.client.LineTooLong("request headers")
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection between scrapes

    def setup(self) -> None:
        self.timeout = self.server.idle_seconds
        super().setup()

    def handle_one_request(self) -> None:
        """Wait (the idle time at most) for a request to start, then give it the request time in all."""
        reaper = self.server.reaper
        reaper.idle(self.connection)
        try:
            started = self.rfile.peek(1)
        except (TimeoutError, OSError):
            started = b""
        if not started:
            reaper.forget(self.connection)
            self.close_connection = True
            return
        raw, self.rfile = self.rfile, _CappedReader(self.rfile, MAX_HEADER_BYTES)  # type: ignore[assignment]
        reaper.watch(self.connection, self.server.request_seconds)
        try:
            super().handle_one_request()
        finally:
            self.server.reaper.forget(self.connection)
            self.rfile = raw

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        path = self.path.split("?", 1)[0]
        board = self.server.board
        if path == "/metrics":
            if not board.figures:
                self._answer(503, NO_FIGURES)
                return
            from kubectl_win.fleet.metrics import exposition

            body, headers = exposition(board.figures, self.headers.get("Accept", ""),
                                       self.headers.get("Accept-Encoding", ""), cluster_label=board.cluster_label)
            self._answer(200, body, headers)
        elif path == "/healthz":
            self._answer(200, b"ok\n") if board.healthy else self._answer(503, STALE)
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


class _Reaper:
    """Shuts down connections whose request ran past its time, and the longest idle one when room is needed
    (one thread for all of them)."""

    def __init__(self) -> None:
        self._due: dict[socket.socket, float] = {}  # a request under way -> when its time is up
        self._idle: dict[socket.socket, float] = {}  # waiting for a request -> since when
        self._lock = threading.Lock()
        self._wake = threading.Event()
        threading.Thread(target=self._run, name="serve-reaper", daemon=True).start()

    def idle(self, connection: socket.socket) -> None:
        with self._lock:
            self._due.pop(connection, None)
            self._idle[connection] = time.monotonic()

    def watch(self, connection: socket.socket, seconds: float) -> None:
        with self._lock:
            self._idle.pop(connection, None)
            self._due[connection] = time.monotonic() + seconds

    def forget(self, connection: socket.socket) -> None:
        with self._lock:
            self._due.pop(connection, None)
            self._idle.pop(connection, None)

    def evict_idle(self) -> bool:
        """Close the connection idle longest; False when none is idle."""
        with self._lock:
            if not self._idle:
                return False
            oldest = min(self._idle, key=self._idle.__getitem__)
            del self._idle[oldest]
        _close(oldest)
        return True

    def _run(self) -> None:
        while not self._wake.wait(0.25):
            now = time.monotonic()
            with self._lock:
                late = [conn for conn, due in self._due.items() if due <= now]
                for conn in late:
                    del self._due[conn]
            for conn in late:
                _close(conn)

    def stop(self) -> None:
        self._wake.set()


def _close(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)  # the handler's read or write fails, and it ends
    except OSError:
        pass


class MetricsServer(ThreadingHTTPServer):
    daemon_threads = True  # a request under way never holds up the exit
    request_queue_size = BACKLOG
    # SO_REUSEADDR lets a restart bind past TIME_WAIT on POSIX; on Windows it would let two servers share
    # the port, so there a busy port is refused instead.
    allow_reuse_address = os.name != "nt"

    def __init__(self, host: str, port: int, board: Board) -> None:
        self.board = board
        self.reaper = _Reaper()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.idle_seconds = _test_seconds("IDLE", IDLE_SECONDS)
        self.request_seconds = _test_seconds("REQUEST", REQUEST_SECONDS)
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

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):  # out of descriptors: wait, rather than spin on accept
                time.sleep(0.1)
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        # Every slot taken: make room by closing the longest idle connection (its thread ends at once), else
        # wait for a request to end (each is bounded by the request time; meanwhile new connections queue
        # in the backlog), and refuse this one only if none does.
        if not self._slots.acquire(blocking=False):
            self.reaper.evict_idle()
            if not self._slots.acquire(timeout=self.request_seconds):
                try:
                    request.setblocking(False)
                    request.send(BUSY)
                except OSError:
                    pass
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """No traceback per request: a client that went away, or whose time ran out, is nothing to report; a
        bug is one line on stderr."""
        import sys

        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        sys.stderr.write(f"serve: internal error answering a request: {type(error).__name__}: {error}\n")

    def server_close(self) -> None:
        self.reaper.stop()
        super().server_close()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{_show(str(host), int(port))}"


def _test_seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(_TEST_ENV + name + "_SECONDS") or default)
    except ValueError:
        return default


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
