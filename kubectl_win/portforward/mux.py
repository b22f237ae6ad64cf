"""The forwarder's side of the multiplexing relay: one exec carries every connection of a forward.

A MuxSession owns the exec stream and one reader thread that splits the relay's stdout into frames
and hands each to its channel; the reader never blocks on a local socket (channels queue, bounded
by the flow-control window), so one slow local reader cannot stall the others. When the exec ends
for any reason every channel is reset at once and the session reports why.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections import deque
from collections.abc import Callable

from kubectl_win.kube.exec_stream import (
    STATUS,
    STDERR,
    STDIN,
    STDOUT,
    ExecError,
    ExecRejected,
    ExecStatus,
    ExecStream,
    WebsocketTarget,
)
from kubectl_win.portforward import frames
from kubectl_win.portforward.relays import Relay

WINDOW_BATCH = 128 * 1024  # return credit once this much was written locally (or the queue ran dry)
MAX_STDERR = 8 * 1024
STDIN_PREFIX = 1 + frames.HEADER_SIZE  # the exec channel byte, then the frame header
_EOF = object()


class MuxUnavailable(Exception):
    """The multiplexing relay could not start in this container; the message says why."""


class ChannelClosed(Exception):
    pass


class Channel:
    """One TCP stream or UDP flow. Frames arrive from the session's reader thread."""

    def __init__(self, session: MuxSession, stream_id: int, udp: bool,
                 on_datagram: Callable[[bytes], None] | None = None) -> None:
        self.session = session
        self.id = stream_id
        self.udp = udp
        self.on_datagram = on_datagram
        self._cv = threading.Condition()
        self._queue: deque = deque()
        self._credit = frames.INITIAL_WINDOW  # what we may still send
        self._receive_window = frames.INITIAL_WINDOW  # what the relay may still send us
        self.opened = False
        self.close_code: int | None = None  # set when the stream has ended (by the relay or the link)
        self.close_reason = ""

    @property
    def closed(self) -> bool:
        return self.close_code is not None

    # --- from the session reader thread --------------------------------------------------------------
    def on_frame(self, frame: frames.Frame) -> None:
        kind = frame.type
        if kind == frames.DATA:
            if self.udp:
                if self.on_datagram is not None:
                    self.on_datagram(bytes(frame.payload))
                return
            with self._cv:
                if len(frame.payload) > self._receive_window:
                    raise frames.FrameError("the relay sent beyond the window")
                self._receive_window -= len(frame.payload)
                self._queue.append(frame.payload)
                self._cv.notify_all()
        elif kind == frames.OPENED:
            with self._cv:
                self.opened = True
        elif kind == frames.EOF:
            with self._cv:
                self._queue.append(_EOF)
                self._cv.notify_all()
        elif kind == frames.WINDOW:
            with self._cv:
                self._credit += frames.decode_window(frame.payload)
                self._cv.notify_all()
        elif kind == frames.CLOSE:
            code, reason = frames.decode_close(frame.payload)
            self._end(code, reason)

    def _end(self, code: int, reason: str, drop_queue: bool = False) -> None:
        with self._cv:
            if self.close_code is None:
                self.close_code, self.close_reason = code, reason
            if drop_queue:
                self._queue.clear()
            self._cv.notify_all()
        self.session._forget(self)

    def link_lost(self, reason: str) -> None:
        self._end(frames.RESET, reason, drop_queue=True)

    # --- from the local side -------------------------------------------------------------------------
    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Send local bytes, waiting for window credit (TCP); raises ChannelClosed once it has ended."""
        view = memoryview(data)
        while view:
            with self._cv:
                while not self.udp and self._credit <= 0 and self.close_code is None:
                    self._cv.wait()
                if self.close_code is not None:
                    raise ChannelClosed(self.close_reason)
                size = len(view) if self.udp else min(len(view), self._credit, frames.MAX_PAYLOAD)
                if not self.udp:
                    self._credit -= size
            self.session.send(frames.header(frames.DATA, self.id, size) + view[:size])
            view = view[size:]

    def forward_from(self, conn: socket.socket, buffer: bytearray) -> int:
        """Read once from the local socket straight into a stdin message holding one DATA frame and
        send it (no copy between the socket and the websocket layer); 0 at the local EOF.
        `buffer` holds at least STDIN_PREFIX + MAX_PAYLOAD bytes; only this stream's local reader
        calls this, so the credit it waited for is still there after the read."""
        with self._cv:
            while self._credit <= 0 and self.close_code is None:
                self._cv.wait()
            if self.close_code is not None:
                raise ChannelClosed(self.close_reason)
            limit = min(self._credit, frames.MAX_PAYLOAD)
        view = memoryview(buffer)
        count = conn.recv_into(view[STDIN_PREFIX:STDIN_PREFIX + limit])
        if count == 0:
            return 0
        with self._cv:
            if self.close_code is not None:
                raise ChannelClosed(self.close_reason)
            self._credit -= count
        buffer[0] = STDIN
        frames.HEADER.pack_into(buffer, 1, frames.DATA, self.id, count)
        self.session.stream.send_message(view[:STDIN_PREFIX + count])
        return count

    def send_eof(self) -> None:
        if not self.closed:
            self.session.send(frames.encode(frames.EOF, self.id))

    def abort(self, reason: str = "") -> None:
        """End the stream from our side (the local client went away)."""
        if not self.closed:
            self._end(frames.ABORTED, reason)
            try:
                self.session.send(frames.encode_close(self.id, frames.ABORTED, reason))
            except ExecError:
                pass

    def drain_to(self, conn: socket.socket) -> None:
        """Write what the relay sends to the local socket, returning credit as it goes, until the end.

        A clean end shuts the local socket's write side (FIN); an error or a lost link resets it."""
        owed = 0
        while True:
            with self._cv:
                while not self._queue and self.close_code is None:
                    if owed:
                        break
                    self._cv.wait()
                item = self._queue.popleft() if self._queue else None
                ended = item is None and self.close_code is not None
            if owed and (item is None or owed >= WINDOW_BATCH):
                self._give_credit(owed)
                owed = 0
            if ended:
                break
            if item is None:
                continue
            if item is _EOF:
                _shutdown(conn, socket.SHUT_WR)
                continue
            try:
                conn.sendall(item)
            except OSError:
                self.abort("the local client went away")
                break
            owed += len(item)
        if self.close_code not in (frames.CLOSED, frames.ABORTED) and self.opened:
            reset(conn)  # data may have been lost: never let a cut transfer look complete
        else:
            _shutdown(conn, socket.SHUT_RDWR)

    def _give_credit(self, amount: int) -> None:
        with self._cv:
            self._receive_window += amount
        if not self.closed:
            try:
                self.session.send(frames.encode_window(self.id, amount))
            except ExecError:
                pass

    def failure(self) -> str | None:
        """One line for the user when the stream ended badly, else None."""
        code = self.close_code
        if code in (None, frames.CLOSED, frames.ABORTED):
            return None
        if code == frames.RESET and self.close_reason.startswith("lost the relay"):
            return self.close_reason
        return frames.CLOSE_MESSAGES.get(code, "closed by the relay")


class MuxSession:
    """One running multiplexing relay (one exec) in one container."""

    def __init__(self, stream: ExecStream, relay: Relay, key: tuple[str, str, str], decoder: frames.Decoder,
                 on_lost: Callable[[MuxSession, str, int], None]) -> None:
        self.stream = stream
        self.relay = relay
        self.key = key
        self._decoder = decoder
        self._on_lost = on_lost
        self._channels: dict[int, Channel] = {}
        self._lock = threading.Lock()
        self._next_id = 1
        self.alive = True
        self.lost_reason = ""
        self._stderr = bytearray()
        self._status: ExecStatus | None = None
        self._thread = threading.Thread(target=self._read_loop, name="port-forward-mux", daemon=True)

    @classmethod
    def start(cls, target: WebsocketTarget, relay: Relay, key: tuple[str, str, str],
              on_lost: Callable[[MuxSession, str, int], None], connect_timeout: float = 30.0,
              read_timeout: float = 60.0) -> MuxSession:
        """Start the relay and wait for its HELLO. MuxUnavailable when it cannot speak the protocol;
        ExecRejected/ExecError (RBAC, pod gone, network) pass through unchanged."""
        stream = ExecStream.open(target, connect_timeout, read_timeout)
        decoder = frames.Decoder(from_relay=True)
        stderr, leftover = bytearray(), []
        try:
            stream.sock.settimeout(connect_timeout)
            while not leftover:
                message = stream.recv_message()
                if message is None:
                    raise MuxUnavailable("the relay ended before it started")
                if not message:
                    continue
                if message[0] == STDOUT and len(message) > 1:
                    try:
                        leftover = decoder.feed(memoryview(message)[1:])
                    except frames.FrameError:
                        raise MuxUnavailable("the relay does not speak the multiplexing protocol") from None
                elif message[0] == STDERR:
                    stderr += message[1:MAX_STDERR]
                elif message[0] == STATUS:
                    status = ExecStatus.parse(message[1:])
                    raise MuxUnavailable(_exit_reason(relay, status, bytes(stderr)))
            if leftover[0].type != frames.HELLO:
                raise MuxUnavailable("the relay does not speak the multiplexing protocol")
            stream.sock.settimeout(read_timeout)
        except ExecRejected:
            stream.abort()
            raise
        except ExecError as exc:
            stream.abort()
            raise MuxUnavailable(f"the relay did not start: {exc}") from None
        except MuxUnavailable:
            stream.abort()
            raise
        session = cls(stream, relay, key, decoder, on_lost)
        session._stderr = stderr
        for frame in leftover[1:]:
            session._dispatch(frame)
        session._thread.start()
        return session

    # --- channels --------------------------------------------------------------------------------------
    def open(self, protocol: int, host: str, port: int,
             on_datagram: Callable[[bytes], None] | None = None) -> Channel:
        with self._lock:
            if not self.alive:
                raise ChannelClosed(self.lost_reason or "the relay is gone")
            stream_id = self._next_id
            self._next_id += 1
            channel = Channel(self, stream_id, protocol == frames.UDP, on_datagram)
            self._channels[stream_id] = channel
        try:
            self.send(frames.encode_open(stream_id, protocol, host, port))
        except ExecError as exc:
            channel.link_lost(f"lost the relay: {exc}")
            raise ChannelClosed(str(exc)) from None
        return channel

    def _forget(self, channel: Channel) -> None:
        with self._lock:
            if self._channels.get(channel.id) is channel:
                del self._channels[channel.id]

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self.stream.send_stdin(data)

    def ping(self) -> None:
        self.stream.ping()

    def close(self, wait: float = 2.0) -> None:
        """Stop the relay: its stdin's end makes it exit (v5), and we wait for that, so an uploaded
        relay is no longer running when it is removed; then the exec is ended either way."""
        self.alive = False
        try:
            if self.stream.close_stdin():
                self._thread.join(wait)
        except ExecError:
            pass
        self.stream.close()

    # --- the reader thread ----------------------------------------------------------------------------
    def _dispatch(self, frame: frames.Frame) -> None:
        if frame.type == frames.HELLO:
            raise frames.FrameError("a second HELLO")
        with self._lock:
            channel = self._channels.get(frame.stream)
        if channel is not None:  # frames for a stream that already ended are expected races
            channel.on_frame(frame)

    def _read_loop(self) -> None:
        reason = ""
        try:
            while True:
                message = self.stream.recv_message()
                if message is None:
                    break
                if not message:
                    continue
                channel = message[0]
                if channel == STDOUT:
                    for frame in self._decoder.feed(memoryview(message)[1:]):
                        self._dispatch(frame)
                elif channel == STDERR:
                    self._stderr += message[1:MAX_STDERR]
                elif channel == STATUS:
                    self._status = ExecStatus.parse(message[1:])
        except frames.FrameError as exc:
            reason = f"the relay broke the protocol ({exc})"
        except ExecError as exc:
            reason = "" if self.stream.closed and not self.alive else f"lost the exec stream: {exc}"
        finally:
            self.stream.abort()
        if not reason:
            if self._status is not None and not self._status.success:
                reason = _exit_reason(self.relay, self._status, bytes(self._stderr))
            else:
                reason = "the relay exited"
        self._lost(reason)

    def _lost(self, reason: str) -> None:
        deliberate = not self.alive
        with self._lock:
            self.alive = False
            self.lost_reason = reason
            channels = list(self._channels.values())
        for channel in channels:
            if deliberate:  # the forwarder is stopping: close (FIN), as one exec per connection does
                channel._end(frames.ABORTED, "the forwarder stopped", drop_queue=True)
            else:
                channel.link_lost(f"lost the relay: {reason}")
        if not deliberate:
            self._on_lost(self, reason, len(channels))


def _exit_reason(relay: Relay, status: ExecStatus, stderr: bytes) -> str:
    if status.exit_code is None:
        return status.message or status.reason or "the relay could not start"
    return relay.describe_failure(status.exit_code, stderr)


def reset(conn: socket.socket) -> None:
    """Abort a local TCP connection with RST (wakes a thread blocked reading it)."""
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    _shutdown(conn, socket.SHUT_RD)


def _shutdown(conn: socket.socket, how: int) -> None:
    try:
        conn.shutdown(how)
    except OSError:
        pass
