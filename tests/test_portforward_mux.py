"""Port-forward through the multiplexing relay: one exec carries every connection and UDP flow.

The same rig as test_portforward_e2e.py (the test API server runs the relay on this host).
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time

import pytest

from tests.support.portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exchange,
    exec_settings,
    forwarding,
    hash_until_eof,
    linux_pod,
    random_blob,
    seeded_chunks,
    send_seeded,
    windows_exec,
    windows_pod,
    wine_prefix,
)


def sha_line(data: bytes) -> bytes:
    return f"{hashlib.sha256(data).hexdigest()} {len(data)}\n".encode()


def mux_sessions(settings) -> list:  # noqa: ANN001
    return [s for s in settings.sessions if "kwin-mux 1" in " ".join(s.argv)]


@pytest.fixture
def upstream_echo():
    upstream = Upstream(echo_then_report)
    yield upstream
    upstream.close()


def test_connections_share_one_exec(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        for index in range(5):
            with running.connect() as sock:
                assert exchange(sock, b"hi %d" % index) == b"hi %dEOF after 4\n" % index
        assert len(mux_sessions(exec_settings)) == 1
        assert len(exec_settings.sessions) == 2  # the probe and the one mux
        assert running.err.text() == ""


def test_100_mb_each_way_with_sha256(apiserver, exec_settings):  # noqa: F811
    upload = Upstream(hash_until_eof)
    download = Upstream(send_seeded(100 << 20, seed=5))
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upload.port}", f":{download.port}"], relay="python3") as running:
        payload = random_blob(100 << 20)
        replies: dict[str, bytes] = {}

        def up() -> None:
            with running.connect(0, timeout=120) as sock:
                replies["up"] = exchange(sock, payload)

        def down() -> None:
            with running.connect(1, timeout=120) as sock:
                replies["down"] = exchange(sock, b"", half_close=False)

        threads = [threading.Thread(target=up), threading.Thread(target=down)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        assert replies["up"] == sha_line(payload)  # the server answers only after our FIN: half-close
        expected = hashlib.sha256()
        for chunk in seeded_chunks(100 << 20, seed=5):
            expected.update(chunk)
        assert (len(replies["down"]), hashlib.sha256(replies["down"]).digest()) == (100 << 20, expected.digest())
        assert len(mux_sessions(exec_settings)) == 1
        assert running.err.text() == ""
    upload.close()
    download.close()


def test_half_close_both_ways(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        with running.connect() as sock:
            sock.sendall(b"ping")
            assert sock.recv(4) == b"ping"
            sock.shutdown(socket.SHUT_WR)  # our FIN reaches the server, which still answers
            rest = b""
            while chunk := sock.recv(100):
                rest += chunk
            assert rest == b"EOF after 4\n"


def test_the_server_closing_first_closes_the_local_connection(apiserver, exec_settings):  # noqa: F811
    upstream = Upstream(lambda conn: conn.sendall(b"220 ready\r\n"))
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream.port}"], relay="python3") as running:
        with running.connect() as sock:
            data = b""
            while chunk := sock.recv(100):
                data += chunk
        assert data == b"220 ready\r\n"
    upstream.close()


def test_200_concurrent_connections_over_one_exec(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    results: dict[int, bool] = {}
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        sockets = [running.connect(timeout=120) for _ in range(200)]  # all open at once

        def talk(index: int, sock: socket.socket) -> None:
            payload = (b"%d:" % index) * 2000
            with sock:
                results[index] = exchange(sock, payload) == payload + b"EOF after %d\n" % len(payload)

        threads = [threading.Thread(target=talk, args=(i, s)) for i, s in enumerate(sockets)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert sorted(results) == list(range(200)) and all(results.values())
        assert running.err.text() == ""
        assert upstream_echo.accepted == 200
        assert len(mux_sessions(exec_settings)) == 1


def test_a_stalled_reader_does_not_stall_another_stream(apiserver, exec_settings):  # noqa: F811
    endless = Upstream(send_seeded(1 << 40))
    bulk = Upstream(send_seeded(50 << 20, seed=9))
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{endless.port}", f":{bulk.port}"], relay="python3") as running:
        stalled = running.connect(0)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        assert stalled.recv(10)  # flowing, then never read again
        time.sleep(0.5)
        started = time.monotonic()
        with running.connect(1, timeout=60) as sock:
            received = exchange(sock, b"", half_close=False)
        assert len(received) == 50 << 20
        expected = hashlib.sha256()
        for chunk in seeded_chunks(50 << 20, seed=9):
            expected.update(chunk)
        assert hashlib.sha256(received).digest() == expected.digest()
        assert time.monotonic() - started < 60
        stalled.close()
    endless.close()
    bulk.close()


# --- faults ---------------------------------------------------------------------------------------------
def _mux_session(settings, timeout: float = 10):  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = [s for s in mux_sessions(settings) if not s.done.is_set() and s.process is not None]
        if live:
            return live[-1]
        time.sleep(0.02)
    raise AssertionError("the mux relay did not start")


def _read_until_reset(sock: socket.socket) -> str:
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        return "reset"
    return "eof"


@pytest.mark.parametrize("fault", ["kill_process", "drop"])
def test_mux_exec_dies_live_connections_reset_and_the_next_one_restarts_it(apiserver, exec_settings,  # noqa: F811
                                                                            upstream_echo, fault):
    endless = Upstream(send_seeded(1 << 40))
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{endless.port}", f":{upstream_echo.port}"],
                    relay="python3") as running:
        idle = running.connect(1)
        idle.sendall(b"x")
        assert idle.recv(1) == b"x"
        with running.connect(0) as sock:
            assert len(sock.recv(65536)) > 0
            started = time.monotonic()
            getattr(_mux_session(exec_settings), fault)()
            # a cut download must not look complete: the local connection is reset, promptly
            assert _read_until_reset(sock) == "reset"
            assert time.monotonic() - started < 5
        assert _read_until_reset(idle) == "reset"
        idle.close()
        text = running.wait_for_error("lost the relay in pod/web")
        assert "reset 2 open connections" in text and len(text.strip().splitlines()) == 1
        with running.connect(1) as sock:  # the listener stayed; a new mux starts
            assert exchange(sock, b"again") == b"againEOF after 5\n"
        assert len(mux_sessions(exec_settings)) == 2
    endless.close()


def _deployment(name: str, labels: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}}}


def test_pod_replaced_behind_a_deployment(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(_deployment("api", {"app": "api"}), linux_pod("api-1", {"app": "api"}))
    with forwarding(apiserver, "deploy/api", [f":{upstream_echo.port}"], relay="python3") as running:
        held = running.connect()
        held.sendall(b"one")
        assert held.recv(3) == b"one"
        # The pod goes away, and its containers (the relay) with it.
        apiserver.store.delete(apiserver.store.resource("", "v1", "pods"), "default", "api-1")
        apiserver.put(linux_pod("api-2", {"app": "api"}))
        _mux_session(exec_settings).end()
        assert _read_until_reset(held) == "reset"
        held.close()
        with running.connect() as sock:
            assert exchange(sock, b"two") == b"twoEOF after 3\n"
        assert "pod api-1 is gone; now forwarding to pod api-2" in running.err.text()
        assert mux_sessions(exec_settings)[-1].pod == "api-2"


def test_refused_target_is_one_line_and_the_mux_keeps_serving(apiserver, exec_settings, upstream_echo):  # noqa: F811
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{dead_port}", f":{upstream_echo.port}"], relay="python3") as running:
        for _ in range(2):
            with running.connect(0) as sock:
                assert sock.recv(10) == b""
        text = running.wait_for_error("connection 2 ")
        lines = text.strip().splitlines()
        assert len(lines) == 2 and all("connection refused inside the pod" in line for line in lines)
        with running.connect(1) as sock:
            assert exchange(sock, b"ok") == b"okEOF after 2\n"
        assert len(mux_sessions(exec_settings)) == 1


def test_idle_forward_survives_the_servers_idle_timeout(apiserver, exec_settings, upstream_echo):  # noqa: F811
    # The server drops exec streams silent for 1 s (kubelet's idle timeout, a load balancer): pings
    # keep the one mux exec alive with a connection open and with none.
    exec_settings.idle_timeout = 1.0
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3",
                    ping_interval=0.25) as running:
        with running.connect() as sock:
            sock.sendall(b"a")
            assert sock.recv(1) == b"a"
            time.sleep(2.5)
            sock.sendall(b"b")
            assert sock.recv(1) == b"b"
        time.sleep(2.5)
        with running.connect() as sock:
            assert exchange(sock, b"c") == b"cEOF after 1\n"
        assert len(mux_sessions(exec_settings)) == 1
        assert running.err.text() == ""


# --- fallback ------------------------------------------------------------------------------------------------
def test_falls_back_to_one_exec_per_connection_and_says_so_once(apiserver, exec_settings, upstream_echo):  # noqa: F811
    if not any(__import__("shutil").which(tool) for tool in ("socat",)):
        pytest.skip("socat is not installed (CI installs it)")
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="socat") as running:
        for _ in range(3):
            with running.connect() as sock:
                assert exchange(sock, b"s") == b"sEOF after 1\n"
        text = running.err.text()
        assert text.count("cannot multiplex connections") == 1
        assert "the socat relay carries one connection per exec" in text
        assert not mux_sessions(exec_settings)


def test_mux_off_runs_one_exec_per_connection(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3", mux="off") as running:
        for _ in range(2):
            with running.connect() as sock:
                assert exchange(sock, b"o") == b"oEOF after 1\n"
        assert not mux_sessions(exec_settings)
        assert running.err.text() == ""


# --- UDP -----------------------------------------------------------------------------------------------------
class UdpEcho:
    """A UDP echo server "inside the pod"."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((host, 0))
        self.port = self.sock.getsockname()[1]
        self.peers: set = set()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(65535)
            except OSError:
                return
            if peer is None:  # shut down
                return
            self.peers.add(peer)
            self.sock.sendto(data, peer)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes recvfrom before the fd number can be reused
        except OSError:
            pass
        self.sock.close()


def _udp_client(port: int) -> socket.socket:
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    client.connect(("127.0.0.1", port))
    client.settimeout(10)
    return client


def test_udp_echo_of_10000_datagrams_in_order_with_boundaries(apiserver, exec_settings):  # noqa: F811
    echo = UdpEcho()
    apiserver.put(linux_pod("dns"))
    with forwarding(apiserver, "pod/dns", [f":{echo.port}/udp"], relay="python3") as running:
        assert f"-> {echo.port}/udp" in running.out.text()
        client = _udp_client(running.ports[0])
        # every size differs from its neighbours, so merged or split datagrams would show
        datagrams = [index.to_bytes(4, "big") + bytes((index % 251,)) * ((index * 7919) % 1400)
                     for index in range(10_000)]
        in_flight = 32
        received: list[bytes] = []
        for index, datagram in enumerate(datagrams):
            client.send(datagram)
            if index >= in_flight:
                received.append(client.recv(65535))
        while len(received) < len(datagrams):
            received.append(client.recv(65535))
        assert [int.from_bytes(d[:4], "big") for d in received] == list(range(10_000))  # in order, no loss
        assert received == datagrams
        client.close()
        assert len(echo.peers) == 1  # one flow for one local peer
        assert running.err.text() == ""
    echo.close()


def test_udp_one_flow_per_local_peer_and_idle_flows_close(apiserver, exec_settings):  # noqa: F811
    echo = UdpEcho()
    apiserver.put(linux_pod("dns"))
    with forwarding(apiserver, "pod/dns", [f":{echo.port}/udp"], relay="python3", udp_idle_timeout=0.5) as running:
        clients = [_udp_client(running.ports[0]) for _ in range(3)]
        for index, client in enumerate(clients):
            client.send(b"peer %d" % index)
        for index, client in enumerate(clients):
            assert client.recv(100) == b"peer %d" % index  # answers go back to the peer that asked
        assert len(echo.peers) == 3
        time.sleep(1.5)  # idle: the flows close, the relay's sockets with them
        clients[0].send(b"later")
        assert clients[0].recv(100) == b"later"
        assert len(echo.peers) == 4  # a new flow, from a new socket in the pod
        for client in clients:
            client.close()
    echo.close()


def test_udp_honours_remote_host(apiserver, exec_settings, upstream_echo):  # noqa: F811
    try:
        echo = UdpEcho("::1")
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    apiserver.put(linux_pod("dns"))
    with forwarding(apiserver, "pod/dns", [f":{echo.port}/udp"], relay="python3", remote_host="::1") as running:
        client = _udp_client(running.ports[0])
        client.send(b"over six")
        assert client.recv(100) == b"over six"
        client.close()
    echo.close()


# --- the native Windows relay (under Wine) -------------------------------------------------------------------
def test_native_relay_multiplexes_tcp_and_udp(apiserver, windows_exec, upstream_echo):  # noqa: F811
    echo = UdpEcho()
    download = Upstream(send_seeded(20 << 20, seed=3))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    apiserver.put(windows_pod("iis"))
    ports = [f":{upstream_echo.port}", f":{download.port}", f":{echo.port}/udp", f":{dead_port}"]
    with forwarding(apiserver, "pod/iis", ports) as running:
        results: dict[int, bool] = {}

        def talk(index: int) -> None:
            with running.connect(0, timeout=60) as sock:
                payload = (b"%d;" % index) * 5000
                results[index] = exchange(sock, payload) == payload + b"EOF after %d\n" % len(payload)

        threads = [threading.Thread(target=talk, args=(i,)) for i in range(50)]
        for thread in threads:
            thread.start()
        with running.connect(1, timeout=60) as sock:
            received = exchange(sock, b"", half_close=False)
        for thread in threads:
            thread.join(60)
        # A second wave runs on the stream threads the first one left idle (the relay reuses them).
        second = [threading.Thread(target=talk, args=(i,)) for i in range(50, 120)]
        for thread in second:
            thread.start()
        for thread in second:
            thread.join(60)
        assert sorted(results) == list(range(120)) and all(results.values())
        expected = hashlib.sha256()
        for chunk in seeded_chunks(20 << 20, seed=3):
            expected.update(chunk)
        assert hashlib.sha256(received).digest() == expected.digest()

        client = _udp_client(running.ports[2])
        datagrams = [b"%d" % i * (1 + i % 50) for i in range(500)]
        for datagram in datagrams:
            client.send(datagram)
            assert client.recv(65535) == datagram
        client.close()

        with running.connect(3) as sock:
            assert sock.recv(10) == b""
        running.wait_for_error("connection refused inside the pod")
        assert len(mux_sessions(windows_exec)) == 0  # the native relay's argv holds no script
        relay_runs = [c for c in windows_exec.commands if c[0].endswith("kwin-relay.exe")]
        assert [c[1:] for c in relay_runs] == [["--version"], ["--mux"]]  # one exec for everything
    echo.close()
    download.close()


def test_native_relay_killed_resets_connections_and_restarts(apiserver, windows_exec, upstream_echo):  # noqa: F811
    apiserver.put(windows_pod("iis"))
    with forwarding(apiserver, "pod/iis", [f":{upstream_echo.port}"]) as running:
        held = running.connect()
        held.sendall(b"x")
        assert held.recv(1) == b"x"
        session = next(s for s in windows_exec.live_sessions() if s.argv[-1:] == ["--mux"])
        session.kill_process()
        assert _read_until_reset(held) == "reset"
        held.close()
        running.wait_for_error("lost the relay in pod/iis")
        with running.connect() as sock:
            assert exchange(sock, b"back") == b"backEOF after 4\n"
    # On exit the relay is stopped first, then its upload directory removed.
    assert "could not remove" not in running.err.text()
    assert not list((windows_exec.pod_root("default", "iis") / "Windows" / "Temp").glob("kubectl-win-*"))
