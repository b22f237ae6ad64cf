"""The multiplexing protocol: byte-exact frames, the decoder's checks, and relays fed bad frames.

The fuzzer runs every relay that can run here (python3 natively, the native relay under Wine)
on random, mutated and truncated frame streams, and asserts a clean exit with nothing done: exit
0 (input ended on a frame boundary) or 8 (protocol error, one line on stderr), no traceback, and
no connection attempted anywhere.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import subprocess
import sys

import pytest

from kubectl_win.portforward import frames
from kubectl_win.portforward.relays import posix_mux
from tests.apiserver.exec import wine_binary
from tests.support.portforward_rig import NATIVE_DIR, run_wine, wine_prefix  # noqa: F401 - fixture


# --- byte-exact encoding -------------------------------------------------------------------------------
def test_open_frame_bytes():
    assert frames.encode_open(1, frames.TCP, "127.0.0.1", 8080) == (
        b"\x01" b"\x00\x00\x00\x01" b"\x00\x00\x00\x0c" b"\x06" b"\x1f\x90" b"127.0.0.1")
    assert frames.encode_open(0x01020304, frames.UDP, "::1", 53) == (
        b"\x01\x01\x02\x03\x04\x00\x00\x00\x06\x11\x00\x35::1")


def test_data_eof_window_close_hello_bytes():
    assert frames.encode(frames.DATA, 7, b"\x00\xff") == b"\x03\x00\x00\x00\x07\x00\x00\x00\x02\x00\xff"
    assert frames.encode(frames.EOF, 7) == b"\x04\x00\x00\x00\x07\x00\x00\x00\x00"
    assert frames.encode_window(7, 65536) == b"\x06\x00\x00\x00\x07\x00\x00\x00\x04\x00\x01\x00\x00"
    assert frames.encode_close(7, frames.REFUSED, "no") == b"\x05\x00\x00\x00\x07\x00\x00\x00\x03\x01no"
    assert frames.encode(frames.HELLO, 0, frames.VERSION) == b"\x00" + bytes(4) + b"\x00\x00\x00\x0akwin-mux 1"


def test_decoder_reassembles_any_split():
    stream = (frames.encode(frames.HELLO, 0, frames.VERSION) + frames.encode(frames.OPENED, 3)
              + frames.encode(frames.DATA, 3, bytes(range(256)) * 100) + frames.encode(frames.EOF, 3)
              + frames.encode_close(3, frames.CLOSED))
    expected = frames.Decoder().feed(stream)
    assert [(f.type, f.stream, len(f.payload)) for f in expected] == [
        (frames.HELLO, 0, 10), (frames.OPENED, 3, 0), (frames.DATA, 3, 25600), (frames.EOF, 3, 0), (frames.CLOSE, 3, 1)]
    rng = random.Random(4)
    for _ in range(50):
        decoder, got, offset = frames.Decoder(), [], 0
        while offset < len(stream):
            step = rng.randint(1, 3000)
            got += decoder.feed(stream[offset:offset + step])
            offset += step
        assert got == expected and decoder.pending == 0


@pytest.mark.parametrize("raw, from_relay", [
    (b"\x09" + bytes(8), True),  # unknown type
    (frames.header(frames.DATA, 1, frames.MAX_PAYLOAD + 1), True),  # too long, refused before the payload
    (frames.encode(frames.OPEN, 1, b"\x06\x00\x50127.0.0.1"), True),  # OPEN comes only from the forwarder
    (frames.encode(frames.OPEN, 1, b"\x06\x00\x00127.0.0.1"), False),  # port 0
    (frames.encode(frames.OPEN, 1, b"\x07\x00\x50127.0.0.1"), False),  # protocol
    (frames.encode(frames.OPEN, 1, b"\x06\x00\x50$(id)"), False),  # host characters
    (frames.encode(frames.OPEN, 0, b"\x06\x00\x50127.0.0.1"), False),  # stream 0
    (frames.encode(frames.EOF, 1, b"x"), True),
    (frames.encode(frames.WINDOW, 1, b"\x00\x00\x00\x00"), True),
    (frames.encode(frames.CLOSE, 1, b"\x09"), True),
    (frames.encode(frames.HELLO, 0, b"kwin-mux 2"), True),
])
def test_decoder_rejects_malformed_frames(raw, from_relay):
    with pytest.raises(frames.FrameError):
        frames.Decoder(from_relay=from_relay).feed(raw)


def test_encoder_refuses_what_the_relay_would_reject():
    for host in ("", "a b", "x" * 254, "höst"):
        with pytest.raises((ValueError, UnicodeEncodeError)):
            frames.encode_open(1, frames.TCP, host, 80)
    with pytest.raises(ValueError):
        frames.encode(frames.DATA, 1, bytes(frames.MAX_PAYLOAD + 1))


# --- the relays under fuzzing ----------------------------------------------------------------------------
# The honeypot listens on a loopback address of its own: a stray connect from another test's leftover
# thread to a recycled 127.0.0.1 port cannot reach it, so whatever it accepts came from a relay.
HONEYPOT_HOST = "127.43.0.9"


def _valid_session(port: int) -> bytes:
    return (frames.encode_open(1, frames.TCP, HONEYPOT_HOST, port) + frames.encode(frames.DATA, 1, b"hello")
            + frames.encode_window(1, 4096) + frames.encode(frames.EOF, 1) + frames.encode_close(1, frames.ABORTED))


def _starts_with_an_open(case: bytes) -> bool:
    """A case whose first frame is a complete, valid OPEN (a flipped bit may only have changed its
    stream id or port): the relay may rightly connect, so it is a request, not a fuzz case."""
    if len(case) < frames.HEADER_SIZE:
        return False
    kind, stream, length = frames.HEADER.unpack_from(case)
    if kind != frames.OPEN or stream == 0 or len(case) < frames.HEADER_SIZE + length:
        return False
    try:
        frames.decode_open(case[frames.HEADER_SIZE:frames.HEADER_SIZE + length])
    except (frames.FrameError, ValueError):
        return False
    return True


def fuzz_cases(port: int, count: int, seed: int = 10) -> list[bytes]:
    """Random bytes, valid sessions with a byte flipped or cut short, and frames of the wrong shape."""
    rng = random.Random(seed)
    valid = _valid_session(port)
    cases: list[bytes] = [b"\x01", valid[:5], valid[:-1], b"\x00" * 9, b"\x02" + bytes(8), b"\xff" * 64,
                          struct.pack("!BII", 3, 1, 0xFFFFFFFF), frames.encode(frames.WINDOW, 9, b"\xff\xff\xff\xff")]
    while len(cases) < count:
        kind = rng.randrange(3)
        if kind == 0:
            cases.append(rng.randbytes(rng.randint(1, 300)))
        elif kind == 1:
            data = bytearray(valid)
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            cases.append(bytes(data[:rng.randint(1, len(data))]))
        else:
            cases.append(struct.pack("!BII", rng.choice((0, 2, 7, 200)), rng.randrange(4), rng.randint(0, 5))
                         + rng.randbytes(rng.randint(0, 5)))
    return cases


class Stuck:
    """A listener with a full accept queue: a connect to it hangs, so a stream's queue never drains."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fillers = []
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", self.port))
            self.fillers.append(filler)

    def close(self) -> None:
        for sock in (*self.fillers, self.sock):
            sock.close()


class Honeypot:
    """A listener the fuzzed OPEN frames may point at: it must never see a connection from a bad stream."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind((HONEYPOT_HOST, 0))
        self.sock.listen(64)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def accepted(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


def assert_clean(result: subprocess.CompletedProcess, case: bytes) -> None:
    assert result.returncode in (0, 8), (case, result)
    assert b"Traceback" not in result.stderr, (case, result.stderr)
    if result.returncode == 8:
        assert result.stderr.startswith(b"kwin-relay: protocol error: ") and result.stderr.count(b"\n") == 1
    # stdout holds the HELLO and nothing else: no stream was opened
    assert result.stdout == frames.encode(frames.HELLO, 0, frames.VERSION), (case, result.stdout)


def test_python_relay_exits_cleanly_on_random_and_truncated_frames():
    honeypot = Honeypot()
    argv = [sys.executable, "-I", "-S", "-c", posix_mux.MUX_SCRIPT]
    cases = fuzz_cases(honeypot.port, 200)
    rejected = 0
    for case in cases:
        if _starts_with_an_open(case):
            continue  # an intact OPEN is a legitimate request, not a fuzz case
        result = subprocess.run(argv, input=case, capture_output=True, timeout=20)
        assert_clean(result, case)
        rejected += result.returncode == 8
    assert rejected > 130
    assert honeypot.accepted() == 0


def test_python_relay_rejects_data_beyond_the_window():
    listener = Stuck()
    opening = frames.encode_open(1, frames.TCP, "127.0.0.1", listener.port)
    flood = b"".join(frames.encode(frames.DATA, 1, bytes(frames.MAX_PAYLOAD))
                     for _ in range(frames.INITIAL_WINDOW // frames.MAX_PAYLOAD + 1))
    result = subprocess.run([sys.executable, "-I", "-S", "-c", posix_mux.MUX_SCRIPT], input=opening + flood,
                            capture_output=True, timeout=20)
    listener.close()
    assert result.returncode == 8 and b"DATA beyond the window" in result.stderr


def test_python_relay_reads_no_arguments_and_no_environment():
    # The command line is fixed (no user text): targets travel in frames only.
    assert "sys.argv" not in posix_mux.MUX_SCRIPT and "environ" not in posix_mux.MUX_SCRIPT
    assert "exec(" not in posix_mux.MUX_SCRIPT and "subprocess" not in posix_mux.MUX_SCRIPT


def test_native_relay_exits_cleanly_on_random_and_truncated_frames(wine_prefix):  # noqa: F811
    honeypot = Honeypot()
    env = dict(os.environ, WINEPREFIX=wine_prefix, WINEDEBUG="-all")
    argv = [wine_binary(), str(NATIVE_DIR / "kwin-relay.exe"), "--mux"]
    cases = fuzz_cases(honeypot.port, 12, seed=11)  # each Wine process costs 0.4-3 s: fewer cases
    for case in cases:
        if _starts_with_an_open(case):
            continue
        result = run_wine(argv, input=case, capture_output=True, timeout=60, env=env)
        assert_clean(result, case)
    assert honeypot.accepted() == 0
    listener = Stuck()
    flood = b"".join(frames.encode(frames.DATA, 1, bytes(frames.MAX_PAYLOAD))
                     for _ in range(frames.INITIAL_WINDOW // frames.MAX_PAYLOAD + 1))
    result = run_wine(argv, input=frames.encode_open(1, frames.TCP, "127.0.0.1", listener.port) + flood,
                      capture_output=True, timeout=60, env=env)
    listener.close()
    assert result.returncode == 8 and b"DATA beyond the window" in result.stderr


# --- the PowerShell relay: checked statically (no PowerShell or .NET on these machines) -----------------------
def test_powershell_mux_relay_command_is_fixed_and_decodes_to_the_script():
    import base64

    from kubectl_win.portforward.relays import powershell, powershell_mux

    for relay in (powershell.POWERSHELL, powershell.PWSH, powershell.PWSH_FULL_PATH):
        argv = relay.mux_command()
        assert argv[1:-1] == ["-NoLogo", "-NoProfile", "-NonInteractive", "-InputFormat", "None", "-EncodedCommand"]
        assert base64.b64decode(argv[-1]).decode("utf-16-le") == powershell_mux.MUX_SCRIPT
        assert len(" ".join(argv)) < 32767  # CreateProcess's command-line limit


def test_powershell_mux_relay_speaks_the_same_protocol():
    import re

    from kubectl_win.portforward.relays.powershell_mux import MUX_SCRIPT as script

    csharp = script.split("@'\n", 1)[1].split("\n'@", 1)[0]
    assert csharp.count("{") == csharp.count("}") and csharp.count("(") == csharp.count(")")
    assert f"MAXP = {frames.MAX_PAYLOAD}, WIN = {frames.INITIAL_WINDOW}, MAXWIN = 1 << 30" in csharp
    assert frames.MAX_WINDOW == 1 << 30
    assert f'GetBytes("{frames.VERSION.decode()}")' in csharp
    assert "Environment.Exit(8)" in csharp and 'Fail("DATA beyond the window")' in csharp
    accepted = re.search(r"if \(t != 1 && t != 3 && t != 4 && t != 5 && t != 6\) Fail", csharp)
    assert accepted and {frames.OPEN, frames.DATA, frames.EOF, frames.CLOSE, frames.WINDOW} == {1, 3, 4, 5, 6}
    assert f"p[0] > {frames.ABORTED}" in csharp  # CLOSE codes
    # Nothing from outside reaches the script: no parameters, no environment, no invocation.
    for forbidden in ("$args", "$env:", "Invoke-Expression", "Process.Start", "param("):
        assert forbidden not in script
