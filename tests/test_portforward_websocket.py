"""The exec websocket layer: framing, the incoming size cap, pongs under back-pressure, proxies,
and listener exclusivity.

Framing and back-pressure run against a scripted websocket server on loopback (raw sockets and a
reference frame codec written here from RFC 6455), so a test can forge frames and stop reading
at will; the cap, proxy and listener tests also go end to end through the test API server.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from kubectl_win.errors import KubectlWinError
from kubectl_win.kube.exec_stream import (
    MAX_MESSAGE_BYTES,
    SEND_MESSAGE_BYTES,
    ExecStream,
    StreamBroken,
    WebsocketTarget,
)
from kubectl_win.portforward.listener import bind_all
from tests.support.portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exchange,
    exec_settings,
    forwarding,
    linux_pod,
)
from tests.support.waiting import HANG_GUARD

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x2, 0x8, 0x9, 0xA


# --- a reference codec and a scripted server -----------------------------------------------------
def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """An unmasked server frame, built by hand from RFC 6455 section 5.2."""
    first = (0x80 if fin else 0) | opcode
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", first, length)
    elif length < 65536:
        head = struct.pack("!BBH", first, 126, length)
    else:
        head = struct.pack("!BBQ", first, 127, length)
    return head + payload


def recv_exact(conn: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError(f"connection closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def read_client_frame(conn: socket.socket) -> tuple[bool, int, bytes]:
    """(fin, opcode, payload) of one client frame, which must be masked; unmasked byte by byte."""
    first, second = recv_exact(conn, 2)
    assert second & 0x80, "a client frame must be masked"
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", recv_exact(conn, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", recv_exact(conn, 8))[0]
    key = recv_exact(conn, 4)
    masked = recv_exact(conn, length)
    return bool(first & 0x80), first & 0x0F, bytes(b ^ key[i % 4] for i, b in enumerate(masked))


class ScriptedServer:
    """Accepts one websocket on 127.0.0.1, answers the upgrade with v5, then runs `script(conn)`."""

    def __init__(self, script: Callable[[socket.socket], None], rcvbuf: int | None = None) -> None:
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.script = script
        self.request_head = b""
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(1)
                self.request_head = head
                key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                           if line.lower().startswith(b"sec-websocket-key:"))
                accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             b"Sec-WebSocket-Accept: " + accept + b"\r\n"
                             b"Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n")
                self.script(conn)
            except (OSError, EOFError, AssertionError) as exc:
                self.error = exc

    @property
    def target(self) -> WebsocketTarget:
        return WebsocketTarget(f"ws://127.0.0.1:{self.port}/api/v1/namespaces/default/pods/p/exec?command=x",
                               {"Authorization": "Bearer t0ken"})

    def close(self) -> None:
        self.sock.close()
        self.thread.join(10)


def in_thread(function: Callable[[], object]) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run() -> None:
        try:
            result["value"] = function()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


# --- framing ---------------------------------------------------------------------------------------
SIZES = [0, 1, 124, 125, 126, 65535, 65536, 300_000]


def test_frames_both_ways_are_byte_exact():
    received: list[tuple[bool, int, bytes]] = []

    def script(conn: socket.socket) -> None:
        while not received or received[-1] != (True, OP_BINARY, b"\xff\x00"):  # up to the half-close
            received.append(read_client_frame(conn))
        for size in SIZES:
            conn.sendall(server_frame(OP_BINARY, b"\x01" + bytes([size % 251]) * size))
        # One message in three fragments, with a ping between two of them (RFC 6455 5.4).
        conn.sendall(server_frame(OP_BINARY, b"\x01ab", fin=False) + server_frame(OP_CONT, b"cd", fin=False)
                     + server_frame(OP_PING, b"hi") + server_frame(OP_CONT, b"ef"))
        received.append(read_client_frame(conn))  # the pong
        conn.sendall(server_frame(OP_CLOSE, struct.pack("!H", 1000)))
        received.append(read_client_frame(conn))  # the close reply

    server = ScriptedServer(script)
    try:
        stream = ExecStream.open(server.target)
        assert stream.protocol == "v5.channel.k8s.io" and stream.supports_close
        payloads = {size: os.urandom(size) for size in SIZES}
        for size in SIZES:
            stream.send_stdin(payloads[size])
        assert stream.close_stdin()
        for size in SIZES:
            assert stream.recv_message() == b"\x01" + bytes([size % 251]) * size
        assert stream.recv_message() == b"\x01abcdef"
        assert stream.recv_message() is None  # the server's close
        server.thread.join(10)
        assert server.error is None
    finally:
        server.close()
    stdin = received[:received.index((True, OP_BINARY, b"\xff\x00"))]  # then v5 CLOSE on stdin
    assert all(fin and opcode == OP_BINARY and payload[:1] == b"\x00" for fin, opcode, payload in stdin)
    assert b"".join(payload[1:] for _fin, _opcode, payload in stdin) == b"".join(payloads[s] for s in SIZES)
    assert max(len(payload) for _fin, _opcode, payload in stdin) <= SEND_MESSAGE_BYTES + 1
    assert received[-2] == (True, OP_PONG, b"hi")
    assert received[-1][:2] == (True, OP_CLOSE) and received[-1][2][:2] == struct.pack("!H", 1000)
    head = server.request_head.decode("latin-1")
    assert "Sec-WebSocket-Protocol: v5.channel.k8s.io, v4.channel.k8s.io" in head
    assert "Authorization: Bearer t0ken" in head


def test_one_send_stays_together_when_threads_share_the_stream():
    """stdin is one byte stream: a send larger than one message must not interleave with another
    thread's send (the multiplexing relay frames its own data inside it)."""
    block = 200_000
    stdin = bytearray()

    def script(conn: socket.socket) -> None:
        while len(stdin) < 2 * 8 * block:
            _fin, _opcode, payload = read_client_frame(conn)
            stdin.extend(payload[1:])

    server = ScriptedServer(script)
    try:
        stream = ExecStream.open(server.target)
        writers = [threading.Thread(target=lambda mark=mark: [stream.send_stdin(mark * block) for _ in range(8)])
                   for mark in (b"a", b"b")]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(30)
        server.thread.join(30)
        stream.abort()
    finally:
        server.close()
    assert server.error is None
    runs = [bytes(stdin[start:start + block]) for start in range(0, len(stdin), block)]
    assert sorted(runs) == [b"a" * block] * 8 + [b"b" * block] * 8


# --- the size cap ----------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [MAX_MESSAGE_BYTES + 1, 1 << 62])
def test_an_oversized_frame_is_refused_before_anything_is_allocated(length):
    close_frames: list[tuple[bool, int, bytes]] = []

    def script(conn: socket.socket) -> None:
        conn.sendall(struct.pack("!BBQ", 0x82, 127, length) + b"\x01" * 1000)  # the header claims `length`
        close_frames.append(read_client_frame(conn))

    server = ScriptedServer(script)
    try:
        stream = ExecStream.open(server.target)
        tracemalloc.start()
        try:
            with pytest.raises(StreamBroken) as info:
                stream.recv_message()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        server.thread.join(10)
    finally:
        server.close()
    message = str(info.value)
    assert "\n" not in message and "16 MiB limit" in message and str(length) in message
    assert peak < 4 << 20, f"{peak} bytes allocated while refusing the frame"
    assert close_frames and close_frames[0][1] == OP_CLOSE
    assert close_frames[0][2][:2] == struct.pack("!H", 1009)  # "message too big", as RFC 6455 says


def test_port_forward_reports_an_oversized_frame_in_one_line(apiserver, exec_settings):  # noqa: F811
    from tests.test_portforward_e2e import _wait_for_session

    upstream = Upstream(echo_then_report)
    apiserver.put(linux_pod("web"))
    try:
        with forwarding(apiserver, "pod/web", [f":{upstream.port}"], relay="python3", mux="off") as running:
            with running.connect() as sock:
                sock.sendall(b"ping")
                assert sock.recv(4) == b"ping"
                session = _wait_for_session(exec_settings, ["127.0.0.1", str(upstream.port)])
                session.send_raw(struct.pack("!BBQ", 0x82, 127, 1 << 40))
                sock.settimeout(10)
                while sock.recv(65536):
                    pass  # the local connection ends
            text = running.wait_for_error("limit")
            assert len(text.strip().splitlines()) == 1
            assert "1099511627776-byte message, over the 16 MiB limit" in text
            with running.connect() as sock:  # the forwarder keeps serving
                assert exchange(sock, b"again") == b"again" + b"EOF after 5\n"
    finally:
        upstream.close()


# --- pongs and pings under back-pressure -----------------------------------------------------------
def test_a_pong_is_not_held_up_by_a_blocked_writer():
    # Two events, not one cleared in between: on a busy machine the test could set it again before the server
    # thread got to clearing it, and the server would then wait out its timeout instead of draining.
    go_on, drain = threading.Event(), threading.Event()
    frames: list[tuple[bool, int, bytes]] = []

    def script(conn: socket.socket) -> None:
        # Read nothing until told: the client's stdin writer fills the socket buffers and blocks.
        go_on.wait(HANG_GUARD)
        conn.sendall(server_frame(OP_PING, b"are you there") + server_frame(OP_BINARY, b"\x01after the ping"))
        drain.wait(HANG_GUARD)
        while True:  # now drain stdin until the pong shows up
            frame = read_client_frame(conn)
            if frame[1] == OP_PONG:
                frames.append(frame)
                return

    server = ScriptedServer(script, rcvbuf=65536)
    stream = ExecStream.open(server.target)
    sent = [0]

    def write_forever() -> None:
        chunk = os.urandom(1 << 20)
        try:
            while True:
                stream.send_stdin(chunk)
                sent[0] += 1
        except StreamBroken:
            pass

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    try:
        _wait_until_stalled(sent)
        assert writer.is_alive()
        go_on.set()
        reader, result = in_thread(stream.recv_message)
        reader.join(60)  # only a deadlock runs this long
        assert not reader.is_alive(), "the reader is stuck behind the blocked writer"
        assert result.get("value") == b"\x01after the ping", result
        pinger, _ = in_thread(stream.ping)  # the keep-alive pinger must not block either
        pinger.join(60)
        assert not pinger.is_alive(), "ping() blocked behind the blocked writer"
        assert writer.is_alive()  # the writer was still stuck the whole time
        drain.set()  # the server reads again: the queued pong follows the bulk data
        server.thread.join(HANG_GUARD)
        assert server.error is None and frames == [(True, OP_PONG, b"are you there")]
    finally:
        stream.abort()
        server.close()
        writer.join(10)


def test_abort_returns_at_once_while_a_writer_is_blocked():
    held = threading.Event()  # the server reads nothing until the test ends: the writer stays blocked
    server = ScriptedServer(lambda conn: held.wait(HANG_GUARD), rcvbuf=65536)
    stream = ExecStream.open(server.target)
    sent = [0]
    failure: list[BaseException] = []

    def write_forever() -> None:
        chunk = bytes(1 << 20)
        try:
            while True:
                stream.send_stdin(chunk)
                sent[0] += 1
        except StreamBroken as exc:
            failure.append(exc)

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    try:
        _wait_until_stalled(sent)
        aborting = threading.Thread(target=stream.abort, daemon=True)  # what Ctrl-C does to every open stream
        aborting.start()
        aborting.join(HANG_GUARD)  # an abort that waited for the blocked writer would never return
        assert not aborting.is_alive()
        writer.join(HANG_GUARD)
        assert not writer.is_alive() and failure
        assert stream.closed
    finally:
        held.set()
        server.sock.close()


@pytest.mark.parametrize("who", ["client", "server"])
def test_a_close_we_started_is_told_apart_from_the_servers(who):
    """The server's reply to our close can reach the reader before close() returns; the forwarder
    must still know the stream ended because we ended it (no "closed without a status" error)."""
    def script(conn: socket.socket) -> None:
        if who == "client":
            assert read_client_frame(conn)[1] == OP_CLOSE
        conn.sendall(server_frame(OP_CLOSE, struct.pack("!H", 1000)))
        if who == "server":
            read_client_frame(conn)  # the close reply

    server = ScriptedServer(script)
    stream = ExecStream.open(server.target)
    reader, result = in_thread(stream.recv_message)
    try:
        if who == "client":
            stream.close()
        reader.join(10)
        if who == "server":
            assert result == {"value": None}
        else:  # the reply or our own abort ends the read, whichever comes first
            assert result.get("value") is None and isinstance(result.get("error", StreamBroken()), StreamBroken)
        assert stream.closed_by_us is (who == "client")
    finally:
        stream.abort()
        server.close()


def _wait_until_stalled(counter: list[int], quiet: float = 2.0, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        if counter[0] != last:
            last, since = counter[0], time.monotonic()
        elif time.monotonic() - since > quiet:
            return
        time.sleep(0.05)
    raise AssertionError("the writer never blocked")


# --- proxies ---------------------------------------------------------------------------------------
class ConnectProxy:
    """An HTTP CONNECT proxy on 127.0.0.1 that sends every tunnel to 127.0.0.1 (so a host name
    that resolves nowhere still reaches the test API server) and records what it was asked."""

    def __init__(self, credentials: str | None = None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.credentials = credentials
        self.tunnels: list[str] = []
        self.authorizations: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    def _tunnel(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                byte = conn.recv(1)
                if not byte:
                    return
                head += byte
            lines = head.decode("latin-1").split("\r\n")
            method, authority, _ = lines[0].split(" ", 2)
            auth = next((line.split(":", 1)[1].strip() for line in lines[1:]
                         if line.lower().startswith("proxy-authorization:")), "")
            self.authorizations.append(auth)
            if method != "CONNECT":
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                return
            if self.credentials is not None and auth != "Basic " + base64.b64encode(self.credentials.encode()).decode():
                conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
                return
            self.tunnels.append(authority)
            port = int(authority.rsplit(":", 1)[1])
            try:
                upstream = socket.create_connection(("127.0.0.1", port))
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with upstream:
                pump = threading.Thread(target=_copy, args=(upstream, conn), daemon=True)
                pump.start()
                _copy(conn, upstream)
                pump.join(30)

    def close(self) -> None:
        self.sock.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(262144):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


UNRESOLVABLE = "kube-api.proxied.invalid"


def proxied_kubeconfig(apiserver, tmp_path: Path, proxy_url: str | None) -> SimpleNamespace:  # noqa: ANN001
    """A kubeconfig naming the server by a host only the proxy can reach (the TLS name stays
    `localhost`, which the test server's certificate carries)."""
    config = yaml.safe_load(Path(apiserver.kubeconfig).read_text())
    cluster = config["clusters"][0]["cluster"]
    port = int(cluster["server"].rsplit(":", 1)[1].rstrip("/"))
    cluster["server"] = f"https://{UNRESOLVABLE}:{port}"
    cluster["tls-server-name"] = "localhost"
    if proxy_url:
        cluster["proxy-url"] = proxy_url
    path = tmp_path / "kubeconfig-proxied"
    path.write_text(yaml.safe_dump(config))
    return SimpleNamespace(kubeconfig=path, port=port)


@pytest.mark.parametrize("how", ["proxy-url", "HTTPS_PROXY"])
def test_port_forward_goes_through_the_proxy(apiserver, exec_settings, tmp_path, monkeypatch, how):  # noqa: F811
    proxy = ConnectProxy()
    upstream = Upstream(echo_then_report)
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    if how == "HTTPS_PROXY":
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    handle = proxied_kubeconfig(apiserver, tmp_path, proxy.url if how == "proxy-url" else None)
    apiserver.put(linux_pod("web"))
    try:
        with forwarding(handle, "pod/web", [f":{upstream.port}"], relay="python3") as running:
            before = len(proxy.tunnels)
            with running.connect() as sock:
                assert exchange(sock, b"through the proxy") == b"through the proxy" + b"EOF after 17\n"
            assert running.err.text() == ""
            # The probe and the relay's exec each came through a tunnel of their own.
            assert len(proxy.tunnels) - before >= 2
        assert set(proxy.tunnels) == {f"{UNRESOLVABLE}:{handle.port}"}
        exec_requests = [path for method, path in apiserver.server.requests if path.startswith(
            "/api/v1/namespaces/default/pods/web/exec")]
        assert exec_requests
    finally:
        upstream.close()
        proxy.close()


def test_a_proxy_refusal_is_one_line_without_the_credentials(apiserver, exec_settings, tmp_path):  # noqa: F811
    from kubectl_win.kube import KubeFlags, connect
    from kubectl_win.kube.exec_stream import ExecError, exec_query, run_exec, target_from_args

    proxy = ConnectProxy(credentials="kwin:right")
    try:
        apiserver.put(linux_pod("web"))
        for password, works in (("right", True), ("s3cret-wrong", False)):
            handle = proxied_kubeconfig(apiserver, tmp_path, f"http://kwin:{password}@127.0.0.1:{proxy.port}")
            cluster = connect(KubeFlags(kubeconfig=str(handle.kubeconfig)))
            target = target_from_args(cluster.websocket_args("/api/v1/namespaces/default/pods/web/exec",
                                                             exec_query(["echo", "hi"], "app", stdin=False)))
            if works:
                stdout, _stderr, status = run_exec(target, timeout=30)
                assert stdout == b"hi\n" and status.success
                continue
            with pytest.raises(ExecError) as info:
                run_exec(target, timeout=30)
            message = str(info.value)
            assert "407" in message and "\n" not in message and "s3cret" not in message
    finally:
        proxy.close()


# --- the local listener ----------------------------------------------------------------------------
def test_a_second_listener_cannot_take_the_port():
    first = bind_all(["127.0.0.1"], [0])
    port = first[0].port
    try:
        with pytest.raises(KubectlWinError) as info:
            bind_all(["127.0.0.1"], [port])  # a second port-forward on the same port
        assert "unable to listen on 127.0.0.1:" in str(info.value)
        # Nor can another program that asks to share the address, the way SO_REUSEADDR would
        # allow on Windows (where the listener uses SO_EXCLUSIVEADDRUSE instead).
        options = [socket.SO_REUSEADDR] + ([socket.SO_REUSEPORT] if hasattr(socket, "SO_REUSEPORT") else [])
        for option in options:
            intruder = socket.socket()
            try:
                intruder.setsockopt(socket.SOL_SOCKET, option, 1)
                with pytest.raises(OSError):
                    intruder.bind(("127.0.0.1", port))
                    intruder.listen(1)
            finally:
                intruder.close()
        if sys.platform == "win32":
            assert first[0].sock.getsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE) == 1
    finally:
        for listener in first:
            listener.sock.close()
