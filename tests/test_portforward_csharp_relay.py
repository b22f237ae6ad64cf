"""The PowerShell multiplexing relay's C# core, run for real under Mono.

PowerShell is not available on these machines, but the relay does all its work in a C# class
that the PowerShell script compiles with Add-Type and then calls (`[KwinMux]::Run()`). Here the
same C# source, cut from the script the forwarder sends, is compiled with Mono's `mcs` beside a
three-line `Main` that makes the same call, and driven over stdin/stdout like the other relays:
a session with TCP and UDP streams, the window, a stalled stream beside a moving one, refused
targets, and the fuzzer. What stays untested is the PowerShell wrapper around it (Add-Type itself,
`-EncodedCommand` decoding, powershell.exe's own stdin handling).
"""

from __future__ import annotations

import hashlib
import queue
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_win.portforward import frames
from kubectl_win.portforward.relays.powershell_mux import MUX_SCRIPT
from tests.support.tools import missing_tool
from tests.test_portforward_frames import Honeypot, Stuck, _starts_with_an_open, assert_clean, fuzz_cases

MAIN = "\npublic static class Program { public static void Main() { KwinMux.Run(); } }\n"


def csharp_source() -> str:
    """The C# the PowerShell script hands to Add-Type, exactly as sent."""
    return MUX_SCRIPT.split("Add-Type -TypeDefinition @'\n", 1)[1].split("\n'@", 1)[0]


@pytest.fixture(scope="module")
def relay_argv(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    mcs, mono = shutil.which("mcs"), shutil.which("mono")
    if mcs is None or mono is None:
        missing_tool("Mono (mcs and mono) is not installed (apt-get install mono-mcs mono-runtime)")
    assert mcs is not None and mono is not None
    work = tmp_path_factory.mktemp("csharp-relay")
    (work / "relay.cs").write_text(csharp_source() + MAIN)
    built = subprocess.run([mcs, "-nologo", "-warnaserror+", "-out:relay.exe", "relay.cs"], cwd=work,
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    return [mono, str(Path(work) / "relay.exe")]


class Relay:
    """One running relay: frames in through stdin, frames out sorted per stream by a reader thread."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, bufsize=0)
        self.streams: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._decoder = frames.Decoder(from_relay=True)
        self.hello = self._first_frame()
        threading.Thread(target=self._read, daemon=True).start()

    def _first_frame(self) -> frames.Frame:
        pending: list[frames.Frame] = []
        while not pending:
            chunk = self.process.stdout.read(65536)
            assert chunk, "the relay exited before its HELLO"
            pending = self._decoder.feed(chunk)
        for frame in pending[1:]:
            self.inbox(frame.stream).put(frame)
        return pending[0]

    def inbox(self, stream: int) -> queue.Queue:
        with self._lock:
            return self.streams.setdefault(stream, queue.Queue())

    def _read(self) -> None:
        while chunk := self.process.stdout.read(1 << 20):
            for frame in self._decoder.feed(chunk):
                self.inbox(frame.stream).put(frame)

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            with self._write_lock:  # one frame at a time, whole: a pipe takes large writes in parts
                while view:
                    view = view[self.process.stdin.write(view):]
        except BrokenPipeError:
            code = self.process.wait(10)
            raise AssertionError(f"the relay exited ({code}): {self.process.stderr.read()!r}") from None

    def next(self, stream: int, timeout: float = 20) -> frames.Frame:
        return self.inbox(stream).get(timeout=timeout)

    def frames_until_close(self, stream: int, timeout: float = 60) -> Iterator[frames.Frame]:
        deadline = time.monotonic() + timeout
        while True:
            frame = self.next(stream, max(0.1, deadline - time.monotonic()))
            yield frame
            if frame.type == frames.CLOSE:
                return

    def finish(self) -> tuple[int, bytes]:
        self.process.stdin.close()
        code = self.process.wait(20)
        return code, self.process.stderr.read()


def echo_until_eof(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(1 << 16):
            conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)


def serve(handler) -> tuple[socket.socket, int]:  # noqa: ANN001
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


def test_the_csharp_source_is_the_script_verbatim():
    # What runs here is what PowerShell compiles: cut from the very string the forwarder encodes.
    source = csharp_source()
    assert source.startswith("using System;") and "public static void Run()" in source
    assert MUX_SCRIPT.rstrip().endswith("[KwinMux]::Run()")


def test_a_tcp_stream_round_trips_4_mb_with_window_credit_and_ends_cleanly(relay_argv):
    server, port = serve(echo_until_eof)
    relay = Relay(relay_argv)
    assert relay.hello == frames.Frame(frames.HELLO, 0, frames.VERSION)
    payload = bytes(range(256)) * (16 << 10) + b"tail"  # 4 MiB and a bit: more than one window
    relay.send(frames.encode_open(1, frames.TCP, "127.0.0.1", port))
    assert relay.next(1).type == frames.OPENED
    received = bytearray()
    returned = 0
    credit = [frames.INITIAL_WINDOW]
    credit_lock = threading.Lock()
    done = threading.Event()

    def collect() -> None:  # echoes arrive while we send; return credit for them as we go
        nonlocal returned
        for frame in relay.frames_until_close(1):
            if frame.type == frames.DATA:
                received.extend(frame.payload)
                relay.send(frames.encode_window(1, len(frame.payload)))
            elif frame.type == frames.WINDOW:
                returned += frames.decode_window(frame.payload)
                with credit_lock:
                    credit[0] += frames.decode_window(frame.payload)
            elif frame.type == frames.EOF:
                relay.send(frames.encode(frames.EOF, 1))
            else:
                assert frame == frames.Frame(frames.CLOSE, 1, bytes((frames.CLOSED,)))
        done.set()

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    view = memoryview(payload)
    while view:
        with credit_lock:
            size = min(len(view), credit[0], frames.MAX_PAYLOAD)
            credit[0] -= max(size, 0)
        if size <= 0:
            time.sleep(0.001)
            continue
        relay.send(frames.encode(frames.DATA, 1, view[:size]))
        view = view[size:]
    relay.send(frames.encode(frames.EOF, 1))
    assert done.wait(60)
    assert hashlib.sha256(received).digest() == hashlib.sha256(payload).digest()
    assert returned == len(payload)  # every byte written to the socket was credited back
    assert relay.finish() == (0, b"")
    server.close()


def test_a_stalled_stream_does_not_hold_up_another(relay_argv):
    stalled = Stuck()  # connects never complete: whatever is sent stays queued in the relay
    server, port = serve(echo_until_eof)
    relay = Relay(relay_argv)
    relay.send(frames.encode_open(1, frames.TCP, "127.0.0.1", stalled.port))
    relay.send(b"".join(frames.encode(frames.DATA, 1, bytes(frames.MAX_PAYLOAD))
                        for _ in range(frames.INITIAL_WINDOW // frames.MAX_PAYLOAD)))  # a full window
    relay.send(frames.encode_open(2, frames.TCP, "127.0.0.1", port))
    assert relay.next(2).type == frames.OPENED
    relay.send(frames.encode(frames.DATA, 2, b"still moving") + frames.encode(frames.EOF, 2))
    got = [f for f in relay.frames_until_close(2) if f.type == frames.DATA]
    assert b"".join(bytes(f.payload) for f in got) == b"still moving"
    code, stderr = relay.finish()
    assert (code, stderr) == (0, b"")
    stalled.close()
    server.close()


def test_udp_datagrams_keep_their_boundaries(relay_argv):
    echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    echo.bind(("127.0.0.1", 0))

    def bounce() -> None:
        while True:
            try:
                data, peer = echo.recvfrom(65535)
            except OSError:
                return
            echo.sendto(data, peer)

    threading.Thread(target=bounce, daemon=True).start()
    relay = Relay(relay_argv)
    relay.send(frames.encode_open(7, frames.UDP, "127.0.0.1", echo.getsockname()[1]))
    assert relay.next(7).type == frames.OPENED
    datagrams = [b"%d:" % i * (1 + i % 40) for i in range(300)]
    for datagram in datagrams:
        relay.send(frames.encode(frames.DATA, 7, datagram))
        frame = relay.next(7)
        assert (frame.type, bytes(frame.payload)) == (frames.DATA, datagram)
    assert relay.finish()[0] == 0
    echo.close()


def test_refused_and_unresolvable_targets_close_with_their_codes(relay_argv):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    relay = Relay(relay_argv)
    relay.send(frames.encode_open(1, frames.TCP, "127.0.0.1", dead_port))
    relay.send(frames.encode_open(2, frames.TCP, "no-such-host.invalid", 80))
    assert frames.decode_close(relay.next(1).payload)[0] == frames.REFUSED
    assert frames.decode_close(relay.next(2, timeout=60).payload)[0] == frames.UNRESOLVED
    assert relay.finish()[0] == 0


def test_data_beyond_the_window_is_a_protocol_error(relay_argv):
    listener = Stuck()
    flood = b"".join(frames.encode(frames.DATA, 1, bytes(frames.MAX_PAYLOAD))
                     for _ in range(frames.INITIAL_WINDOW // frames.MAX_PAYLOAD + 1))
    result = subprocess.run(relay_argv, input=frames.encode_open(1, frames.TCP, "127.0.0.1", listener.port) + flood,
                            capture_output=True, timeout=60)
    listener.close()
    assert result.returncode == 8 and result.stderr == b"kwin-relay: protocol error: DATA beyond the window\n"


def test_random_and_truncated_frames_end_it_cleanly_with_nothing_done(relay_argv):
    honeypot = Honeypot()
    cases = [case for case in fuzz_cases(honeypot.port, 60, seed=12) if not _starts_with_an_open(case)]
    rejected = 0
    for case in cases:
        result = subprocess.run(relay_argv, input=case, capture_output=True, timeout=30)
        assert_clean(result, case)
        rejected += result.returncode == 8
    assert rejected > len(cases) // 2
    assert honeypot.accepted() == 0


def test_window_frames_out_of_range_are_refused(relay_argv):
    for increment in (0, frames.MAX_WINDOW + 1):
        raw = frames.HEADER.pack(frames.WINDOW, 3, 4) + struct.pack("!I", increment)
        result = subprocess.run(relay_argv, input=raw, capture_output=True, timeout=30)
        assert result.returncode == 8 and b"WINDOW out of range" in result.stderr
