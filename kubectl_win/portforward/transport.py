"""The exec websocket: a small RFC 6455 client speaking the Kubernetes channel protocols.

Offers `v5.channel.k8s.io` then `v4.channel.k8s.io`. Each binary message is one channel byte
plus payload: 0 stdin, 1 stdout, 2 stderr, 3 status (a JSON metav1.Status when the process ends).
v5 adds the CLOSE signal `[255, channel]`, which is how a local half-close reaches the relay.

Written directly on a socket rather than on websocket-client: that package masks outgoing data
at about 150 MB/s in pure Python, which would cap throughput. Here masking runs in libcrypto where
it can (masking.py), frames are built and masked in one buffer, and a large incoming payload is
read straight from TLS (or the socket) into its own buffer: one copy per byte on the way in.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kubectl_win.portforward.masking import mask_into

PROTOCOL_V5 = "v5.channel.k8s.io"
PROTOCOL_V4 = "v4.channel.k8s.io"
OFFERED_PROTOCOLS = (PROTOCOL_V5, PROTOCOL_V4)

STDIN, STDOUT, STDERR, STATUS = 0, 1, 2, 3
CLOSE_SIGNAL = 255

_OP_CONTINUATION, _OP_TEXT, _OP_BINARY, _OP_CLOSE, _OP_PING, _OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HANDSHAKE_BYTES = 64 * 1024


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


def mask(key: bytes, data: bytes | bytearray | memoryview) -> bytearray:
    out = bytearray(data)
    mask_into(out, 0, key)
    return out


class _PlainIO:
    """Bytes over a TCP socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, data: bytes | bytearray) -> None:
        self.sock.sendall(data)

    def recv(self, size: int) -> bytes:
        return self.sock.recv(size)

    def recv_into(self, view: memoryview) -> int:
        return self.sock.recv_into(view)


class _TlsIO:
    """TLS over memory BIOs, so one thread can read while another writes.

    An ssl.SSLSocket must not be read and written from two threads at once (records get
    corrupted under load); here the SSL object is only touched under a lock and the blocking
    socket calls happen outside it.
    """

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, hostname: str | None) -> None:
        self.sock = sock
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_hostname=hostname)
        self._lock = threading.Lock()  # the SSL object and its BIOs
        self._raw = bytearray(131072)  # socket reads (only the one reader thread uses it)
        self._send_lock = threading.Lock()  # keeps records in order on the wire
        while True:
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                data = sock.recv(65536)
                if not data:
                    raise ConnectionResetError("the server closed the connection during the TLS handshake") from None
                self._incoming.write(data)
        self._flush()

    def _flush(self) -> None:
        with self._send_lock:
            with self._lock:
                data = self._outgoing.read()
            if data:
                self.sock.sendall(data)

    def send(self, data: bytes | bytearray) -> None:
        with self._send_lock:
            with self._lock:
                self._tls.write(data)
                records = self._outgoing.read()
            self.sock.sendall(records)

    def recv(self, size: int) -> bytes:
        view = memoryview(bytearray(size))
        count = self.recv_into(view)
        return bytes(view[:count])

    def recv_into(self, view: memoryview) -> int:
        """Decrypt into `view` all that is already received (several TLS records if there are);
        0 at the end of the stream."""
        size = len(view)
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
                    self.sock.sendall(records)
                finally:
                    self._send_lock.release()
            if data:
                return data
            count = self.sock.recv_into(self._raw)
            with self._lock:
                if count:
                    self._incoming.write(memoryview(self._raw)[:count])
                else:
                    self._incoming.write_eof()


class ExecStream:
    """One open exec websocket. One reader thread and any number of writers may use it."""

    def __init__(self, sock: socket.socket, io: _PlainIO | _TlsIO, protocol: str, leftover: bytes) -> None:
        self.sock = sock
        self._io = io
        self.protocol = protocol
        self._buffer = bytearray(leftover)  # received, not yet parsed
        self._scratch = memoryview(bytearray(65536))  # reads for frame headers and small frames
        self._send_lock = threading.Lock()
        self._closed = False
        self.last_heard = time.monotonic()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def supports_close(self) -> bool:
        return self.protocol == PROTOCOL_V5

    # --- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, target: WebsocketTarget, connect_timeout: float = 30.0,
             read_timeout: float | None = 60.0, protocols: tuple[str, ...] = OFFERED_PROTOCOLS) -> ExecStream:
        parts = urlsplit(target.url)
        secure = parts.scheme in ("wss", "https")
        host = parts.hostname or "localhost"
        port = parts.port or (443 if secure else 80)
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as exc:
            raise ExecError(f"cannot reach the API server at {host}:{port}: {_os_reason(exc)}") from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if secure:
                context = target.ssl_context or ssl.create_default_context()
                io: _PlainIO | _TlsIO = _TlsIO(sock, context, target.server_hostname or host)
            else:
                io = _PlainIO(sock)
            key = base64.b64encode(os.urandom(16)).decode()
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            default_port = port == (443 if secure else 80)
            lines = [
                f"GET {path} HTTP/1.1",
                f"Host: {_host_header(host)}{'' if default_port else f':{port}'}",
                "Upgrade: websocket",
                "Connection: Upgrade",
                f"Sec-WebSocket-Key: {key}",
                "Sec-WebSocket-Version: 13",
                f"Sec-WebSocket-Protocol: {', '.join(protocols)}",
            ]
            lines += [f"{name}: {value}" for name, value in target.headers.items()
                      if name.lower() not in ("host", "upgrade", "connection", "sec-websocket-protocol")]
            io.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status, headers, rest = _read_response_head(io)
            if status != 101:
                sock.settimeout(5)
                body = _read_body(io, headers, rest)
                raise _rejection(status, body)
            accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
            if headers.get("sec-websocket-accept") != accept:
                raise ExecError("the API server answered the websocket upgrade with a wrong accept key")
            protocol = headers.get("sec-websocket-protocol", "")
            if protocol not in protocols:
                raise ExecError(f"the API server chose an unsupported exec protocol {protocol!r}")
            sock.settimeout(read_timeout)
            return cls(sock, io, protocol, rest)
        except ExecError:
            sock.close()
            raise
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise ExecError(f"websocket handshake failed: {_os_reason(exc)}") from None

    # --- sending -------------------------------------------------------------------------------
    def _send_frame(self, opcode: int, payload: bytes | bytearray | memoryview, channel: int | None = None) -> None:
        """Send one masked frame; `channel`, when given, is prepended to the payload."""
        length = len(payload) + (channel is not None)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        key = os.urandom(4)
        # One buffer, one copy of the payload, masked in place (outside the lock, and in libcrypto
        # without the GIL where available): this path carries every byte sent.
        start = len(header) + 4
        frame = bytearray(start + length)
        frame[:len(header)] = header
        frame[len(header):start] = key
        if channel is not None:
            frame[start] = channel
            frame[start + 1:] = payload
        else:
            frame[start:] = payload
        mask_into(frame, start, key)
        with self._send_lock:
            if self._closed:
                raise StreamBroken("the exec stream is closed")
            try:
                self._io.send(frame)
            except (OSError, ssl.SSLError) as exc:
                raise StreamBroken(f"the exec stream broke while sending: {_os_reason(exc)}") from None

    def send_stdin(self, data: bytes | memoryview) -> None:
        self._send_frame(_OP_BINARY, data, channel=STDIN)

    def close_stdin(self) -> bool:
        """Half-close stdin; True when the protocol could express it (v5)."""
        if not self.supports_close:
            return False
        self._send_frame(_OP_BINARY, bytes((CLOSE_SIGNAL, STDIN)))
        return True

    def ping(self) -> None:
        self._send_frame(_OP_PING, b"kwin")

    def close(self, code: int = 1000) -> None:
        try:
            self._send_frame(_OP_CLOSE, struct.pack("!H", code))
        except ExecError:
            pass
        self.abort()

    def abort(self) -> None:
        with self._send_lock:
            self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    # --- receiving -----------------------------------------------------------------------------
    def _fill(self, needed: int) -> None:
        while len(self._buffer) < needed:
            try:
                count = self._io.recv_into(self._scratch)
            except TimeoutError:
                raise StreamBroken("no data or pong from the API server within the read timeout") from None
            except (OSError, ssl.SSLError) as exc:
                raise StreamBroken(f"the exec stream broke: {_os_reason(exc)}") from None
            if not count:
                raise StreamBroken("the API server closed the connection without a close frame")
            self._buffer += self._scratch[:count]
            self.last_heard = time.monotonic()

    def _recv_exact_into(self, view: memoryview) -> None:
        while view:
            try:
                count = self._io.recv_into(view)
            except TimeoutError:
                raise StreamBroken("no data or pong from the API server within the read timeout") from None
            except (OSError, ssl.SSLError) as exc:
                raise StreamBroken(f"the exec stream broke: {_os_reason(exc)}") from None
            if not count:
                raise StreamBroken("the API server closed the connection without a close frame")
            view = view[count:]
            self.last_heard = time.monotonic()

    def _read_frame(self) -> tuple[bool, int, bytearray]:
        self._fill(2)
        first, second = self._buffer[0], self._buffer[1]
        length = second & 0x7F
        offset = 2
        if length == 126:
            self._fill(4)
            length = struct.unpack_from("!H", self._buffer, 2)[0]
            offset = 4
        elif length == 127:
            self._fill(10)
            length = struct.unpack_from("!Q", self._buffer, 2)[0]
            offset = 10
        masked = bool(second & 0x80)
        if masked:
            self._fill(offset + 4)
            key = bytes(self._buffer[offset:offset + 4])
            offset += 4
        buffered = len(self._buffer) - offset
        if buffered >= length:
            payload = self._buffer[offset:offset + length]
            del self._buffer[:offset + length]
        else:
            # A large payload: what is buffered, then the rest read directly into place.
            payload = bytearray(length)
            payload[:buffered] = memoryview(self._buffer)[offset:]
            self._buffer.clear()
            self._recv_exact_into(memoryview(payload)[buffered:])
        if masked:
            mask_into(payload, 0, key)
        return bool(first & 0x80), first & 0x0F, payload

    def recv_message(self) -> bytes | bytearray | None:
        """The next binary message (channel byte + payload), or None after a clean close."""
        fragments: list[bytearray] = []
        message_opcode = None
        while True:
            fin, opcode, payload = self._read_frame()
            if opcode == _OP_PING:
                self._send_frame(_OP_PONG, payload)
                continue
            if opcode == _OP_PONG:
                continue
            if opcode == _OP_CLOSE:
                try:
                    self._send_frame(_OP_CLOSE, payload[:2])
                except ExecError:
                    pass
                self.abort()
                return None
            if opcode != _OP_CONTINUATION:
                message_opcode = opcode
            fragments.append(payload)
            if fin:
                if message_opcode == _OP_TEXT:
                    raise StreamBroken("the API server sent a text frame on a binary exec protocol")
                return fragments[0] if len(fragments) == 1 else b"".join(fragments)


def run_exec(target: WebsocketTarget, stdin_data: bytes | None = None, timeout: float = 60.0,
             max_output: int = 1 << 20) -> tuple[bytes, bytes, ExecStatus]:
    """Run a short command to completion (probes, uploads, clean-up): (stdout, stderr, status)."""
    stream = ExecStream.open(target, connect_timeout=timeout, read_timeout=timeout)
    stdout, stderr = bytearray(), bytearray()
    status = ExecStatus(success=False, reason="NoStatus", message="the exec ended without a status")
    writer = None
    if stdin_data is not None:
        # Send from a thread so a command that answers while reading (cat, tar -v) cannot deadlock us.
        writer = threading.Thread(target=_send_all_stdin, args=(stream, stdin_data), daemon=True)
        writer.start()
    try:
        while True:
            message = stream.recv_message()
            if message is None:
                break
            channel, payload = message[:1], message[1:]
            if not channel:
                continue
            if channel[0] == STDOUT and len(stdout) < max_output:
                stdout += payload
            elif channel[0] == STDERR and len(stderr) < max_output:
                stderr += payload
            elif channel[0] == STATUS:
                status = ExecStatus.parse(payload)
    finally:
        stream.abort()
    return bytes(stdout), bytes(stderr), status


def _send_all_stdin(stream: ExecStream, data: bytes) -> None:
    view = memoryview(data)
    try:
        for start in range(0, len(view), 1 << 20):
            stream.send_stdin(view[start:start + (1 << 20)])
        # Under v4 there is no half-close; the command (tar) must stop at the end of its input.
        stream.close_stdin()
    except ExecError:
        pass


def _host_header(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _read_response_head(io: _PlainIO | _TlsIO) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = io.recv(4096)
        if not chunk:
            raise ExecError("the API server closed the connection during the websocket handshake")
        data += chunk
        if len(data) > MAX_HANDSHAKE_BYTES:
            raise ExecError("the API server sent an oversized handshake response")
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        raise ExecError(f"unexpected handshake response {lines[0][:80]!r}") from None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


def _read_body(io: _PlainIO | _TlsIO, headers: dict[str, str], rest: bytes) -> bytes:
    try:
        length = int(headers.get("content-length", ""))
    except ValueError:
        length = MAX_HANDSHAKE_BYTES
    body = rest
    try:
        while len(body) < min(length, MAX_HANDSHAKE_BYTES):
            chunk = io.recv(4096)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    return body


def _rejection(status: int, body: bytes) -> ExecRejected:
    reason, message = "", ""
    try:
        document = json.loads(body.decode("utf-8", "replace"))
        if isinstance(document, dict):
            reason = str(document.get("reason", ""))
            message = str(document.get("message", ""))
    except ValueError:
        message = body.decode("utf-8", "replace").strip().splitlines()[0][:200] if body.strip() else ""
    return ExecRejected(status, reason, message or f"the API server answered HTTP {status}")


def _os_reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
