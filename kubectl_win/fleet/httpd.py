"""serve's HTTP side: /metrics, /healthz and /readyz answered from a Board, on the standard library's
HTTPServer, with the limits a long-running exporter needs (docs/serve.md, "Limits"). Every connection it
accepts gets an answer: the one asked for, or a status (503 with Retry-After, 408, 431), never a bare close.

- A listen backlog of BACKLOG, so that a burst of scrapes (many Prometheus replicas, a federation) queues
  instead of being dropped (the standard library's default is 5).
- A connection waits for its request in the waiting room (one thread, a selector) and holds no thread there:
  one of WORKERS threads takes it only once its request's bytes are there. A burst of scrapes waits for a
  worker; idle or slow clients can never take the threads nor keep a scraper out.
- At most MAX_CONNECTIONS connections are open: past it, room is made by closing the connection kept alive
  longest after its answer, else by answering the one that has waited longest without sending anything 503
  with Retry-After; when every open one has a request under way or queued, the new one is answered that.
- A connection that sends no request for IDLE_SECONDS is answered 408 (one kept alive after an answer is
  closed, as HTTP allows); a request must arrive within REQUEST_SECONDS of its first read, however slowly it
  trickles in (408 past it), and its answer be taken within as long.
- The request line and headers together are at most MAX_HEADER_BYTES (431 past it), so a client cannot
  make the process hold megabytes of headers.

A deadline counts only when there is nothing to read: a request that arrived while the process was starved of
CPU (its deadline passing meanwhile) is answered, never timed out. A status is followed by a lingering close
(the rest of what the client sends is read and dropped for LINGER_SECONDS), so that closing does not reset
the connection before the client has read it.

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
import queue
import selectors
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.fleet.figures import ClusterFigures

BACKLOG = 512
WORKERS = 64
MAX_CONNECTIONS = 500  # each one a socket in the waiting room's selector; Windows' select() takes 512 at most
IDLE_SECONDS = 30.0
REQUEST_SECONDS = 15.0
LINGER_SECONDS = 2.0
_TEST_ENV = "KUBECTL_WIN_TEST_SERVE_"  # tests shorten IDLE_SECONDS and REQUEST_SECONDS; no user path reads it
MAX_HEADER_BYTES = 16 * 1024


def _status(code: int, reason: str, *headers: str) -> bytes:
    return "\r\n".join([f"HTTP/1.1 {code} {reason}", *headers, "Content-Length: 0", "Connection: close", "",
                         ""]).encode()


BUSY = _status(503, "Service Unavailable", "Retry-After: 1")
TIMED_OUT = _status(408, "Request Timeout")
TOO_LARGE = _status(431, "Request Header Fields Too Large")

NOT_READY = b"not every cluster has been scanned yet\n"
NO_FIGURES = b"no scan has finished yet\n"
STALE = b"no scan has finished for too long: the scan loop is stuck\n"

Clock = Callable[[], float]


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


class _RequestReader:
    """A request's reader: its line and headers at most `left` bytes together (past that, a 431 instead of
    buffering whatever the client sends), all of them by `deadline`. The deadline is looked at only before
    waiting for bytes not here yet: what arrived while the process was starved of CPU is read, not timed out."""

    def __init__(self, buffered: Any, connection: socket.socket, left: int, deadline: float, clock: Clock) -> None:
        self._buffered, self._connection, self.left = buffered, connection, left
        self._deadline, self._clock = deadline, clock
        self.timed_out = False

    def readline(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise http.client.LineTooLong("request headers")
        limit = self.left + 1 if size < 0 else min(size, self.left + 1)
        line = bytearray()
        while len(line) < limit:
            here = self._here()
            if not here:
                break  # the client closed its side
            end = here.find(b"\n", 0, limit - len(line))
            line += self._buffered.read(end + 1 if end >= 0 else min(len(here), limit - len(line)))
            if end >= 0:
                break
        self.left -= len(line)
        if self.left < 0:
            raise http.client.LineTooLong("request headers")
        return bytes(line)

    def _here(self) -> bytes:
        """The bytes buffered already, else the next to arrive before the deadline (TimeoutError past it)."""
        self._connection.settimeout(max(self._deadline - self._clock(), 0.001))
        try:
            return self._buffered.peek(1)
        except TimeoutError:
            self.timed_out = True
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._buffered, name)


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection between scrapes

    def setup(self) -> None:
        self.request.settimeout(None)  # the waiting room had it non-blocking; each read and write is bounded
        super().setup()
        self._buffered = self.rfile
        self.answering = False

    def handle(self) -> None:
        """The request that woke this connection, and any the client sent behind it already; between
        requests the connection waits in the waiting room, not in this thread."""
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection and self._more():
            self.handle_one_request()

    def _more(self) -> bool:
        """Whether the next request's bytes are here already (buffered or in the socket), without waiting."""
        self.request.settimeout(0.0)
        try:
            return bool(self._buffered.peek(1))
        except OSError:
            return False

    def handle_one_request(self) -> None:
        """One request, read within the request time, line and headers within MAX_HEADER_BYTES; past either
        it is answered a status (408, 431: http.server answers headers past the cap itself)."""
        server = self.server
        reader = _RequestReader(self._buffered, self.request, MAX_HEADER_BYTES,
                                server.clock() + server.request_seconds, server.clock)
        self.rfile, self.answering = reader, False  # type: ignore[assignment]
        try:
            super().handle_one_request()
        except http.client.LineTooLong:  # the request line alone is past the cap
            self._refuse(TOO_LARGE)
        finally:
            self.rfile = self._buffered
        if reader.timed_out:
            self._refuse(TIMED_OUT)

    def _refuse(self, status: bytes) -> None:
        self.close_connection = True
        if not self.answering:  # once an answer has started, only a close can end it
            self.answering = True
            self.request.settimeout(self.server.request_seconds)
            self.request.sendall(status)

    def send_response_only(self, code: int, message: str | None = None) -> None:
        """Every answer starts here (http.server's errors too): from now on the client must take it within the
        request time, and no status can be sent in its place."""
        self.answering = True
        self.request.settimeout(self.server.request_seconds)
        super().send_response_only(code, message)

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        path = self.path.split("?", 1)[0]
        board = self.server.board
        if path == "/metrics":
            if not board.figures:
                self._answer(503, NO_FIGURES)
                return
            with self.server.exposing:
                body, headers = self.server.exposition(board.figures, self.headers.get("Accept", ""),
                                                       self.headers.get("Accept-Encoding", ""),
                                                       cluster_label=board.cluster_label)
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


NEW, KEPT, CLOSING = "new", "kept", "closing"  # waiting for a first request, for the next one, to be closed
_EVICTION_ORDER = {CLOSING: 0, KEPT: 1, NEW: 2}


@dataclass
class _Waiting:
    address: Any
    state: str
    since: float
    deadline: float


class _Room:
    """The connections waiting for something to read, watched by one thread: a new one for its first request,
    one kept alive for its next, a closing one for its client to read the status and close. One with bytes to
    read goes to a worker; one past its deadline, or closed to make room, is answered a status first (408,
    503) unless it was answered already. Only this thread changes what it holds; others hand connections in
    through `admit`."""

    def __init__(self, dispatch: Callable[[socket.socket, Any], None], idle_seconds: float, clock: Clock) -> None:
        self._dispatch, self._idle_seconds, self._clock = dispatch, idle_seconds, clock
        self._selector = selectors.DefaultSelector()
        self._waiting: dict[socket.socket, _Waiting] = {}
        self._arrivals: queue.SimpleQueue[tuple[socket.socket, Any, str]] = queue.SimpleQueue()
        self._working = 0  # connections handed to a worker and not back yet
        self.accepted = 0  # connections taken in since the start
        self._bell, self._ring = socket.socketpair()  # a byte on _ring wakes the thread
        self._bell.setblocking(False)
        self._ring.setblocking(False)
        self._selector.register(self._bell, selectors.EVENT_READ)
        self._stopped = False
        threading.Thread(target=self._run, name="serve-waiting-room", daemon=True).start()

    def admit(self, connection: socket.socket, address: Any, state: str) -> None:
        """Hand a connection in: NEW when just accepted, KEPT or CLOSING when a worker is done with it."""
        self._arrivals.put((connection, address, state))
        try:
            self._ring.send(b"\0")
        except OSError:
            pass  # the bell is full (it rings anyway) or closed (stopping)

    @property
    def waiting(self) -> int:
        """How many connections wait here (for a request, or to be closed)."""
        return len(self._waiting)

    def stop(self) -> None:
        self._stopped = True
        self.admit(self._bell, None, CLOSING)  # wakes the thread; it closes every connection it holds

    def _run(self) -> None:
        while not self._stopped:
            events = self._selector.select(self._timeout())
            self._take_arrivals()
            for key, _ in events:
                if key.fileobj is self._bell:
                    self._quiet_bell()
                elif key.fileobj in self._waiting:
                    self._readable(key.fileobj)  # type: ignore[arg-type]
            self._expire()
        for connection in list(self._waiting):
            self._close(connection)
        self._bell.close()
        self._ring.close()

    def _timeout(self) -> float | None:
        if not self._waiting:
            return None
        return max(0.0, min(w.deadline for w in self._waiting.values()) - self._clock())

    def _quiet_bell(self) -> None:
        try:
            while self._bell.recv(4096):
                pass
        except OSError:
            pass

    def _take_arrivals(self) -> None:
        while True:
            try:
                connection, address, state = self._arrivals.get_nowait()
            except queue.Empty:
                return
            if connection is self._bell:
                continue
            if state == NEW:
                self.accepted += 1
                if len(self._waiting) + self._working >= MAX_CONNECTIONS and not self._make_room():
                    _send(connection, BUSY)
                    _end(connection)
                    continue
            else:
                self._working -= 1
            self._wait(connection, address, state)

    def _wait(self, connection: socket.socket, address: Any, state: str) -> None:
        now = self._clock()
        if state == CLOSING:
            try:
                connection.shutdown(socket.SHUT_WR)  # the answer is complete; the client reads it, then closes
            except OSError:
                pass
        try:
            connection.setblocking(False)
            self._selector.register(connection, selectors.EVENT_READ)
        except (OSError, ValueError):
            connection.close()
            return
        linger = LINGER_SECONDS if state == CLOSING else self._idle_seconds
        self._waiting[connection] = _Waiting(address, state, now, now + linger)

    def _readable(self, connection: socket.socket) -> None:
        if self._waiting[connection].state == CLOSING:
            if _drained(connection):
                self._close(connection)
            return
        self._to_worker(connection)

    def _to_worker(self, connection: socket.socket) -> None:
        waiting = self._waiting.pop(connection)
        self._selector.unregister(connection)
        self._working += 1
        self._dispatch(connection, waiting.address)

    def _expire(self) -> None:
        now = self._clock()
        for connection in [c for c, w in self._waiting.items() if w.deadline <= now]:
            self._give_up(connection, TIMED_OUT)

    def _make_room(self) -> bool:
        """Close one connection to make room for a new one, the least in need first: True if one was."""
        for connection in sorted(self._waiting, key=lambda c: (_EVICTION_ORDER[self._waiting[c].state],
                                                               self._waiting[c].since)):
            if self._give_up(connection, BUSY):
                return True
        return False

    def _give_up(self, connection: socket.socket, status: bytes) -> bool:
        """End a connection that has nothing to read, answering `status` to one that never sent a request;
        one whose request has arrived after all goes to a worker instead (False)."""
        waiting = self._waiting[connection]
        if waiting.state != CLOSING and _pending(connection):
            self._to_worker(connection)
            return False
        if waiting.state == NEW:
            _send(connection, status)
            self._close(connection, lingering=status is TIMED_OUT)
        else:
            self._close(connection)
        return True

    def _close(self, connection: socket.socket, lingering: bool = False) -> None:
        """Close, or (lingering) close our side and wait, a while, for the client to read the status and close
        its own."""
        waiting = self._waiting.pop(connection)
        self._selector.unregister(connection)
        if lingering:
            self._wait(connection, waiting.address, CLOSING)
        else:
            _end(connection)


def _pending(connection: socket.socket) -> bool:
    """Whether the client has sent something not read yet, or closed its side (both are for a worker)."""
    try:
        connection.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset: the worker finds out and ends it
    return True


def _drained(connection: socket.socket) -> bool:
    """Read and drop what a closing connection's client sent: True once it has closed its side too."""
    try:
        while connection.recv(65536):
            pass
    except BlockingIOError:
        return False
    except OSError:
        pass
    return True


def _send(connection: socket.socket, status: bytes) -> None:
    try:
        connection.setblocking(False)
        connection.send(status)  # a few dozen bytes into an empty buffer: it never waits
    except OSError:
        pass


def _end(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    connection.close()


class _Workers:
    """At most `size` threads answering connections, started as needed and kept; a connection waits in the
    queue for one. Each queued connection is claimed once: by an idle thread, a new one, or the next to end."""

    def __init__(self, work: Callable[[socket.socket, Any], None], size: int) -> None:
        self._work, self._size = work, size
        self._queue: queue.SimpleQueue[tuple[socket.socket, Any]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = self._idle = self._unclaimed = 0

    def submit(self, connection: socket.socket, address: Any) -> None:
        with self._lock:
            self._queue.put((connection, address))
            if self._idle:
                self._idle -= 1
            elif self._started < self._size:
                self._started += 1
                threading.Thread(target=self._run, name=f"serve-http-{self._started}", daemon=True).start()
            else:
                self._unclaimed += 1

    def _run(self) -> None:
        while True:
            self._work(*self._queue.get())
            with self._lock:
                if self._unclaimed:
                    self._unclaimed -= 1
                else:
                    self._idle += 1


class MetricsServer(HTTPServer):
    request_queue_size = BACKLOG
    # SO_REUSEADDR lets a restart bind past TIME_WAIT on POSIX; on Windows it would let two servers share
    # the port, so there a busy port is refused instead.
    allow_reuse_address = os.name != "nt"

    def __init__(self, host: str, port: int, board: Board, clock: Clock = time.monotonic) -> None:
        from kubectl_win.fleet.metrics import exposition  # now, not in the first scrape: no command but serve needs it

        self.exposition = exposition
        # One exposition at a time: the GIL runs them one at a time anyway, and the collector's first use loads
        # knowledge and modules lazily, which a burst of first scrapes would otherwise do in 64 threads at once.
        self.exposing = threading.Lock()
        self.board = board
        self.clock = clock
        self.idle_seconds = _test_seconds("IDLE", IDLE_SECONDS)
        self.request_seconds = _test_seconds("REQUEST", REQUEST_SECONDS)
        self.address_family = _family(host, port)
        self.room = _Room(_Workers(self._answer, WORKERS).submit, self.idle_seconds, clock)  # a failed bind stops it
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
        """Accepted: to the waiting room, which hands it to a worker once its request is there."""
        self.room.admit(request, client_address, NEW)

    def _answer(self, connection: socket.socket, address: Any) -> None:
        """A worker's job: the requests the connection has sent, then back to the waiting room."""
        state = CLOSING
        try:
            if not _Handler(connection, address, self).close_connection:
                state = KEPT
        except Exception:
            self.handle_error(connection, address)
        self.room.admit(connection, address, state)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """No traceback per request: a client that went away, or whose time ran out, is nothing to report; a
        bug is one line on stderr."""
        import sys

        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        sys.stderr.write(f"serve: internal error answering a request: {type(error).__name__}: {error}\n")

    def server_close(self) -> None:
        self.room.stop()
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
