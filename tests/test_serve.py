"""`kubectl win serve` as a user runs it: a process scanning the test API server, scraped over HTTP, parsed with
prometheus_client's parsers, stopped with SIGTERM. Every wait is on an event (a line printed, a request
received, a figure changed), never on a time budget."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
import yaml
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from tests.support.cli import run_cli
from tests.support.paths import ROOT, SAMPLE_DUMP
from tests.support.waiting import HANG_GUARD, wait_until

pytestmark = pytest.mark.skipif(os.name == "nt", reason="SIGTERM is a POSIX signal")


class Stalled:
    """A cluster address that accepts connections and never answers, until released: a scan that reads it
    stays under way for as long as the test wants. Released, it closes them and refuses new ones."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = threading.Event()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            self.accepted.set()

    def release(self) -> None:
        try:  # wakes the accept() under way: a close alone leaves the socket listening until it returns
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for conn in self.connections:
            conn.close()


class Serve:
    """`kubectl-win serve` in a process of its own; its stderr lines collected as they come."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "serve", "--listen", "127.0.0.1:0",
                                         *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        wait_until(lambda: self.lines or self.process.poll() is not None, "serve to print its address")
        assert self.lines and self.lines[0].startswith("serving http://127.0.0.1:"), self.lines
        self.url = self.lines[0].split()[1].removesuffix("/metrics")

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def get(self, path: str, accept: str | None = None, timeout: float = HANG_GUARD) -> tuple[int, dict[str, str], str]:
        request = urllib.request.Request(self.url + path, headers={"Accept": accept} if accept else {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, dict(answer.headers), answer.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read().decode()

    def figures(self, family: str, accept: str | None = None) -> dict[tuple[str, ...], float]:
        status, _, body = self.get("/metrics", accept)
        assert status == 200, body
        parse = parse_openmetrics if accept else parse_text
        found = {f.name: f.samples for f in parse(body)}
        return {tuple(sorted(s.labels.items())): s.value for s in found[family]}

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(HANG_GUARD)


def two_contexts(apiserver, tmp_path: Path, stalled: Stalled) -> Path:  # type: ignore[no-untyped-def]
    """The test API server as context "lab" and a cluster that never answers as "stalled"."""
    config = yaml.safe_load(apiserver.server.write_kubeconfig(context="lab").read_text())
    config["clusters"].append({"name": "stalled", "cluster": {
        "server": f"https://127.0.0.1:{stalled.port}", **{k: v for k, v in config["clusters"][0]["cluster"].items()
                                                          if k != "server"}}})
    config["contexts"].append({"name": "stalled", "context": {"cluster": "stalled", "user": "lab"}})
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def sample_findings() -> Counter:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    return Counter((f["id"], f["severity"]) for f in result.json["findings"])


def success(serve: Serve) -> dict[str, float]:
    return {dict(labels)["cluster"]: value for labels, value in serve.figures("kubectl_win_scan_success").items()}


def test_serve_answers_the_last_completed_scan_in_both_formats_and_keeps_it_when_a_scan_fails(apiserver, tmp_path):
    apiserver.seed(SAMPLE_DUMP)
    stalled = Stalled()
    serve = Serve("--kubeconfig", str(two_contexts(apiserver, tmp_path, stalled)), "--context", "lab",
                  "--context", "stalled", "--interval", "0.2s")
    try:
        assert serve.get("/healthz")[0] == 200
        assert stalled.accepted.wait(HANG_GUARD)  # the first scan is under way, held by "stalled"
        # "lab" is published as soon as its scan ends, while "stalled" still holds its own: not ready until
        # every cluster has had a first result.
        wait_until(lambda: serve.get("/metrics")[0] == 200, "lab's figures while stalled is still being read")
        assert success(serve) == {"lab": 1}
        assert serve.get("/readyz")[:1] == (503,)
        stalled.release()
        wait_until(lambda: serve.get("/readyz")[0] == 200, "readyz once the first scan completed")

        status, headers, body = serve.get("/metrics")
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert success(serve) == {"lab": 1, "stalled": 0}
        status, headers, body = serve.get("/metrics", "application/openmetrics-text; version=1.0.0")
        assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0; charset=utf-8")
        assert body.endswith("# EOF\n")
        findings = serve.figures("kubectl_win_findings", "application/openmetrics-text")
        assert {dict(labels)["cluster"] for labels in findings} == {"lab"}  # nothing made up for "stalled"
        good = {(dict(k)["check"], dict(k)["severity"]): int(v) for k, v in findings.items() if v}
        assert good == sample_findings()
        assert any('context "stalled": scan failed: cannot connect' in line for line in serve.lines), serve.lines

        apiserver.auth.expire_token(apiserver.token)  # 401 on every request: the scan fails
        wait_until(lambda: success(serve)["lab"] == 0, "the failed scan of lab to be published")
        assert serve.figures("kubectl_win_findings", "application/openmetrics-text") == findings
        assert any(line.startswith('serve: context "lab": scan failed, the last good figures are kept: ')
                   for line in serve.lines), serve.lines
        assert serve.figures("kubectl_win_windows_nodes") != {}

        apiserver.auth.expired_tokens.clear()
        wait_until(lambda: success(serve)["lab"] == 1, "lab read again")
        counts = {dict(k)["cluster"]: v for k, v in serve.figures("kubectl_win_scans").items()}
        assert counts["lab"] >= 3 and counts["stalled"] >= 3  # one per scan, failed or not
    finally:
        stalled.release()
        code = serve.stop()
    assert code == 0
    assert serve.lines[-1] == "serve: stopped"
    assert serve.process.stdout is not None and serve.process.stdout.read() == ""


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_signal_ends_serve_at_once_even_in_the_middle_of_a_scan(apiserver, sent):
    apiserver.seed(SAMPLE_DUMP)
    hold = apiserver.faults.delay("^/api/v1/nodes", HANG_GUARD * 2)  # a list that would outlast the test
    serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--interval", "5m")
    wait_until(lambda: hold.hits >= 1, "the scan to be waiting for the node list")
    assert serve.get("/readyz")[0] == 503
    serve.process.send_signal(sent)
    assert serve.process.wait(HANG_GUARD) == 0  # the guard is far shorter than the held request
    assert serve.lines[-1] == "serve: stopped"
    apiserver.faults.clear()


def test_a_port_in_use_is_one_line_and_exit_2(apiserver):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = run_cli("serve", "--kubeconfig", str(apiserver.kubeconfig), "--listen", f"127.0.0.1:{port}")
    assert result.exit_code == 2
    assert result.stderr == f"error: cannot listen on 127.0.0.1:{port}: the address is already in use " \
                            "(another serve or exporter?)\n"


@pytest.mark.parametrize("argv,message", [
    (["--listen", "9108"], "invalid --listen '9108': expected HOST:PORT"),
    (["--listen", ":9108"], "invalid --listen ':9108': expected HOST:PORT"),
    (["--listen", "::1:9108"], "put an IPv6 address in brackets"),
    (["--listen", "[127.0.0.1]:9108"], "'127.0.0.1' is not an IPv6 address"),
    (["--listen", "[::1]:http"], "the port must be a number from 0 to 65535"),
    (["--listen", "127.0.0.1:70000"], "the port must be a number from 0 to 65535"),
    (["--listen", "300.1.1.1:80"], "'300.1.1.1' is not an IP address or host name"),
    (["--listen", "exa mple:80"], "'exa mple' is not an IP address or host name"),
    (["--interval", "0s"], "invalid --interval '0s'"),
    (["--interval", "5 minutes"], "invalid --interval '5 minutes'"),
    (["--parallel", "0"], "--parallel must be 1 or more"),
    (["--all-contexts", "--context", "a"], "--all-contexts scans every context; it cannot be combined"),
    (["--kubeconfig", "/nonexistent/kubeconfig"], "kubeconfig /nonexistent/kubeconfig does not exist"),
    (["--context", "nope", "--kubeconfig", "KUBECONFIG"], None),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, apiserver):
    argv = [str(apiserver.kubeconfig) if a == "KUBECONFIG" else a for a in argv]
    result = run_cli("serve", *argv)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    if message:
        assert message in result.stderr


def test_listen_addresses_parse_strictly():
    from kubectl_win.fleet.serve_options import parse_interval, parse_listen

    assert parse_listen("127.0.0.1:9108") == ("127.0.0.1", 9108)
    assert parse_listen("[::]:9108") == ("::", 9108)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen("localhost:9108") == ("localhost", 9108)
    assert parse_listen("0.0.0.0:9108") == ("0.0.0.0", 9108)
    assert [parse_interval(t) for t in ("5m", "90s", "1h30m", "0.5s", "2h")] == [300, 90, 5400, 0.5, 7200]


def test_all_contexts_are_the_kubeconfigs_in_its_order(tmp_path, apiserver):
    from kubectl_win.fleet.contexts import all_contexts

    config = yaml.safe_load(apiserver.kubeconfig.read_text())
    config["contexts"] = [{"name": n, "context": {"cluster": "test", "user": "test"}} for n in ("b", "a", "c")]
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    assert all_contexts(str(path)) == ["b", "a", "c"]


def test_the_docs_show_what_serve_answers(apiserver, tmp_path):
    """docs/serve.md's scrape of a cluster seeded with the bundled sample, checked against a real one."""
    import re

    from tests.support.readme_examples import differences

    apiserver.seed(SAMPLE_DUMP)
    kubeconfig = apiserver.server.write_kubeconfig(tmp_path / "kubeconfig", context="prod-eu")
    text = (ROOT / "docs" / "serve.md").read_text()
    curls = re.findall(r"```console\n\$ (curl [^\n]*)\n(.*?)```", text, re.S)
    assert curls
    serve = Serve("--kubeconfig", str(kubeconfig))
    try:
        wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
        for command, output in curls:
            accept = re.search(r"-H 'Accept: ([^']+)'", command)
            path = command.split("http://127.0.0.1:9108", 1)[1].split()[0]
            status, _, body = serve.get(path, accept.group(1) if accept else None)
            shown = [line for line in output.splitlines() if line.strip()]
            assert differences(shown, body.rstrip("\n").splitlines()) == [], command
    finally:
        assert serve.stop() == 0


def test_serve_names_the_cluster_label_asked_for(apiserver) -> None:
    apiserver.seed(SAMPLE_DUMP)
    serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--cluster-label", "k8s_cluster", "--interval", "5m")
    try:
        wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
        [labels] = serve.figures("kubectl_win_scan_success")
        assert dict(labels).keys() == {"k8s_cluster"}
    finally:
        assert serve.stop() == 0


def test_serve_refuses_no_cluster_label_for_several_clusters(apiserver) -> None:
    result = run_cli("serve", "--kubeconfig", str(apiserver.kubeconfig), "--context", "a", "--context", "b",
                     "--cluster-label", "")
    assert result.exit_code == 2 and "several clusters need a label that names each" in result.stderr


def test_a_scan_that_cannot_read_the_nodes_is_a_failed_scan(apiserver) -> None:
    """A user who may not list nodes: serve publishes scan_success 0 and says why, never a clean cluster."""
    apiserver.seed(SAMPLE_DUMP)
    apiserver.auth.deny("list", "nodes")
    serve = Serve("--kubeconfig", str(apiserver.kubeconfig), "--interval", "5m")
    try:
        wait_until(lambda: serve.get("/readyz")[0] == 200, "the first scan")
        assert list(serve.figures("kubectl_win_scan_success").values()) == [0]
        assert serve.figures("kubectl_win_findings") == {}
        assert any("scan failed: cannot read nodes: forbidden" in line for line in serve.lines), serve.lines
    finally:
        assert serve.stop() == 0
