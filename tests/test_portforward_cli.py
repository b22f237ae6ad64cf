"""port-forward through the CLI (one-line errors, Ctrl-C) and protocol fidelity of the test server's
pods/exec against the real kubectl and the kubernetes Python client."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from tests.support.cli import run_cli
from tests.support.paths import ROOT
from tests.support.portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exchange,
    exec_settings,
    linux_pod,
    random_blob,
    windows_exec,
    windows_pod,
    wine_prefix,
)
from tests.support.waiting import HANG_GUARD


# --- bad input: one line, exit 2, before touching any cluster -----------------------------------
@pytest.mark.parametrize("args, needle", [
    (["pod/web", "99999"], "invalid remote port '99999'"),
    (["pod/web", "0:80"], "invalid local port '0'"),
    (["job/web", "80"], "invalid target 'job/web'"),
    (["pod/Web_1", "80"], "is not a valid object name"),
    (["pod/web", "80", "--remote-host", "a;reboot"], "invalid --remote-host 'a;reboot'"),
    (["pod/web", "80", "--remote-host", "$(id)"], "invalid --remote-host"),
    (["pod/web", "80", "--address", "example.com"], "invalid --address 'example.com'"),
    (["pod/web", "80", "-c", "App;x"], "invalid container name"),
    (["pod/web", "80", "--relay", "curl"], "--relay"),
    (["pod/web", "80", "--ping-interval", "-1"], "--ping-interval"),
    (["pod/web", "53/udp", "--mux", "off"], "UDP ports need the multiplexing relay"),
    (["pod/web", "80", "--mux", "on"], "--mux"),
    (["pod/web", "53/quic"], "the protocol must be tcp or udp"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    result = run_cli("port-forward", *args, "--kubeconfig", str(tmp_path / "missing"))
    assert result.exit_code == 2, result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert needle in result.stderr
    assert result.stdout == ""


# --- bad targets against a cluster ----------------------------------------------------------------
def _service(name: str, selector: dict | None, ports: list[dict]) -> dict:
    spec: dict = {"ports": ports}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize("args, needle", [
    (["deploy/missing", "80"], 'deployments "missing" not found'),
    (["pod/missing", "80"], 'pods "missing" not found'),
    (["pod/web", "http"], "pod web has no container port named 'http'"),
    (["svc/bare", "80"], "the Service is defined without a selector"),
    (["svc/dns", "53"], "port 53 is UDP; add /udp"),
    (["svc/dns", "53/tcp"], "port 53 is UDP"),
    (["svc/dns", "8080"], "service/dns does not have a service port 8080"),
    (["pod/pending", "80", "--pod-running-timeout", "0.3"], "pod is not running (phase Pending)"),
    (["pod/web", "80", "-c", "sidecar"], "container 'sidecar' not found in pod web"),
])
def test_bad_targets_are_one_line_errors(apiserver, args, needle):
    pending = linux_pod("pending")
    pending["status"] = {"phase": "Pending"}
    apiserver.put(linux_pod("web"), pending, _service("bare", None, [{"port": 80}]),
                  _service("dns", {"app": "dns"}, [{"port": 53, "protocol": "UDP"}]),
                  linux_pod("dns-0", {"app": "dns"}))
    result = run_cli("port-forward", *args, "--kubeconfig", str(apiserver.kubeconfig))
    assert result.exit_code == 2, result
    assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr


def test_unreachable_cluster_is_exit_3(apiserver, tmp_path):
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()
    config = tmp_path / "config"
    config.write_text(apiserver.kubeconfig.read_text().replace(f":{apiserver.server.port}", f":{port}"))
    result = run_cli("port-forward", "pod/web", "80", "--kubeconfig", str(config), "--request-timeout", "2")
    assert result.exit_code == 3, result
    assert result.stderr.count("\n") == 1


# --- the real process: Ctrl-C ---------------------------------------------------------------------
def _start_cli(apiserver, *args: str) -> tuple[subprocess.Popen, list[str]]:  # noqa: ANN001
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "port-forward", *args,
                                "--kubeconfig", str(apiserver.kubeconfig)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    assert line.startswith("Forwarding from 127.0.0.1:"), (line, process.stderr.read() if not line else "")
    return process, [line]


def test_ctrl_c_closes_listeners_removes_the_relay_and_exits_0(apiserver, windows_exec):  # noqa: F811
    upstream = Upstream(echo_then_report)
    apiserver.put(windows_pod("iis"))
    process, lines = _start_cli(apiserver, "pod/iis", f":{upstream.port}")
    # Events only (a reply, the process gone), no time budget: a loaded machine is slow, never wrong.
    # HANG_GUARD only turns a hang (e.g. Ctrl-C waiting forever on the idle connection) into a failure.
    try:
        local_port = int(lines[0].split()[2].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", local_port), timeout=HANG_GUARD) as sock:
            assert exchange(sock, b"hello") == b"helloEOF after 5\n"
        # An open, idle connection at Ctrl-C time is finished or aborted, not waited on forever: the
        # process ends while the client still holds it open.
        lingering = socket.create_connection(("127.0.0.1", local_port), timeout=HANG_GUARD)
        lingering.sendall(b"x")
        assert lingering.recv(1) == b"x"
        process.send_signal(signal.SIGINT)
        code = process.wait(HANG_GUARD)
        assert code == 0, process.stderr.read()
        assert lingering.recv(100) in (b"", b"EOF after 1\n")
        lingering.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", local_port), timeout=2).close()
    finally:
        if process.poll() is None:
            process.kill()
    removals = [c for c in windows_exec.commands if c[:2] == ["cmd.exe", "/c"]]
    assert len(removals) == 1 and removals[0][2:5] == ["rmdir", "/s", "/q"]
    assert list((windows_exec.pod_root("default", "iis") / "Windows" / "Temp").iterdir()) == []
    assert "Handling connection for" in process.stdout.read()
    assert "Traceback" not in process.stderr.read()
    upstream.close()


# --- protocol fidelity of the test server ---------------------------------------------------------
def test_real_kubectl_exec_over_the_websocket_protocol(apiserver, exec_settings, kubectl):  # noqa: F811
    apiserver.put(linux_pod("web"))
    payload = random_blob(256 * 1024)
    env = apiserver.kubectl_env()
    result = subprocess.run([kubectl, "exec", "-i", "web", "--", "cat"], input=payload, capture_output=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == payload  # kubectl's v5 CLOSE on stdin reached cat as EOF
    failed = subprocess.run([kubectl, "exec", "web", "--", "sh", "-c", "echo oops >&2; exit 3"],
                            capture_output=True, env=env, timeout=60)
    assert failed.returncode == 3  # kubectl decoded the status channel's ExitCode cause
    assert b"oops" in failed.stderr
    assert exec_settings.sessions[-1].protocol == "v5.channel.k8s.io"


def _python_client(apiserver):  # noqa: ANN001, ANN202
    from kubernetes import client, config

    return client.CoreV1Api(config.new_client_from_config(config_file=str(apiserver.kubeconfig)))


def test_kubernetes_python_client_stream_v5(apiserver, exec_settings):  # noqa: F811
    from kubernetes.stream import stream

    apiserver.put(linux_pod("web"))
    api = _python_client(apiserver)
    ws = stream(api.connect_get_namespaced_pod_exec, "web", "default", command=["cat"], stdin=True,
                stdout=True, stderr=True, tty=False, _preload_content=False, binary=True)
    payload = bytes(range(256)) * 512
    ws.write_stdin(payload)
    ws.close_channel(0)  # v5 half-close: cat sees EOF and exits
    ws.run_forever(timeout=30)
    assert ws.read_stdout() == payload
    assert ws.returncode == 0
    assert ws.subprotocol == "v5.channel.k8s.io"

    ws = stream(api.connect_get_namespaced_pod_exec, "web", "default", command=["sh", "-c", "exit 7"],
                stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False, binary=True)
    ws.run_forever(timeout=30)
    assert ws.returncode == 7


def test_kubernetes_python_client_stream_v4(apiserver, exec_settings):  # noqa: F811
    from kubernetes.stream import stream

    exec_settings.protocols = ("v4.channel.k8s.io",)
    apiserver.put(linux_pod("web"))
    api = _python_client(apiserver)
    output = stream(api.connect_get_namespaced_pod_exec, "web", "default", command=["sh", "-c", "printf 'a\\0b'"],
                    stdin=False, stdout=True, stderr=True, tty=False, binary=True)
    assert output == b"a\0b"
    assert exec_settings.sessions[-1].protocol == "v4.channel.k8s.io"


def test_unknown_subprotocols_are_refused(apiserver, exec_settings):  # noqa: F811
    from kubectl_win.kube import KubeFlags, connect
    from kubectl_win.kube.exec_stream import ExecRejected, ExecStream, WebsocketTarget, exec_query

    apiserver.put(linux_pod("web"))
    cluster = connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig)))
    args = cluster.websocket_args("/api/v1/namespaces/default/pods/web/exec", exec_query(["true"], "app"))
    target = WebsocketTarget(args.url, dict(args.headers), args.ssl_context)
    with pytest.raises(ExecRejected) as info:
        ExecStream.open(target, protocols=("channel.k8s.io", "base64.channel.k8s.io"))
    assert info.value.code == 400 and "not supported" in str(info.value)
    exec_settings.protocols = ("v4.channel.k8s.io",)
    stream = ExecStream.open(target)  # offers v5 then v4: the server settles on v4
    assert stream.protocol == "v4.channel.k8s.io" and not stream.close_stdin()
    first = stream.recv_message()
    assert first == b"\x01"  # the initial empty stdout frame
    stream.abort()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_the_default_address_is_localhost_on_both_loopbacks_and_address_narrows_it(apiserver,  # noqa: ANN001
                                                                                   windows_exec):  # noqa: F811
    """As kubectl: with no --address, 127.0.0.1 and ::1 (IPv6 clients of `localhost` connect too)."""
    if not _has_ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback")
    upstream = Upstream(echo_then_report)
    apiserver.put(windows_pod("iis"))
    process, lines = _start_cli(apiserver, "pod/iis", f":{upstream.port}")
    try:
        lines.append(process.stdout.readline())
        local_port = int(lines[0].split()[2].rsplit(":", 1)[1])
        assert lines == [f"Forwarding from 127.0.0.1:{local_port} -> {upstream.port}\n",
                         f"Forwarding from [::1]:{local_port} -> {upstream.port}\n"]
        with socket.create_connection(("::1", local_port), timeout=HANG_GUARD) as sock:
            assert exchange(sock, b"hello") == b"helloEOF after 5\n"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(HANG_GUARD)
    narrowed, lines = _start_cli(apiserver, "pod/iis", f":{upstream.port}", "--address", "127.0.0.1")
    try:
        local_port = int(lines[0].split()[2].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", local_port), timeout=HANG_GUARD) as sock:
            assert exchange(sock, b"hello") == b"helloEOF after 5\n"
        with pytest.raises(OSError):
            socket.create_connection(("::1", local_port), timeout=5).close()
    finally:
        narrowed.send_signal(signal.SIGINT)
        assert narrowed.wait(HANG_GUARD) == 0
        assert "Forwarding from" not in narrowed.stdout.read()  # one listener only
