"""doctor over several clusters, end to end against test API servers on several ports: two with the sample
cluster, one with only Linux nodes, one answering 403 on nodes, and a closed port."""

from __future__ import annotations

import json
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.apiserver import ApiServer
from tests.support.cli import CliResult, run_cli
from tests.support.paths import ROOT, SAMPLE_DUMP

LINUX_NODE = {"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": "linux-1", "labels": {"kubernetes.io/os": "linux"}},
              "status": {"conditions": [{"type": "Ready", "status": "True"}],
                         "nodeInfo": {"kubeletVersion": "v1.32.0", "containerRuntimeVersion": "containerd://1.7.20",
                                      "operatingSystem": "linux"}}}


@dataclass
class Fleet:
    kubeconfig: Path
    servers: dict[str, ApiServer]

    def doctor(self, *args: str) -> CliResult:
        return run_cli("doctor", "--kubeconfig", str(self.kubeconfig), "--request-timeout", "10", *args)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kubeconfig_for(path: Path, entries: list[tuple[str, str, dict, dict]]) -> Path:
    """entries: (context, server URL, cluster extras, user)."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": entries[0][0],
              "clusters": [{"name": c, "cluster": {"server": url, **extra}} for c, url, extra, _ in entries],
              "users": [{"name": c, "user": user} for c, _, _, user in entries],
              "contexts": [{"name": c, "context": {"cluster": c, "user": c}} for c, *_ in entries]}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    servers = {name: ApiServer(tls=True, workdir=tmp_path_factory.mktemp(name))
               for name in ("eu", "us", "quiet", "lab")}
    for server in servers.values():
        server.start()
    try:
        items = json.loads(SAMPLE_DUMP.read_text())["items"]
        for name in ("eu", "us", "lab"):
            for item in items:
                servers[name].store.put(json.loads(json.dumps(item)))
        servers["quiet"].store.put(LINUX_NODE)
        servers["lab"].auth.deny("list", "nodes")
        entries = []
        for name, server in servers.items():
            extra = {"certificate-authority": str(server.pki.ca_cert)}
            entries.append((name, server.url, extra, {"token": server.token}))
        entries.append(("quiet-too", servers["quiet"].url, {"certificate-authority": str(servers["quiet"].pki.ca_cert)},
                        {"token": servers["quiet"].token}))
        entries.append(("gone", f"https://127.0.0.1:{closed_port()}", {"insecure-skip-tls-verify": True},
                        {"token": "t"}))
        yield Fleet(kubeconfig_for(tmp_path_factory.mktemp("fleet") / "config", entries), servers)
    finally:
        for server in servers.values():
            server.stop()


def sections(stdout: str) -> dict[str, str]:
    """Each cluster's section of the table output, by context, without its heading."""
    parts = re.split(r"^=== (\S+)(?: \(\S+\))? ===\n", stdout[:stdout.index("=== fleet:")], flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_table_has_a_section_per_cluster_then_the_fleet_summary(fleet: Fleet) -> None:
    result = fleet.doctor("--context", "eu", "--context", "us", "--context", "lab", "--context", "gone",
                          "--parallel", "2")
    assert result.exit_code == 1 and result.stderr == ""
    parts = sections(result.stdout)
    assert set(parts) == {"eu", "us", "lab", "gone"}
    single = fleet.doctor("--context", "eu")
    assert single.exit_code == 1
    assert parts["eu"] == single.stdout + "\n"  # the cluster's section is its single-cluster report
    assert parts["us"] == parts["eu"]
    assert re.fullmatch(r"error: cannot read nodes: forbidden: .*\n\n", parts["lab"])
    assert re.fullmatch(r"error: cannot connect to https://127\.0\.0\.1:\d+: connection refused\n\n", parts["gone"])
    assert "=== fleet: 4 clusters, 2 read, 2 could not be read ===" in result.stdout
    summary = result.stdout[result.stdout.index("=== fleet:"):]
    rows = {line.split()[0]: line for line in summary.splitlines()[2:6]}
    assert rows["gone"].split()[1:7] == ["-"] * 5 + ["could"]
    assert "could not be read: cannot read nodes" in rows["lab"]
    assert rows["eu"].split()[1] == "3"  # Windows nodes
    shared = summary[summary.index("SAME FIX IN SEVERAL CLUSTERS"):]
    assert "2: eu, us" in shared
    assert "kubectl taint nodes win22-1 os=windows:NoSchedule" in shared


def test_json_keeps_the_asked_order_and_the_single_cluster_findings(fleet: Fleet) -> None:
    result = fleet.doctor("--context", "gone", "--context", "eu", "--context", "lab", "--context", "quiet",
                          "-o", "json", "--parallel", "4")
    assert result.exit_code == 1 and result.stderr == ""
    doc = result.json
    assert (doc["schemaVersion"], doc["kind"]) == ("kubectl-win/v1", "DoctorFleetReport")
    assert [c["context"] for c in doc["clusters"]] == ["gone", "eu", "lab", "quiet"]
    gone, eu, lab, quiet = doc["clusters"]
    assert set(gone) == {"context", "server", "ok", "error", "exitCode"} and gone["ok"] is False
    assert gone["exitCode"] == 3 and "\n" not in gone["error"]
    assert lab["ok"] is False and lab["error"].startswith("cannot read nodes: forbidden") and lab["exitCode"] == 5
    single = fleet.doctor("--context", "eu", "-o", "json").json
    assert eu["ok"] is True and eu["server"] == fleet.servers["eu"].url
    assert eu["findings"] == single["findings"] and eu["summary"] == single["summary"]
    assert eu["serverVersion"] == "v1.32.0" and eu["skipped"] == single["skipped"]
    assert [f["id"] for f in quiet["findings"]] == ["windows-nodes-missing"]
    assert doc["summary"]["clusters"] == 4 and doc["summary"]["read"] == 2 and doc["summary"]["failed"] == 2
    assert doc["summary"]["errors"] == single["summary"]["errors"]

    as_yaml = fleet.doctor("--context", "gone", "--context", "eu", "--context", "lab", "--context", "quiet",
                           "-o", "yaml")
    assert as_yaml.exit_code == 1
    assert yaml.safe_load(as_yaml.stdout) == doc


@pytest.mark.parametrize(("contexts", "code"), [
    (("quiet", "quiet-too"), 0),  # only info findings: as clean as each cluster
    (("quiet", "eu"), 1),  # the worst over the clusters read
    (("quiet", "gone"), 1),  # some could not be read
    (("quiet", "lab"), 1),  # 403 on nodes counts as not read
    (("lab", "gone"), 3),  # none could be read
])
def test_exit_status_over_the_clusters(fleet: Fleet, contexts: tuple[str, ...], code: int) -> None:
    argv = [arg for context in contexts for arg in ("--context", context)]
    result = fleet.doctor(*argv, "-o", "json")
    assert result.exit_code == code, result.stderr
    assert [c["context"] for c in result.json["clusters"]] == list(contexts)
    assert result.json["summary"]["exitCode"] == code


def test_fail_on_applies_to_every_cluster(fleet: Fleet) -> None:
    assert fleet.doctor("--context", "quiet", "--context", "quiet-too", "--fail-on", "info").exit_code == 1


def test_all_contexts_reads_every_context_in_kubeconfig_order(fleet: Fleet, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = fleet.servers["quiet"]
    extra = {"certificate-authority": str(quiet.pki.ca_cert)}
    first = kubeconfig_for(tmp_path / "first", [("b-quiet", quiet.url, extra, {"token": quiet.token})])
    second = kubeconfig_for(tmp_path / "second", [("a-quiet", quiet.url, extra, {"token": quiet.token}),
                                                  ("b-quiet", "https://127.0.0.1:1", {}, {"token": "x"})])
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    result = run_cli("doctor", "--all-contexts", "-o", "json")
    assert result.exit_code == 0, result.stderr
    # Merged like kubectl: the first file to name a context wins, and keeps its place.
    assert [(c["context"], c["server"]) for c in result.json["clusters"]] == [("b-quiet", quiet.url),
                                                                                ("a-quiet", quiet.url)]


def test_sarif_has_a_run_and_junit_a_testsuite_per_cluster(fleet: Fleet) -> None:
    sarif = fleet.doctor("--context", "eu", "--context", "gone", "-o", "sarif")
    assert sarif.exit_code == 1
    runs = sarif.json["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == ["kubectl-win-doctor/eu/", "kubectl-win-doctor/gone/"]
    single = fleet.doctor("--context", "eu", "-o", "sarif").json["runs"][0]
    assert runs[0]["results"] == single["results"] and runs[0]["tool"] == single["tool"]
    assert runs[1]["results"] == [] and runs[1]["invocations"][0]["executionSuccessful"] is False
    assert runs[1]["invocations"][0]["toolExecutionNotifications"][0]["level"] == "error"

    junit = fleet.doctor("--context", "eu", "--context", "gone", "-o", "junit")
    assert junit.exit_code == 1
    suites = ET.fromstring(junit.stdout).findall("testsuite")
    assert [s.get("name") for s in suites] == ["kubectl-win doctor eu", "kubectl-win doctor gone"]
    assert int(suites[0].get("failures") or 0) > 0
    assert suites[1].get("errors") == "1" and suites[1].find("testcase/error") is not None


def test_bad_fleet_input_is_one_line_and_exit_2(fleet: Fleet, tmp_path: Path) -> None:
    for argv, words in [
        (("--context", "eu", "--context", "nowhere"), 'context "nowhere" not found'),
        (("--context", "eu", "--context", "us", "--save-dump", str(tmp_path / "d.json")), "--save-dump reads one"),
        (("--context", "eu", "--context", "us", "--deep"), "--deep reads one cluster"),
        (("--all-contexts", "--context", "eu"), "cannot be combined with --context"),
        (("--context", "eu", "--context", "us", "--parallel", "0"), "--parallel must be 1 or more"),
    ]:
        result = fleet.doctor(*argv)
        assert result.exit_code == 2, (argv, result.stderr)
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr
    assert not (tmp_path / "d.json").exists()


def test_other_commands_refuse_a_repeated_context(fleet: Fleet) -> None:
    result = run_cli("images", "--kubeconfig", str(fleet.kubeconfig), "--context", "eu", "--context", "us")
    assert result.exit_code == 2
    assert "given more than once" in result.stderr and result.stdout == ""


def test_report_writes_the_fleet_page_and_keeps_the_table(fleet: Fleet, tmp_path: Path) -> None:
    page = tmp_path / "fleet.html"
    result = fleet.doctor("--context", "eu", "--context", "gone", "--report", str(page))
    assert result.exit_code == 1
    assert "=== fleet: 2 clusters, 1 read, 1 could not be read ===" in result.stdout
    html = page.read_text()
    assert html.count('<section class="cluster"') == 2 and 'id="c1-findings"' in html
    assert 'id="findings"' not in html  # every cluster's ids carry its prefix
    again = fleet.doctor("--context", "eu", "--context", "gone", "--report", str(page))
    assert again.exit_code == 2 and "--force" in again.stderr


def test_progress_shows_clusters_done_and_is_erased(fleet: Fleet) -> None:
    result = fleet.doctor("--context", "quiet", "--context", "gone", "--progress", "always", "-o", "json")
    assert result.exit_code == 1
    assert "clusters: 2/2 done (1 failed)" in result.stderr
    assert result.stderr.endswith("\r\033[K")
    assert result.json["clusters"][0]["ok"] is True


def test_the_docs_example_is_what_doctor_prints(fleet: Fleet) -> None:
    """docs/doctor.md's fleet example, run against these servers (same context names), line by line."""
    import shlex

    from tests.support.readme_examples import differences

    text = (ROOT / "docs" / "doctor.md").read_text()
    block = re.search(r"```console\n\$ (kubectl win doctor --context eu [^\n]*)\n(.*?)```", text, re.S)
    assert block, "docs/doctor.md shows the fleet example"
    argv = shlex.split(block.group(1).split("  #")[0])[2:]
    result = fleet.doctor(*argv[1:])
    assert result.exit_code == 1
    printed = [line for line in result.stdout.splitlines() if line.strip()]  # blank lines are not compared
    assert differences(block.group(2).splitlines(), printed) == []


def test_doctor_nodes_over_several_clusters_keeps_each_inventory(fleet: Fleet) -> None:
    result = fleet.doctor("nodes", "--context", "eu", "--context", "quiet", "-o", "json")
    assert result.exit_code == 1, result.stderr
    eu, quiet = result.json["clusters"]
    assert eu["nodes"] == fleet.doctor("nodes", "--context", "eu", "-o", "json").json["nodes"]
    assert quiet["nodes"] == []
    table = fleet.doctor("nodes", "--context", "eu", "--context", "quiet")
    assert sections(table.stdout)["quiet"].startswith("No Windows nodes found.\n")


def test_ctrl_c_ends_a_fleet_run_at_once(fleet: Fleet) -> None:
    """Interrupted while two clusters hang on a page, doctor exits 130 without waiting for them. Both are in
    flight at once: while the first waits, the pace admits the second."""
    import os
    import signal
    import subprocess
    import sys

    from tests.support.waiting import wait_until

    rules = [fleet.servers[name].faults.delay(r"^/api/v1/nodes", 3600.0) for name in ("eu", "us")]
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubectl_win", "doctor", "--kubeconfig", str(fleet.kubeconfig),
             "--context", "eu", "--context", "us", "--parallel", "2", "--progress", "never"],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        wait_until(lambda: all(rule.hits for rule in rules), "both clusters asked for their nodes")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a hang guard: the run ends at once, not after the hour
        assert proc.returncode == 130, err
        assert out == "" and "Traceback" not in err
    finally:
        for name in ("eu", "us"):
            fleet.servers[name].faults.clear()


def test_openmetrics_labels_every_cluster_and_marks_the_unread(fleet: Fleet) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    result = fleet.doctor("--context", "eu", "--context", "gone", "--context", "us", "-o", "openmetrics")
    assert result.exit_code == 1 and result.stdout.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(result.stdout)}
    success = {s.labels["cluster"]: s.value for s in families["kubectl_win_scan_success"].samples}
    assert success == {"eu": 1, "gone": 0, "us": 1}
    single = fleet.doctor("--context", "eu", "-o", "openmetrics").stdout
    single_findings = {(s.labels["check"], s.labels["severity"]): s.value
                       for f in text_string_to_metric_families(single) if f.name == "kubectl_win_findings"
                       for s in f.samples}
    for cluster in ("eu", "us"):
        assert {(s.labels["check"], s.labels["severity"]): s.value for s in families["kubectl_win_findings"].samples
                if s.labels["cluster"] == cluster} == single_findings
    assert not [s for s in families["kubectl_win_findings"].samples if s.labels["cluster"] == "gone"]
