"""The native Windows relay: reproducible cross-build, and its behaviour under Wine."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import threading

import pytest

from tests.apiserver.exec import wine_binary
from tests.support.portforward_rig import NATIVE_DIR, Upstream, echo_then_report, run_wine, wine_prefix  # noqa: F401

COMPILER = "x86_64-w64-mingw32-gcc"
SHIPPED = NATIVE_DIR / "kwin-relay.exe"


@pytest.mark.skipif(shutil.which(COMPILER) is None, reason=f"{COMPILER} is not installed (CI installs mingw-w64)")
def test_rebuild_matches_the_shipped_relay_byte_for_byte(tmp_path):
    # Build from a copy in another directory too: build paths must not leak into the binary.
    elsewhere = tmp_path / "some" / "other" / "checkout"
    shutil.copytree(NATIVE_DIR, elsewhere, ignore=shutil.ignore_patterns("*.exe"))
    for source, output in ((NATIVE_DIR, tmp_path / "a.exe"), (elsewhere, tmp_path / "b.exe")):
        subprocess.run(["sh", str(source / "build.sh"), str(output)], check=True, timeout=120)
    shipped = SHIPPED.read_bytes()
    assert (tmp_path / "a.exe").read_bytes() == shipped, "kwin-relay.exe is stale: run relays/native/build.sh"
    assert (tmp_path / "b.exe").read_bytes() == shipped
    assert shipped[:2] == b"MZ" and len(shipped) < 64 * 1024


def test_shipped_relay_has_no_build_timestamp():
    data = SHIPPED.read_bytes()
    pe = int.from_bytes(data[0x3C:0x40], "little")
    assert data[pe:pe + 4] == b"PE\0\0"
    assert int.from_bytes(data[pe + 8:pe + 12], "little") == 0  # TimeDateStamp


def _wine(prefix: str, *args: str, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all")
    return run_wine([wine_binary(), str(SHIPPED), *args], input=stdin, capture_output=True, env=env,
                    timeout=timeout)


@pytest.mark.parametrize("args", [(), ("127.0.0.1",), ("a;b", "80"), ("127.0.0.1", "0"), ("127.0.0.1", "65536"),
                                  ("127.0.0.1", "8o"), ("%TEMP%\"", "80"), ("127.0.0.1", "80", "x")])
def test_relay_rejects_bad_arguments_with_exit_2(wine_prefix, args):  # noqa: F811
    result = _wine(wine_prefix, *args)
    assert result.returncode == 2
    assert result.stderr.strip() == b"usage: kwin-relay HOST PORT"


def test_relay_exit_codes_say_what_failed(wine_prefix):  # noqa: F811
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    refused = _wine(wine_prefix, "127.0.0.1", str(port))
    assert (refused.returncode, refused.stderr.strip()) == (4, b"kwin-relay: connection refused")
    unresolved = _wine(wine_prefix, "no-such-host.invalid", "80")
    assert unresolved.returncode == 3


def test_relay_is_binary_safe_and_half_closes(wine_prefix):  # noqa: F811
    upstream = Upstream(echo_then_report)
    payload = bytes(range(256)) * 4096 + b"\r\n\x1a\xff\x00"  # every byte value, CR LF, Ctrl-Z, IAC
    result = _wine(wine_prefix, "127.0.0.1", str(upstream.port), stdin=payload)
    assert result.returncode == 0, result.stderr
    # The echo server only reports after it saw our FIN: stdin EOF became a TCP half-close.
    assert result.stdout == payload + b"EOF after %d\n" % len(payload)
    assert hashlib.sha256(result.stdout[:len(payload)]).digest() == hashlib.sha256(payload).digest()
    upstream.close()


def test_relay_ends_when_the_server_closes_first(wine_prefix):  # noqa: F811
    def greet_and_close(conn: socket.socket) -> None:
        conn.sendall(b"220 ready\r\n")

    upstream = Upstream(greet_and_close)
    env = dict(os.environ, WINEPREFIX=wine_prefix, WINEDEBUG="-all")
    # stdin stays open: the relay must still exit once the server has closed.
    process = subprocess.Popen([wine_binary(), str(SHIPPED), "127.0.0.1", str(upstream.port)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    timer = threading.Timer(30, process.kill)
    timer.start()
    out = process.stdout.read()
    code = process.wait()
    timer.cancel()
    process.stdin.close()
    assert (code, out) == (0, b"220 ready\r\n")
    upstream.close()
