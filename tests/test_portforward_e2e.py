"""End to end: the forwarder against the test API server's pods/exec over real HTTPS websockets,
one exec per connection (`--mux=off`, and the fallback where the multiplexing relay cannot run);
test_portforward_mux.py covers the multiplexed path.

The "pod" runs on this host: Linux relays natively, the native Windows relay under Wine.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time

import pytest

from tests.support import portforward_rig as rig
from tests.support.portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exchange,
    exec_settings,
    hash_until_eof,
    linux_pod,
    random_blob,
    seeded_chunks,
    send_seeded,
    windows_exec,
    windows_pod,
    wine_prefix,
)

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"


def forwarding(apiserver, target: str, ports: list[str], **options):  # noqa: ANN001, ANN201
    options.setdefault("mux", "off")
    return rig.forwarding(apiserver, target, ports, **options)
HAS_SOCAT = any(os.access(os.path.join(d, "socat"), os.X_OK) for d in os.environ.get("PATH", "").split(":"))


def sha_line(data: bytes) -> bytes:
    return f"{hashlib.sha256(data).hexdigest()} {len(data)}\n".encode()


@pytest.fixture
def upstream_echo():
    upstream = Upstream(echo_then_report)
    yield upstream
    upstream.close()


# --- data integrity -------------------------------------------------------------------------------
@pytest.mark.parametrize("relay", ["python3", pytest.param("socat", marks=pytest.mark.skipif(
    not HAS_SOCAT, reason="socat is not installed (CI installs it)"))])
def test_100_mb_each_way_linux_relay(apiserver, exec_settings, upstream_echo, relay):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay=relay) as running:
        payload = random_blob(100 << 20)
        with running.connect(timeout=120) as sock:
            reply = exchange(sock, payload)
        assert len(reply) == len(payload) + len(b"EOF after %d\n" % len(payload))
        assert hashlib.sha256(reply[:len(payload)]).digest() == hashlib.sha256(payload).digest()
        assert reply[len(payload):] == b"EOF after %d\n" % len(payload)
        assert running.err.text() == ""


def test_100_mb_each_way_native_windows_relay(apiserver, windows_exec):  # noqa: F811
    upload = Upstream(hash_until_eof)
    download = Upstream(send_seeded(100 << 20, seed=11))
    apiserver.put(windows_pod("iis"))
    with forwarding(apiserver, "pod/iis", [f":{upload.port}", f":{download.port}"]) as running:
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
        assert replies["up"] == sha_line(payload)
        expected = hashlib.sha256()
        for chunk in seeded_chunks(100 << 20, seed=11):
            expected.update(chunk)
        received = replies["down"]
        assert (len(received), hashlib.sha256(received).digest()) == (100 << 20, expected.digest())
        assert all(c[0].endswith("kwin-relay.exe") for c in windows_exec.commands if "127.0.0.1" in c)
    upload.close()
    download.close()


# --- half-close -------------------------------------------------------------------------------------
def test_half_close_reaches_the_server_under_v5(apiserver, exec_settings):  # noqa: F811
    upstream = Upstream(hash_until_eof)
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream.port}"], relay="python3") as running:
        payload = b"request body \x00\xff" * 1000
        with running.connect() as sock:
            # The server answers only after our FIN: it must travel as the v5 CLOSE frame.
            assert exchange(sock, payload) == sha_line(payload)
    upstream.close()


def test_half_close_under_v4_keeps_stdin_open_and_ends_after_the_linger(apiserver, exec_settings,  # noqa: F811
                                                                         upstream_echo):
    exec_settings.protocols = (V4,)
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3",
                    v4_eof_linger=1.5) as running:  # the relay may take ~0.5 s to start on a busy machine
        with running.connect() as sock:
            started = time.monotonic()
            reply = exchange(sock, b"hello")
            elapsed = time.monotonic() - started
        # The echo arrives, but the server never saw EOF (no "EOF after" line): v4 cannot
        # express a half-close, so the exec ends after the quiet period instead.
        assert reply == b"hello"
        assert 0.4 < elapsed < 10
        assert running.err.text() == ""
        assert [s.protocol for s in exec_settings.sessions][-1] == V4


def test_the_server_closing_first_closes_the_local_connection(apiserver, exec_settings):  # noqa: F811
    def greet(conn: socket.socket) -> None:
        conn.sendall(b"220 ready\r\n")

    upstream = Upstream(greet)
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream.port}"], relay="python3") as running:
        with running.connect() as sock:
            data = b""
            while chunk := sock.recv(100):
                data += chunk
        assert data == b"220 ready\r\n"
    upstream.close()


# --- concurrency ----------------------------------------------------------------------------------
def test_200_concurrent_connections(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    results: dict[int, bytes] = {}
    relay = "socat" if HAS_SOCAT else "python3"  # socat starts faster than 200 Python interpreters
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay=relay) as running:
        sockets = [running.connect(timeout=120) for _ in range(200)]  # all open at once

        def talk(index: int, sock: socket.socket) -> None:
            payload = (b"%d:" % index) * 2000
            with sock:
                results[index] = exchange(sock, payload) == payload + b"EOF after %d\n" % len(payload)

        threads = [threading.Thread(target=talk, args=(i, s)) for i, s in enumerate(sockets)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        assert sorted(results) == list(range(200)) and all(results.values())
        assert running.err.text() == ""
        assert upstream_echo.accepted == 200


# --- faults -----------------------------------------------------------------------------------------
def _wait_for_session(settings, argv_tail: list[str], timeout: float = 10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for session in settings.live_sessions():
            if session.argv[-len(argv_tail):] == argv_tail and session.process is not None:
                return session
        time.sleep(0.02)
    raise AssertionError("the relay exec did not start")


def test_relay_killed_mid_stream(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    endless = Upstream(send_seeded(1 << 40))
    with forwarding(apiserver, "pod/web", [f":{endless.port}", f":{upstream_echo.port}"],
                    relay="python3") as running:
        with running.connect(0) as sock:
            assert len(sock.recv(65536)) > 0
            _wait_for_session(exec_settings, ["127.0.0.1", str(endless.port)]).kill_process()
            while sock.recv(1 << 20):
                pass  # the local connection ends instead of hanging
        text = running.wait_for_error("relay exited with code")
        assert len(text.strip().splitlines()) == 1
        with running.connect(1) as sock:  # and the forwarder keeps serving
            assert exchange(sock, b"still here") == b"still hereEOF after 10\n"
    endless.close()


def test_websocket_dropped(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    endless = Upstream(send_seeded(1 << 40))
    with forwarding(apiserver, "pod/web", [f":{endless.port}", f":{upstream_echo.port}"],
                    relay="python3") as running:
        with running.connect(0) as sock:
            assert len(sock.recv(65536)) > 0
            _wait_for_session(exec_settings, ["127.0.0.1", str(endless.port)]).drop()
            while sock.recv(1 << 20):
                pass
        text = running.wait_for_error("lost the exec stream")
        assert len(text.strip().splitlines()) == 1
        with running.connect(1) as sock:
            assert exchange(sock, b"again") == b"againEOF after 5\n"
    endless.close()


def test_pod_refuses_the_connection(apiserver, exec_settings, upstream_echo):  # noqa: F811
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
        assert lines[0].startswith("error: connection 1 (127.0.0.1:")
        with running.connect(1) as sock:
            assert exchange(sock, b"ok") == b"okEOF after 2\n"


def test_pod_refuses_the_connection_native_relay(apiserver, windows_exec):  # noqa: F811
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    apiserver.put(windows_pod("iis"))
    with forwarding(apiserver, "pod/iis", [f":{dead_port}"]) as running:
        with running.connect() as sock:
            assert sock.recv(10) == b""
        text = running.wait_for_error("connection refused inside the pod")
        assert len(text.strip().splitlines()) == 1


def test_idle_connection_is_kept_alive_by_pings(apiserver, exec_settings, upstream_echo):  # noqa: F811
    # The server drops exec streams that are silent for 1 s (like kubelet's idle timeout or an LB).
    exec_settings.idle_timeout = 1.0
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3",
                    ping_interval=0.25) as running:
        with running.connect() as sock:
            sock.sendall(b"a")
            assert sock.recv(1) == b"a"
            time.sleep(3)  # idle three times the server's timeout
            sock.sendall(b"b")
            assert sock.recv(1) == b"b"
        assert running.err.text() == ""


def test_idle_connection_without_pings_is_dropped(apiserver, exec_settings, upstream_echo):  # noqa: F811
    # 1 s: the relay (a Python interpreter) must start and echo within it on a loaded machine
    exec_settings.idle_timeout = 1.0
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3", ping_interval=0) as running:
        with running.connect() as sock:
            sock.sendall(b"a")
            assert sock.recv(1) == b"a"
            assert sock.recv(10) == b""  # the control: without pings the idle stream dies (recv waits for it)


@pytest.mark.skipif(bool(os.environ.get("KUBECTL_WIN_QUICK_TESTS")),
                    reason="takes 30 s; KUBECTL_WIN_QUICK_TESTS is set")
def test_30_seconds_idle_kept_alive_by_default_pings(apiserver, exec_settings, upstream_echo):  # noqa: F811
    exec_settings.idle_timeout = 10.0
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        with running.connect() as sock:
            time.sleep(30)
            sock.sendall(b"x")
            assert sock.recv(1) == b"x"


def test_read_timeout_detects_a_hung_stream(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3", ping_interval=0.2,
                    read_timeout=1.0) as running:
        with running.connect() as sock:
            sock.sendall(b"a")
            assert sock.recv(1) == b"a"
            _wait_for_session(exec_settings, ["127.0.0.1", str(upstream_echo.port)]).freeze()
            started = time.monotonic()
            assert sock.recv(10) == b""
            assert time.monotonic() - started < 10
        running.wait_for_error("no data or pong from the API server within the read timeout")


def test_no_rbac_for_exec_is_one_line_per_connection(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        rule = apiserver.auth.deny("create", "pods/exec")
        with running.connect() as sock:
            assert sock.recv(10) == b""
        text = running.wait_for_error("forbidden")
        assert len(text.strip().splitlines()) == 1
        assert 'cannot create resource "pods/exec"' in text
        apiserver.auth.denials.remove(rule)
        with running.connect() as sock:
            assert exchange(sock, b"x") == b"xEOF after 1\n"


def test_no_relay_in_the_image(apiserver, exec_settings, tmp_path, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("distroless"))
    exec_settings.linux_path["default/distroless"] = str(tmp_path)  # nothing on PATH, not even sh
    with forwarding(apiserver, "pod/distroless", [f":{upstream_echo.port}"]) as running:
        with running.connect() as sock:
            assert sock.recv(10) == b""
        text = running.wait_for_error("no relay can run")
        assert "sh (not found)" in text and len(text.strip().splitlines()) == 1


def test_windows_pod_without_tar_or_powershell(apiserver, windows_exec, upstream_echo):  # noqa: F811
    apiserver.put(windows_pod("nano"))
    windows_exec.windows_tools["default/nano"] = {"cmd.exe"}
    with forwarding(apiserver, "pod/nano", [f":{upstream_echo.port}"]) as running:
        with running.connect() as sock:
            assert sock.recv(10) == b""
        text = running.wait_for_error("no relay can run")
        assert "tar.exe (not found)" in text and "powershell.exe (not found)" in text
        assert "pwsh.exe (not found)" in text


# --- targets ----------------------------------------------------------------------------------------
def _deployment(name: str, labels: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}}}


def test_pod_replaced_behind_a_deployment(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(_deployment("api", {"app": "api"}), linux_pod("api-1", {"app": "api"}))
    with forwarding(apiserver, "deploy/api", [f":{upstream_echo.port}"], relay="python3") as running:
        with running.connect() as sock:
            assert exchange(sock, b"one") == b"oneEOF after 3\n"
        apiserver.store.delete(apiserver.store.resource("", "v1", "pods"), "default", "api-1")
        apiserver.put(linux_pod("api-2", {"app": "api"}))
        with running.connect() as sock:
            assert exchange(sock, b"two") == b"twoEOF after 3\n"
        assert "pod api-1 is gone; now forwarding to pod api-2" in running.err.text()
        assert exec_settings.sessions[-1].pod == "api-2"


def test_bare_pod_deleted_ends_the_session_with_exit_1(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("solo"))
    with forwarding(apiserver, "pod/solo", [f":{upstream_echo.port}"], relay="python3") as running:
        apiserver.store.delete(apiserver.store.resource("", "v1", "pods"), "default", "solo")
        with running.connect() as sock:
            assert sock.recv(10) == b""
        text = running.wait_for_error("pod solo is gone")
        assert "stopping" in text
        assert running.forwarder.wait() == 1


def test_windows_pod_deleted_after_upload_needs_no_clean_up(apiserver, windows_exec, upstream_echo):  # noqa: F811
    apiserver.put(windows_pod("iis"))
    with forwarding(apiserver, "pod/iis", [f":{upstream_echo.port}"]) as running:
        with running.connect() as sock:
            assert exchange(sock, b"up") == b"upEOF after 2\n"
        apiserver.store.delete(apiserver.store.resource("", "v1", "pods"), "default", "iis")
        with running.connect() as sock:
            assert sock.recv(10) == b""
        running.wait_for_error("pod iis is gone")
        assert running.forwarder.wait() == 1
        assert "could not remove" not in running.err.text()


def test_service_target_maps_named_target_port(apiserver, exec_settings, upstream_echo):  # noqa: F811
    pod = linux_pod("db-0", {"app": "db"}, ports=[{"name": "sql", "containerPort": upstream_echo.port}])
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "default"},
               "spec": {"selector": {"app": "db"}, "ports": [{"name": "tds", "port": 1433, "targetPort": "sql"}]}}
    apiserver.put(pod, service)
    with forwarding(apiserver, "svc/db", [":1433"]) as running:
        assert f"-> {upstream_echo.port}" in running.out.text()
        with running.connect() as sock:
            assert exchange(sock, b"q") == b"qEOF after 1\n"
        assert str(upstream_echo.port) in " ".join(exec_settings.commands[-1])


def test_remote_host_ipv6_loopback(apiserver, exec_settings):  # noqa: F811
    try:
        upstream = Upstream(echo_then_report, host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream.port}"], remote_host="::1", relay="python3") as running:
        with running.connect() as sock:
            assert exchange(sock, b"six") == b"sixEOF after 3\n"
    upstream.close()


def test_default_listener_is_loopback_only(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], relay="python3") as running:
        port = running.ports[0]
        listening = {(listener.address, listener.port) for listener in running.forwarder.listeners}
        assert listening == {("127.0.0.1", port)}
        for other in _other_local_addresses():
            with pytest.raises(OSError):
                socket.create_connection((other, port), timeout=2).close()
        with running.connect() as sock:  # while loopback works
            assert exchange(sock, b"x") == b"xEOF after 1\n"


def test_several_listen_addresses_share_one_chosen_port(apiserver, exec_settings, upstream_echo):  # noqa: F811
    apiserver.put(linux_pod("web"))
    try:
        with forwarding(apiserver, "pod/web", [f":{upstream_echo.port}"], addresses=["127.0.0.1", "::1"],
                        relay="python3") as running:
            port = running.ports[0]
            assert running.ports == [port, port]
            assert f"Forwarding from [::1]:{port} -> {upstream_echo.port}" in running.out.text()
            with socket.create_connection(("::1", port), timeout=30) as sock:
                assert exchange(sock, b"v6") == b"v6EOF after 2\n"
    except Exception as exc:  # noqa: BLE001
        if "unable to listen on [::1]" in str(exc):
            pytest.skip("no IPv6 loopback on this machine")
        raise


def _other_local_addresses() -> list[str]:
    addresses = ["127.0.0.2"]  # another loopback address: the listener is bound to 127.0.0.1 exactly
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent; this only picks the outgoing interface
        address = probe.getsockname()[0]
        if not address.startswith("127."):
            addresses.append(address)
    except OSError:
        pass
    finally:
        probe.close()
    return addresses
