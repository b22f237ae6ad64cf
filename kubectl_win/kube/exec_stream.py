"""The exec websocket: the Kubernetes channel protocols on the websockets library.

Offers `v5.channel.k8s.io` then `v4.channel.k8s.io`. Each binary message is one channel byte
plus payload: 0 stdin, 1 stdout, 2 stderr, 3 status (a JSON metav1.Status when the process ends).
v5 adds the CLOSE signal `[255, channel]`, which is how a local half-close reaches the relay.

The RFC 6455 work is websockets': its Sans-I/O `ClientProtocol` builds and checks the upgrade and
builds every outgoing frame (masked in its C extension), and its `Frame.parse` reads every
incoming frame (opcode and control-frame checks, the size cap before any payload is read). What
is left here is the threading and the plumbing around them:

- websockets' own threaded client holds one lock while a send blocks, so a back-pressured stdin
  writer would stop every read. Here the protocol object is only touched under a short lock, the
  bytes it produces queue in order, and whoever holds the write lock sends them. The reader never
  waits for that lock: a pong or close reply it owes is written by a short-lived thread, or by
  the writer already sending.
- Incoming frames are parsed from our own read buffer, and a large payload is read from TLS
  straight into its own buffer: one copy per byte, where feeding the protocol object costs two
  more (bench/bench_portforward.py measures download throughput).

Bytes travel over wire.py (TCP, proxies, TLS).
"""

from __future__ import annotations

import collections
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from kubectl_win.kube.wire import ByteChannel, WireError, format_address, open_channel, os_reason

if TYPE_CHECKING:
    from kubectl_win.kube.client import WebsocketArgs

PROTOCOL_V5 = "v5.channel.k8s.io"
PROTOCOL_V4 = "v4.channel.k8s.io"
OFFERED_PROTOCOLS = (PROTOCOL_V5, PROTOCOL_V4)

STDIN, STDOUT, STDERR, STATUS = 0, 1, 2, 3
CLOSE_SIGNAL = 255

# The largest message accepted from the API server. kube-apiserver sends stdout in frames of a few
# tens of KiB; 16 MiB leaves room for any relay and server while a forged 64-bit length fails
# before anything is allocated for it.
MAX_MESSAGE_BYTES = 16 << 20
RECV_BYTES = 256 * 1024
# stdin goes out in messages of at most this much: websockets builds each frame in fresh buffers,
# and past 128 KiB every one of those is new memory from the OS (bench/bench_portforward.py measures
# upload throughput).
SEND_MESSAGE_BYTES = 64 * 1024
MAX_ERROR_BODY = 64 * 1024

_LOG = logging.getLogger("kubectl_win.portforward.websocket")
_LOG.addHandler(logging.NullHandler())


class ExecError(Exception):
    """The exec stream could not be opened or broke; `message` is one line for the user."""


class ExecRejected(ExecError):
    """The API server refused the upgrade (404 pod gone, 403 RBAC, 400 bad protocol, ...)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


class StreamBroken(ExecError):
    """The websocket died: reset, dropped, or nothing heard within the read timeout."""


@dataclass
class WebsocketTarget:
    """Where and how to open the websocket; built from the access layer's websocket_args."""

    url: str  # ws:// or wss:// with path and query
    headers: dict[str, str] = field(default_factory=dict)
    ssl_context: ssl.SSLContext | None = None
    server_hostname: str | None = None
    proxy: str | None = None  # http(s):// CONNECT proxy, as the access layer chose it


@dataclass
class ExecStatus:
    """The decoded status channel."""

    success: bool
    exit_code: int | None = None
    reason: str = ""
    message: str = ""

    @classmethod
    def parse(cls, raw: bytes) -> ExecStatus:
        try:
            status = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            # v1-style plain text error
            return cls(success=False, reason="Unknown", message=raw.decode("utf-8", "replace").strip())
        if not isinstance(status, dict):
            return cls(success=False, reason="Unknown", message=str(status))
        if status.get("status") == "Success":
            return cls(success=True, exit_code=0)
        exit_code = None
        for cause in (status.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode":
                try:
                    exit_code = int(cause.get("message", ""))
                except ValueError:
                    pass
        return cls(success=False, exit_code=exit_code, reason=str(status.get("reason", "")),
                   message=str(status.get("message", "")))


def exec_query(command: list[str], container: str, stdin: bool = True) -> list[tuple[str, str]]:
    query = [("command", part) for part in command]
    query += [("container", container), ("stdin", "true" if stdin else "false"), ("stdout", "true"),
              ("stderr", "true"), ("tty", "false")]
    return query


def target_from_args(args: WebsocketArgs) -> WebsocketTarget:
    """A WebsocketTarget from the access layer's WebsocketArgs (kube.client.Cluster.websocket_args)."""
    sslopt = getattr(args, "sslopt", None) or {}
    return WebsocketTarget(args.url, dict(args.headers), getattr(args, "ssl_context", None),
                           sslopt.get("server_hostname"), getattr(args, "proxy", None))


def masking_accelerated() -> bool:
    """True when websockets masks frames in its C extension (for the benchmark's report)."""
    try:
        import websockets.speedups  # noqa: F401
    except ImportError:
        return False
    return True


class ExecStream:
    """One open exec websocket. One reader thread and any number of writers may use it."""

    def __init__(self, sock: socket.socket, channel: ByteChannel, protocol: Any, received: bytearray) -> None:
        self.sock = sock
        self._io = channel
        self._ws = protocol  # websockets.client.ClientProtocol, only touched under _ws_lock
        self.protocol: str = protocol.subprotocol
        self._buffer = received  # received, not yet parsed (only the reader thread touches it)
        self._scratch = memoryview(bytearray(RECV_BYTES))
        self._failure: str | None = None
        self._ws_lock = threading.Lock()
        self._outbox: collections.deque[bytes] = collections.deque()  # frames in protocol order
        self._send_lock = threading.Lock()  # held by whoever writes the outbox to the wire
        self._send_error: str | None = None
        self._closed = False
        self._closed_by_us = False  # set before our close frame leaves: the server's reply is expected
        self.last_heard = time.monotonic()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def closed_by_us(self) -> bool:
        """True once close() was called here, even if the server's close reply arrived first."""
        return self._closed_by_us

    @property
    def supports_close(self) -> bool:
        return self.protocol == PROTOCOL_V5

    # --- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, target: WebsocketTarget, connect_timeout: float = 30.0,
             read_timeout: float | None = 60.0, protocols: tuple[str, ...] = OFFERED_PROTOCOLS) -> ExecStream:
        from websockets.client import ClientProtocol
        from websockets.exceptions import InvalidStatus, InvalidURI
        from websockets.uri import parse_uri

        try:
            uri = parse_uri(target.url)
        except InvalidURI:
            raise ExecError("the API server address is not a valid websocket URL") from None
        try:
            sock, channel = open_channel(target.url, timeout=connect_timeout, ssl_context=target.ssl_context,
                                         server_hostname=target.server_hostname, proxy=target.proxy)
        except WireError as exc:
            raise ExecError(str(exc)) from None
        where = format_address(uri.host, uri.port)
        try:
            protocol = ClientProtocol(uri, subprotocols=list(protocols), max_size=MAX_MESSAGE_BYTES, logger=_LOG)
            request = protocol.connect()
            request.headers["User-Agent"] = "kubectl-win"
            for name, value in target.headers.items():
                if name.lower() not in ("host", "upgrade", "connection", "user-agent") and \
                        not name.lower().startswith("sec-websocket-"):
                    request.headers[name] = value
            protocol.send_request(request)
            for data in protocol.data_to_send():
                channel.send(data)
            events, leftover = _handshake(protocol, channel)
            if protocol.handshake_exc is not None:
                if isinstance(protocol.handshake_exc, InvalidStatus):
                    response = protocol.handshake_exc.response
                    raise _rejection(response.status_code, bytes(response.body or b""))
                raise ExecError(f"the websocket upgrade to {where} failed: {protocol.handshake_exc}")
            if protocol.subprotocol not in protocols:
                raise ExecError(f"the API server chose an unsupported exec protocol {protocol.subprotocol!r}")
            sock.settimeout(read_timeout)
            return cls(sock, channel, protocol, leftover)
        except ExecError:
            sock.close()
            raise
        except TimeoutError:
            sock.close()
            raise ExecError(f"the API server at {where} did not answer the websocket upgrade within "
                            f"{connect_timeout:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise ExecError(f"websocket handshake failed: {os_reason(exc)}") from None

    # --- sending -------------------------------------------------------------------------------
    def _queue(self, make_frames) -> None:  # noqa: ANN001 - a call on the protocol object
        """Run one protocol call and queue the bytes it produced, both under the protocol lock, so
        the outbox holds frames in exactly the order the protocol made them."""
        from websockets.exceptions import InvalidState

        with self._ws_lock:
            if self._closed:
                raise StreamBroken("the exec stream is closed")
            if self._send_error is not None:
                raise StreamBroken(f"the exec stream broke while sending: {self._send_error}")
            try:
                make_frames()
            except InvalidState:
                raise StreamBroken("the exec stream is closing") from None
            self._outbox.extend(self._ws.data_to_send())

    def _write_outbox(self) -> None:
        """Write queued frames in order; the caller holds _send_lock."""
        while True:
            try:
                data = self._outbox.popleft()
            except IndexError:
                return
            if not data:  # the protocol's end-of-stream marker: the stream ends with abort()
                continue
            try:
                self._io.send(data)
            except (OSError, ssl.SSLError) as exc:
                self._send_error = os_reason(exc)
                self._outbox.clear()
                if isinstance(exc, TimeoutError):
                    raise StreamBroken("the API server accepted no data within the read timeout") from None
                raise StreamBroken(f"the exec stream broke while sending: {self._send_error}") from None

    def _flush(self) -> None:
        """Block until everything queued so far is on the wire (or the stream broke)."""
        while self._outbox:
            with self._send_lock:
                self._write_outbox()
            # Loop: a frame queued while we held the lock by a thread that could not take it.

    def _kick(self) -> None:
        """Get queued frames written without blocking this thread: by a helper thread when the
        write lock is free, else by its holder, which looks at the outbox again after releasing it."""
        if self._outbox and self._send_lock.acquire(blocking=False):
            threading.Thread(target=self._drain_and_release, name="exec-websocket-control", daemon=True).start()

    def _drain_and_release(self) -> None:
        try:
            try:
                self._write_outbox()
            finally:
                self._send_lock.release()
            self._flush()
        except ExecError:
            pass

    def _send(self, make_frames) -> None:  # noqa: ANN001
        self._queue(make_frames)
        if self._closed:
            raise StreamBroken("the exec stream is closed")
        self._flush()

    def send_stdin(self, data: bytes | bytearray | memoryview) -> None:
        """Send bytes on stdin. One call's bytes stay together on the wire even when they take
        several messages: callers that write from several threads (the mux) frame their own data."""
        view = memoryview(data)
        messages = []
        for start in range(0, max(len(view), 1), SEND_MESSAGE_BYTES):
            piece = view[start:start + SEND_MESSAGE_BYTES]
            message = bytearray(len(piece) + 1)
            message[0] = STDIN
            message[1:] = piece
            messages.append(message)

        def frame_all() -> None:
            for message in messages:
                self._ws.send_binary(message)
        self._send(frame_all)

    def send_message(self, message: bytes | bytearray | memoryview) -> None:
        """Send one binary message whose first byte is already the channel (stdin): callers that
        build the message in place save a copy per byte on bulk paths. At most MAX_MESSAGE_BYTES."""
        self._send(lambda: self._ws.send_binary(message))

    def close_stdin(self) -> bool:
        """Half-close stdin; True when the protocol could express it (v5)."""
        if not self.supports_close:
            return False
        self._send(lambda: self._ws.send_binary(bytes((CLOSE_SIGNAL, STDIN))))
        return True

    def ping(self) -> None:
        """Queue a keep-alive ping; never blocks behind bulk data (the pinger serves every stream)."""
        self._queue(lambda: self._ws.send_ping(b"kwin"))
        self._kick()

    def close(self, code: int = 1000) -> None:
        """Send a close frame if that can be done within a second, then drop the connection."""
        self._closed_by_us = True
        try:
            self._queue(lambda: self._ws.send_close(code))
            if self._send_lock.acquire(timeout=1.0):
                try:
                    self._write_outbox()
                finally:
                    self._send_lock.release()
        except ExecError:
            pass
        self.abort()

    def abort(self) -> None:
        """Drop the connection now. Takes no lock, so a writer stuck in a send cannot hold it up."""
        self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    # --- receiving -----------------------------------------------------------------------------
    def _recv_into(self, view: memoryview) -> int:
        try:
            count = self._io.recv_into(view)
        except TimeoutError:
            raise StreamBroken("no data or pong from the API server within the read timeout") from None
        except (OSError, ssl.SSLError) as exc:
            if self._closed:
                raise StreamBroken("the exec stream is closed") from None
            raise StreamBroken(f"the exec stream broke: {os_reason(exc)}") from None
        if not count:
            raise StreamBroken("the API server closed the connection without a close frame")
        self.last_heard = time.monotonic()
        return count

    def _read_exact(self, size: int) -> Generator[None, None, bytearray]:
        """`size` bytes for the library's frame parser; blocks rather than suspends. A payload
        larger than the read buffer is read straight into its own buffer (one copy per byte)."""
        buffered = len(self._buffer)
        if buffered >= size:
            data = self._buffer[:size]
            del self._buffer[:size]
            return data
        if size > len(self._scratch):
            data = bytearray(size)
            data[:buffered] = self._buffer
            self._buffer.clear()
            view = memoryview(data)[buffered:]
            while view:
                view = view[self._recv_into(view):]
            return data
        while len(self._buffer) < size:
            self._buffer += self._scratch[:self._recv_into(self._scratch)]
        data = self._buffer[:size]
        del self._buffer[:size]
        return data
        yield  # a generator-based coroutine, as the parser expects; it never suspends

    def _next_frame(self, max_size: int) -> Any:
        from websockets.exceptions import PayloadTooBig, ProtocolError
        from websockets.frames import CloseCode, Frame

        if self._failure is not None:
            raise StreamBroken(self._failure)
        parser = Frame.parse(self._read_exact, mask=False, max_size=max_size)
        try:
            next(parser)
        except StopIteration as done:
            return done.value
        except PayloadTooBig as exc:
            size = getattr(exc, "size", None)
            what = f"a {size}-byte message" if size is not None else "a message"
            self._fail(CloseCode.MESSAGE_TOO_BIG, f"the API server sent {what}, over the "
                                                  f"{MAX_MESSAGE_BYTES >> 20} MiB limit; closed the stream")
        except ProtocolError as exc:
            self._fail(CloseCode.PROTOCOL_ERROR, f"the API server broke the websocket protocol: {exc}")
        raise AssertionError("the frame parser suspended")  # pragma: no cover - _read_exact never yields

    def _fail(self, code: int, message: str) -> NoReturn:
        """Tell the server why (a close frame with `code`) and end the stream with `message`."""
        self._failure = message
        try:
            self._queue(lambda: self._ws.fail(code))
            self._kick()
        except ExecError:
            pass
        raise StreamBroken(message)

    def recv_message(self) -> bytes | bytearray | None:
        """The next binary message (channel byte + payload), or None after a clean close."""
        from websockets.exceptions import ProtocolError
        from websockets.frames import Close, CloseCode, Opcode

        fragments: list[bytes | bytearray] = []
        size = 0
        message_opcode = None
        while True:
            frame = self._next_frame(MAX_MESSAGE_BYTES - size)
            opcode = frame.opcode
            if opcode is Opcode.PING:
                try:
                    self._queue(lambda data=frame.data: self._ws.send_pong(data))
                    self._kick()  # never wait here for a writer stuck behind a full socket
                except ExecError:
                    pass
                continue
            if opcode is Opcode.PONG:
                continue
            if opcode is Opcode.CLOSE:
                try:
                    close = Close.parse(frame.data)
                except ProtocolError as exc:
                    self._fail(CloseCode.PROTOCOL_ERROR, f"the API server sent a malformed close frame: {exc}")
                try:
                    if close.code == CloseCode.NO_STATUS_RCVD:
                        self._queue(lambda: self._ws.send_close())
                    else:
                        self._queue(lambda close=close: self._ws.send_close(close.code, close.reason))
                except ExecError:
                    pass
                self.close_after_reply()
                return None
            if opcode is Opcode.CONT:
                if message_opcode is None:
                    self._fail(CloseCode.PROTOCOL_ERROR, "the API server sent an unexpected continuation frame")
            elif message_opcode is not None:
                self._fail(CloseCode.PROTOCOL_ERROR, "the API server interrupted a fragmented message")
            else:
                message_opcode = opcode
            fragments.append(frame.data)
            size += len(frame.data)
            if frame.fin:
                if message_opcode is Opcode.TEXT:
                    self._fail(CloseCode.UNSUPPORTED_DATA,
                               "the API server sent a text frame on a binary exec protocol")
                return fragments[0] if len(fragments) == 1 else b"".join(fragments)

    def close_after_reply(self) -> None:
        """The server closed: give the queued close reply a moment to leave, then drop the connection."""
        if self._send_lock.acquire(timeout=1.0):
            try:
                self._write_outbox()
            except ExecError:
                pass
            finally:
                self._send_lock.release()
        self.abort()


def _handshake(protocol: Any, channel: ByteChannel) -> tuple[list[Any], bytearray]:
    """Give the protocol the server's answer to the upgrade; return its events and the bytes that
    followed the answer's head (the first frames) when the upgrade succeeded."""
    buffer = memoryview(bytearray(65536))
    data = bytearray()
    while b"\r\n\r\n" not in data:
        count = channel.recv_into(buffer)
        if not count:
            raise ExecError("the API server closed the connection during the websocket handshake")
        data += buffer[:count]
        if len(data) > MAX_ERROR_BODY:
            raise ExecError("the API server sent an oversized answer to the websocket upgrade")
    end = data.index(b"\r\n\r\n") + 4
    protocol.receive_data(bytes(data[:end]))
    events = protocol.events_received()
    if events or protocol.handshake_exc is not None:
        return events, data[end:]
    # Not an upgrade: a body follows (a Status for 403, 404, ...); the protocol reads it.
    received = len(data)
    protocol.receive_data(bytes(data[end:]))
    while True:
        events = protocol.events_received()
        if events or protocol.handshake_exc is not None:
            return events, bytearray()
        count = channel.recv_into(buffer)
        received += count
        if not count:
            protocol.receive_eof()
            events = protocol.events_received()
            if events or protocol.handshake_exc is not None:
                return events, bytearray()
            raise ExecError("the API server closed the connection during the websocket handshake")
        if received > MAX_ERROR_BODY + 16384:
            raise ExecError("the API server sent an oversized answer to the websocket upgrade")
        protocol.receive_data(buffer[:count])


def run_exec(target: WebsocketTarget, stdin_data: bytes | None = None, timeout: float = 60.0,
             max_output: int = 1 << 20) -> tuple[bytes, bytes, ExecStatus]:
    """Run a short command to completion (probes, uploads, clean-up): (stdout, stderr, status)."""
    stream = ExecStream.open(target, connect_timeout=timeout, read_timeout=timeout)
    stdout, stderr = bytearray(), bytearray()
    writer = None
    if stdin_data is not None:
        # Send from a thread so a command that answers while reading (cat, tar -v) cannot deadlock us.
        writer = threading.Thread(target=_send_all_stdin, args=(stream, stdin_data), daemon=True)
        writer.start()
    try:
        status = drain(stream, lambda data: _append(stdout, data, max_output),
                       lambda data: _append(stderr, data, max_output))
    finally:
        stream.abort()
    return bytes(stdout), bytes(stderr), status


def drain(stream: ExecStream, on_stdout: Callable[[bytes | bytearray], None],
          on_stderr: Callable[[bytes | bytearray], None]) -> ExecStatus:
    """Read the stream to its end, handing each stdout and stderr payload to its sink: the command's status
    (NoStatus when the exec ended without one). A sink may raise to stop reading."""
    status = ExecStatus(success=False, reason="NoStatus", message="the exec ended without a status")
    while True:
        message = stream.recv_message()
        if message is None:
            return status
        channel, payload = message[:1], message[1:]
        if not channel:
            continue
        if channel[0] == STDOUT:
            on_stdout(payload)
        elif channel[0] == STDERR:
            on_stderr(payload)
        elif channel[0] == STATUS:
            status = ExecStatus.parse(bytes(payload))


def _append(buffer: bytearray, data: bytes | bytearray, limit: int) -> None:
    if len(buffer) < limit:
        buffer += data


def _send_all_stdin(stream: ExecStream, data: bytes) -> None:
    view = memoryview(data)
    try:
        for start in range(0, len(view), 1 << 20):
            stream.send_stdin(view[start:start + (1 << 20)])
        # Under v4 there is no half-close; the command (tar) must stop at the end of its input.
        stream.close_stdin()
    except ExecError:
        pass


def _rejection(status: int, body: bytes) -> ExecRejected:
    reason, message = "", ""
    body = body[:MAX_ERROR_BODY]
    try:
        document = json.loads(body.decode("utf-8", "replace"))
        if isinstance(document, dict):
            reason = str(document.get("reason", ""))
            message = str(document.get("message", ""))
    except ValueError:
        message = body.decode("utf-8", "replace").strip().splitlines()[0][:200] if body.strip() else ""
    return ExecRejected(status, reason, message or f"the API server answered HTTP {status}")
