"""serve and the fleet under faults, each tried as real processes on loopback: a credential plugin that hangs,
a server that sends its answer a byte at a time, a burst of scrapes, scrapers whose requests come late, idle
and slow clients, huge headers, a malformed Accept header, and context names that hold escape sequences; and
serve's HTTP server in process, starved for certain (its workers held, its clock moved on). Every connection
serve accepts must get an answer or a status. Every wait is on an event; every probe is bounded in count and
in time (HANG_GUARD)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.support.paths import ROOT, SAMPLE_DUMP
from tests.support.waiting import HANG_GUARD, wait_until
from tests.test_serve import Serve

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and SIGTERM are POSIX here")

# A credential plugin that starts a child, writes both pids, and never answers.
HUNG_PLUGIN = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
time.sleep(3600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has ended; only its parent has not collected it yet
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


class Drip:
    """An HTTP server on loopback that answers every request with a 200 whose JSON body comes one byte at a
    time, `gap` seconds apart: no single read ever waits long enough to time out."""

    def __init__(self, gap: float = 0.5) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.gap = gap
        self.stop = threading.Event()
        self.started = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
                self.started.set()
                while not self.stop.wait(self.gap):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


def kubeconfig_with(apiserver, tmp_path: Path, extra: dict[str, dict]) -> Path:  # type: ignore[no-untyped-def]
    """The test API server as context "lab", plus each extra context: name -> {"server": ..., "user": {...}}."""
    config = yaml.safe_load(apiserver.server.write_kubeconfig(tmp_path / "lab.yaml", context="lab").read_text())
    for name, spec in extra.items():
        cluster = {"server": spec["server"]}
        if spec["server"].startswith("https"):
            cluster.update({k: v for k, v in config["clusters"][0]["cluster"].items() if k != "server"})
        config["clusters"].append({"name": name, "cluster": cluster})
        config["users"].append({"name": name, "user": spec.get("user") or config["users"][0]["user"]})
        config["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def hung_user(pids: Path) -> dict:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": ["-c", HUNG_PLUGIN, str(pids)], "interactiveMode": "Never"}}


def doctor(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "kubectl_win", "doctor", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD)


def test_a_hung_credential_plugin_costs_only_its_cluster_and_is_killed_with_its_child(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    pids = tmp_path / "pids"
    config = kubeconfig_with(apiserver, tmp_path, {"hung": {"server": apiserver.url, "user": hung_user(pids)}})
    done = doctor("--kubeconfig", str(config), "--context", "lab", "--context", "hung", "--scan-timeout", "3",
                  "-o", "json")
    assert done.returncode == 1, done.stderr  # lab's findings; hung could not be read
    clusters = {c["context"]: c for c in json.loads(done.stdout)["clusters"]}
    assert clusters["lab"]["findings"]
    assert "did not answer within" in clusters["hung"]["error"], clusters["hung"]
    plugin, child = map(int, pids.read_text().split())
    wait_until(lambda: not alive(plugin) and not alive(child), "the plugin and its child to be gone")


def test_serve_publishes_the_others_and_fails_a_hung_plugin_then_kills_it_on_sigterm(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    pids = tmp_path / "pids"
    config = kubeconfig_with(apiserver, tmp_path, {"hung": {"server": apiserver.url, "user": hung_user(pids)}})
    serve = Serve("--kubeconfig", str(config), "--context", "lab", "--context", "hung", "--interval", "1h",
                  "--scan-timeout", "600")
    try:
        wait_until(pids.exists, "the plugin to start")
        plugin, child = map(int, pids.read_text().split())
        wait_until(lambda: serve.get("/metrics")[0] == 200, "lab published while hung's plugin still runs")
        assert serve.get("/readyz")[0] == 503  # hung has no first result yet
        assert alive(plugin)
    finally:
        assert serve.stop() == 0
    wait_until(lambda: not alive(plugin) and not alive(child), "SIGTERM to end the plugin and its child")


def test_serve_reports_a_cluster_past_its_scan_timeout_as_failed_and_becomes_ready(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    drip = Drip()
    config = kubeconfig_with(apiserver, tmp_path, {"drip": {"server": f"http://127.0.0.1:{drip.port}"}})
    serve = Serve("--kubeconfig", str(config), "--context", "lab", "--context", "drip", "--interval", "1h",
                  "--scan-timeout", "2")
    try:
        assert drip.started.wait(HANG_GUARD)
        wait_until(lambda: serve.get("/readyz")[0] == 200, "ready once drip has failed its first scan")
        success = {dict(k)["cluster"]: v for k, v in serve.figures("kubectl_win_scan_success").items()}
        assert success == {"lab": 1, "drip": 0}
        assert any(line.startswith('serve: context "drip": scan failed: the scan did not finish within 2s')
                   for line in serve.lines), serve.lines
    finally:
        drip.close()
        assert serve.stop() == 0


def test_a_dripping_cluster_ends_a_fleet_run_at_its_scan_timeout(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    drip = Drip()
    config = kubeconfig_with(apiserver, tmp_path, {"drip": {"server": f"http://127.0.0.1:{drip.port}"}})
    try:
        done = doctor("--kubeconfig", str(config), "--all-contexts", "--scan-timeout", "2", "--request-timeout", "30")
    finally:
        drip.close()
    assert done.returncode == 1, done.stderr
    assert "=== drip (http://127.0.0.1:" in done.stdout
    assert "error: the scan did not finish within 2s (--scan-timeout)" in done.stdout


@pytest.fixture
def served(apiserver, tmp_path):  # type: ignore[no-untyped-def]
    """serve on the sample cluster, ready, with short idle and request limits."""
    apiserver.seed(SAMPLE_DUMP)
    os.environ["KUBECTL_WIN_TEST_SERVE_IDLE_SECONDS"] = "2"
    os.environ["KUBECTL_WIN_TEST_SERVE_REQUEST_SECONDS"] = "2"
    try:
        serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--interval", "1h")
    finally:
        del os.environ["KUBECTL_WIN_TEST_SERVE_IDLE_SECONDS"], os.environ["KUBECTL_WIN_TEST_SERVE_REQUEST_SECONDS"]
    wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
    yield serve
    assert serve.stop() == 0
    assert not any("Traceback" in line for line in serve.lines), serve.lines


def address(serve: Serve) -> tuple[str, int]:
    host, port = serve.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


SCRAPE_TIMEOUT = 30.0  # a common Prometheus scrape_timeout: a scrape not answered by then is lost


def test_a_burst_of_200_scrapes_is_answered_in_full(apiserver):
    apiserver.seed(SAMPLE_DUMP)
    serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--interval", "1h")  # the limits as shipped
    try:
        wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
        def scrape(_: int) -> int | str:
            try:
                return serve.get("/metrics", timeout=SCRAPE_TIMEOUT)[0]
            except Exception as exc:  # noqa: BLE001 - every outcome is counted, and serve's log shown with them
                return f"{type(exc).__name__}: {exc}"

        with concurrent.futures.ThreadPoolExecutor(200) as pool:
            statuses = list(pool.map(scrape, range(200)))
    finally:
        assert serve.stop() == 0
    assert statuses == [200] * 200, ([s for s in statuses if s != 200][:5], serve.lines)
    assert not any("Traceback" in line or "internal error" in line for line in serve.lines), serve.lines


METRICS = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def accept_queue(port: int) -> int:
    """How many connections wait for the server to accept them (Linux: the LISTEN row's rx_queue)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
            return int(fields[4].split(":")[1], 16)
    raise AssertionError(f"nothing listens on port {port}")


def test_connections_that_have_not_sent_their_request_yet_are_not_idle(apiserver):
    """200 scrapers whose requests come late (their own process starved of CPU): serve, stopped (SIGSTOP)
    while they connect, then accepting them all at once, beyond every thread it has, drops none of them as
    idle; each is answered once its request comes. The limits as shipped."""
    apiserver.seed(SAMPLE_DUMP)
    serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--interval", "1h")
    conns: list[socket.socket] = []
    try:
        wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
        host, port = address(serve)
        serve.process.send_signal(signal.SIGSTOP)
        try:
            conns = [socket.create_connection((host, port), timeout=HANG_GUARD) for _ in range(200)]
        finally:
            serve.process.send_signal(signal.SIGCONT)
        wait_until(lambda: accept_queue(port) == 0, "serve to accept every connection")
        for conn in conns:
            conn.sendall(METRICS)
        heads = [status_of(conn) for conn in conns]
    finally:
        for conn in conns:
            conn.close()
        assert serve.stop() == 0
    assert [head.split("\r\n", 1)[0] for head in heads] == ["HTTP/1.1 200 OK"] * 200, serve.lines
    assert not any("Traceback" in line or "internal error" in line for line in serve.lines), serve.lines


def threads_of(serve: Serve) -> int:
    return len(os.listdir(f"/proc/{serve.process.pid}/task"))


def status_of(conn: socket.socket) -> str:
    """The status line and headers of the one answer a connection gets before the server closes it."""
    answer = b""
    try:
        while chunk := conn.recv(65536):
            answer += chunk
    except ConnectionResetError:
        answer = answer or b"(reset)"
    return answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def test_idle_connections_never_keep_a_scraper_out_and_each_is_answered_a_status(served):
    from kubectl_win.fleet.httpd import MAX_CONNECTIONS, WORKERS

    silent = [socket.create_connection(address(served), timeout=HANG_GUARD) for _ in range(MAX_CONNECTIONS + 44)]
    try:
        assert served.get("/metrics")[0] == 200  # room is made by answering the longest silent one 503
        assert threads_of(served) <= WORKERS + 8  # a connection waiting for its request holds no thread
        heads = [status_of(conn) for conn in silent]  # the rest are answered 408 at the idle limit (2 s)
    finally:
        for conn in silent:
            conn.close()
    statuses = [head.split(" ", 2)[1] for head in heads]
    made_room = statuses.count("503")
    assert made_room > 0 and statuses == ["503"] * made_room + ["408"] * (len(silent) - made_room), statuses
    assert all("\r\nRetry-After: 1\r\n" in head for head in heads[:made_room]), heads[0]


def test_a_request_line_without_headers_is_answered_408_at_the_request_time_limit(served):
    with socket.create_connection(address(served), timeout=HANG_GUARD) as conn:
        conn.sendall(b"GET /metrics HTTP/1.1\r\n")
        assert status_of(conn).startswith("HTTP/1.1 408 Request Timeout")


class HeldBoard:
    """A board whose /healthz answers wait until `release` is set: with every worker held on it, the server
    is starved as surely as by any CPU load, and for as long as the test wants. `held` counts the waits."""

    def __init__(self) -> None:
        from kubectl_win.fleet.httpd import Board

        release, held = threading.Event(), threading.Semaphore(0)

        class Held(Board):
            @property
            def healthy(self) -> bool:
                held.release()
                return release.wait(HANG_GUARD)

        self.board, self.release, self.held = Held(), release, held


class Clock:
    """The server's clock, moved by the test: time that passes while the server cannot run."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def test_every_connection_accepted_while_the_server_is_starved_is_answered_with_a_status():
    from kubectl_win.fleet.httpd import IDLE_SECONDS, REQUEST_SECONDS, WORKERS, MetricsServer

    held, clock = HeldBoard(), Clock()
    server = MetricsServer("127.0.0.1", 0, held.board, clock=clock)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    connect = lambda: socket.create_connection(server.server_address[:2], timeout=HANG_GUARD)  # noqa: E731
    conns: list[socket.socket] = []
    try:
        working = [connect() for _ in range(WORKERS)]
        conns += working
        for conn in working:
            conn.sendall(HEALTHZ)
        for _ in working:  # every worker is now held: no request can be answered
            assert held.held.acquire(timeout=HANG_GUARD)
        asked = [connect() for _ in range(100)]  # their requests wait for a worker
        conns += asked
        for conn in asked:
            conn.sendall(HEALTHZ)
        silent = [connect() for _ in range(80)]  # not sent yet (their clients starved too)
        conns += silent
        wait_until(lambda: server.room.accepted == len(conns) and server.room.waiting == len(silent),
                   "every connection accepted, and each request handed on for a worker")
        clock.now += IDLE_SECONDS + REQUEST_SECONDS + 1  # the limits pass while nothing runs
        conns.append(connect())  # an arrival wakes the server: it finds every deadline passed
        late = [status_of(conn) for conn in silent]
        held.release.set()
        answered = [status_of(conn) for conn in working + asked]
    finally:
        held.release.set()
        server.shutdown()
        server.server_close()
        for conn in conns:
            conn.close()
    assert all(head.startswith("HTTP/1.1 200 OK") for head in answered), answered
    assert all(head.startswith("HTTP/1.1 408 Request Timeout") for head in late), late


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("request_head", [b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n",
                                          b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n"], ids=["header", "line"])
def test_a_request_head_past_the_cap_is_answered_431(served, request_head):
    with socket.create_connection(address(served), timeout=HANG_GUARD) as conn:
        conn.sendall(request_head)
        assert status_of(conn).startswith("HTTP/1.1 431")


def test_many_huge_half_sent_requests_cost_no_memory(served):
    before = rss_kib(served.process.pid)
    header = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 60000) for i in range(100))  # 6 MB, never ended
    conns = [socket.create_connection(address(served), timeout=HANG_GUARD) for _ in range(16)]
    try:
        for conn in conns:
            try:
                conn.sendall(b"GET /metrics HTTP/1.1\r\n" + header)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused part-way, as it should be
        for conn in conns:  # each is answered 431 or closed; wait for that, never for a time
            try:
                conn.recv(1)
            except ConnectionResetError:
                pass
        assert served.get("/metrics")[0] == 200
        assert rss_kib(served.process.pid) - before < 16 * 1024
    finally:
        for conn in conns:
            conn.close()


@pytest.mark.parametrize("accept", ["application/openmetrics-text; version=abc",
                                    "application/openmetrics-text; version=1.0.0; escaping=\x7f",
                                    "application/openmetrics-text; version=1.0.0\r\n x-injected: yes",
                                    "text/plain; version=1.0.0; escaping=nonsense, */*"])
def test_a_malformed_accept_header_gets_a_standard_answer(served, accept):
    with socket.create_connection(address(served), timeout=HANG_GUARD) as conn:
        conn.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: " + accept.encode("latin-1") +
                     b"\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    assert head.startswith("HTTP/1.1 200"), head
    content_type = next(line for line in head.splitlines() if line.lower().startswith("content-type:"))
    assert content_type.split(":", 1)[1].strip() in (
        "text/plain; version=0.0.4; charset=utf-8", "application/openmetrics-text; version=1.0.0; charset=utf-8",
        "text/plain; version=1.0.0; charset=utf-8; escaping=underscores",
        "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores"), head
    assert "injected" not in head and "abc" not in head


HOSTILE = "lab\x1b]0;pwned\x07\x1b[31m"
FORGED = "other\nerror: forged line"


def test_context_names_with_escape_sequences_reach_no_output_raw(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    config = yaml.safe_load(apiserver.kubeconfig.read_text())
    template = config["contexts"][0]["context"]
    config["contexts"] = [{"name": HOSTILE, "context": template}, {"name": FORGED, "context": template}]
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    table = doctor("--kubeconfig", str(path), "--all-contexts")
    assert table.returncode == 1, table.stderr
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert "=== lab\\x1b]0;pwned\\x07\\x1b[31m (" in table.stdout
    assert "\nerror: forged line" not in table.stdout
    assert "=== other\\nerror: forged line (" in table.stdout
    junit = doctor("--kubeconfig", str(path), "--all-contexts", "-o", "junit")
    suites = ET.fromstring(junit.stdout).findall("testsuite")  # valid XML despite the names
    assert [s.get("name") for s in suites] == ["kubectl-win doctor lab\\x1b]0;pwned\\x07\\x1b[31m",
                                               "kubectl-win doctor other\nerror: forged line"]


def test_serve_logs_context_names_terminal_safe(apiserver, tmp_path):
    config = yaml.safe_load(apiserver.kubeconfig.read_text())
    config["contexts"][0]["name"] = HOSTILE
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"  # refused: a log line per scan
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    serve = Serve("--kubeconfig", str(path), "--all-contexts", "--interval", "1h")
    try:
        wait_until(lambda: any("scan failed" in line for line in serve.lines), "the failed scan's line")
    finally:
        serve.process.send_signal(signal.SIGTERM)
        serve.process.wait(HANG_GUARD)
    assert not any("\x1b" in line or "\x07" in line for line in serve.lines), serve.lines
    assert any('context "lab\\x1b]0;pwned\\x07\\x1b[31m": scan failed' in line for line in serve.lines)


UNWRITABLE = "/proc"  # a folder no file can be created in, even by root


@pytest.mark.skipif(not Path(UNWRITABLE).is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("argv", [
    ["scaffold", "monitor", "--image", "registry.example/kubectl-win:1", "--out", f"{UNWRITABLE}/monitor"],
    ["doctor", "--context", "lab", "--context", "stalled", "--report", f"{UNWRITABLE}/fleet.html"],
    ["collect", "--all-windows", "-o", f"{UNWRITABLE}/bundle.tar.gz"],
], ids=["scaffold-monitor-out", "fleet-report", "collect-output"])
def test_an_unwritable_output_is_refused_before_any_work(apiserver, tmp_path, argv):
    from tests.test_serve import Stalled, two_contexts

    stalled = Stalled()  # a fleet run that started scanning would wait on it for ever
    try:
        config = two_contexts(apiserver, tmp_path, stalled)
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(config))
        done = subprocess.run([sys.executable, "-m", "kubectl_win", *argv], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=HANG_GUARD)
    finally:
        stalled.release()
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"cannot write in {UNWRITABLE}" in done.stderr, done.stderr
    assert not stalled.accepted.is_set()  # refused before any cluster was read
