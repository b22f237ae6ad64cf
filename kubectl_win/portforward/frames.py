"""The multiplexing protocol between the forwarder and an in-pod relay (docs/port-forward.md).

Every frame is a 9-byte header, `type u8 | stream u32 | length u32` (big-endian), and `length`
bytes of payload. Pure encoding and decoding: no I/O, so it is tested byte for byte and shared by
the forwarder; the relays carry their own decoders in their own languages.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

VERSION = b"kwin-mux 1"
HEADER = struct.Struct("!BII")
HEADER_SIZE = HEADER.size  # 9
MAX_PAYLOAD = 256 * 1024
INITIAL_WINDOW = 1 << 22  # bytes each side may send on a TCP stream before the first WINDOW
MAX_WINDOW = 1 << 30
MAX_REASON = 256

HELLO, OPEN, OPENED, DATA, EOF, CLOSE, WINDOW = range(7)
NAMES = ("HELLO", "OPEN", "OPENED", "DATA", "EOF", "CLOSE", "WINDOW")

TCP, UDP = 6, 17

# CLOSE codes (the first payload byte); the rest of the payload is a UTF-8 reason.
CLOSED, REFUSED, UNRESOLVED, UNREACHABLE, RESET, PROTOCOL, ABORTED = range(7)
CLOSE_MESSAGES = {
    CLOSED: "closed",
    REFUSED: "connection refused inside the pod",
    UNRESOLVED: "the host name did not resolve inside the pod",
    UNREACHABLE: "could not connect inside the pod",
    RESET: "the connection inside the pod failed",
    PROTOCOL: "protocol error",
    ABORTED: "aborted",
}

_HOST = re.compile(rb"^[A-Za-z0-9.:%-]{1,253}$")


class FrameError(ValueError):
    """A frame that breaks the protocol; the link it came on cannot be trusted any more."""


@dataclass(frozen=True)
class Frame:
    type: int
    stream: int
    payload: bytes | bytearray | memoryview = b""


@dataclass(frozen=True)
class OpenRequest:
    protocol: int
    port: int
    host: str


def header(kind: int, stream: int, length: int) -> bytes:
    return HEADER.pack(kind, stream, length)


def encode(kind: int, stream: int, payload: bytes | bytearray | memoryview = b"") -> bytes:
    if not 0 <= kind < len(NAMES):
        raise ValueError(f"unknown frame type {kind}")
    if not 0 <= stream <= 0xFFFFFFFF or len(payload) > MAX_PAYLOAD:
        raise ValueError("stream id or payload length out of range")
    return HEADER.pack(kind, stream, len(payload)) + bytes(payload)


def encode_open(stream: int, protocol: int, host: str, port: int) -> bytes:
    raw = host.encode("ascii")
    if protocol not in (TCP, UDP) or not 1 <= port <= 65535 or not _HOST.match(raw) or stream == 0:
        raise ValueError("invalid open request")
    return encode(OPEN, stream, struct.pack("!BH", protocol, port) + raw)


def encode_close(stream: int, code: int, reason: str = "") -> bytes:
    return encode(CLOSE, stream, bytes((code,)) + reason.encode("utf-8")[:MAX_REASON])


def encode_window(stream: int, increment: int) -> bytes:
    return encode(WINDOW, stream, struct.pack("!I", increment))


def decode_open(payload: bytes | bytearray | memoryview) -> OpenRequest:
    if len(payload) < 4:
        raise FrameError("OPEN payload too short")
    protocol, port = struct.unpack_from("!BH", payload)
    host = bytes(payload[3:])
    if protocol not in (TCP, UDP):
        raise FrameError(f"OPEN with unknown protocol {protocol}")
    if not 1 <= port <= 65535:
        raise FrameError("OPEN with port 0")
    if not _HOST.match(host):
        raise FrameError("OPEN with an invalid host")
    return OpenRequest(protocol, port, host.decode("ascii"))


def decode_close(payload: bytes | bytearray | memoryview) -> tuple[int, str]:
    if not 1 <= len(payload) <= MAX_REASON + 1 or payload[0] > ABORTED:
        raise FrameError("malformed CLOSE")
    return payload[0], bytes(payload[1:]).decode("utf-8", "replace")


def decode_window(payload: bytes | bytearray | memoryview) -> int:
    if len(payload) != 4:
        raise FrameError("malformed WINDOW")
    increment = struct.unpack("!I", payload)[0]
    if not 1 <= increment <= MAX_WINDOW:
        raise FrameError("WINDOW increment out of range")
    return increment


def check(frame: Frame, from_relay: bool) -> None:
    """Validate a frame's type, stream id and payload shape for its direction."""
    kind, stream, payload = frame.type, frame.stream, frame.payload
    allowed = (HELLO, OPENED, DATA, EOF, CLOSE, WINDOW) if from_relay else (OPEN, DATA, EOF, CLOSE, WINDOW)
    if kind not in allowed:
        raise FrameError(f"unexpected frame type {kind}")
    if (kind == HELLO) != (stream == 0):
        raise FrameError("stream 0 is only for HELLO")
    if kind in (OPENED, EOF) and payload:
        raise FrameError(f"{NAMES[kind]} carries a payload")
    if kind == HELLO and bytes(payload) != VERSION:
        raise FrameError("unknown protocol version")
    if kind == OPEN:
        decode_open(payload)
    elif kind == CLOSE:
        decode_close(payload)
    elif kind == WINDOW:
        decode_window(payload)


class Decoder:
    """Splits a byte stream into frames (any split of the input is fine); validates each one.

    Payloads are read-only views into the data fed (no copy on the bulk path), so a caller must
    not reuse a buffer it fed; the transport hands over a fresh message each time."""

    def __init__(self, from_relay: bool = True) -> None:
        self.from_relay = from_relay
        self._buffer = bytearray()  # the start of a frame that a later feed completes

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        if self._buffer:
            self._buffer += data
            data, self._buffer = bytes(self._buffer), bytearray()
        view = memoryview(data).toreadonly()
        frames = []
        offset = 0
        while len(view) - offset >= HEADER_SIZE:
            kind, stream, length = HEADER.unpack_from(view, offset)
            if length > MAX_PAYLOAD:
                raise FrameError(f"frame of {length} bytes exceeds the {MAX_PAYLOAD}-byte limit")
            if kind >= len(NAMES):
                raise FrameError(f"unknown frame type {kind}")
            end = offset + HEADER_SIZE + length
            if end > len(view):
                break
            frame = Frame(kind, stream, view[offset + HEADER_SIZE:end])
            check(frame, self.from_relay)
            frames.append(frame)
            offset = end
        if offset < len(view):
            self._buffer += view[offset:]
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame still buffered (non-zero at EOF means truncation)."""
        return len(self._buffer)
