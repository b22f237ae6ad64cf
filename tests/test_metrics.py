"""doctor's results as Prometheus metrics: `doctor -o openmetrics` and the families `serve` answers with, read back
with prometheus_client's own parsers (OpenMetrics and the text format 0.0.4)."""

from __future__ import annotations

import datetime as dt
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from kubectl_win.fleet.figures import ClusterFigures, known_checks
from kubectl_win.fleet.metrics import exposition, render_openmetrics
from kubectl_win.fleet.scan import ClusterScan
from tests.support.cli import run_cli
from tests.support.paths import DOCS, ROOT, SAMPLE_DUMP

FAMILIES = {"kubectl_win_findings", "kubectl_win_windows_nodes", "kubectl_win_os_support_end_timestamp_seconds",
            "kubectl_win_scan_success", "kubectl_win_scan_duration_seconds",
            "kubectl_win_scan_last_success_timestamp_seconds", "kubectl_win_scans",
            "kubectl_win_node_os_revision_release_timestamp_seconds", "kubectl_win_node_os_updates_behind",
            "kubectl_win_node_os_updates_behind_estimated", "kubectl_win_update_data_timestamp_seconds"}
LABELS = {"cluster", "check", "severity", "build", "version", "ready", "node", "platform"}
PER_NODE = {"kubectl_win_node_os_revision_release_timestamp_seconds", "kubectl_win_node_os_updates_behind",
            "kubectl_win_node_os_updates_behind_estimated"}


def samples(text: str, openmetrics: bool = True) -> dict[str, list]:
    parse = parse_openmetrics if openmetrics else parse_text
    return {family.name: family.samples for family in parse(text)}


def by_labels(found: list, *names: str) -> dict[tuple[str, ...], float]:
    return {tuple(s.labels[n] for n in names): s.value for s in found}


def sample_report(tmp_path: Path | None = None, edit=None):  # type: ignore[no-untyped-def]
    from kubectl_win.doctor.run import DoctorOptions, run_doctor

    path = SAMPLE_DUMP
    if edit is not None:
        assert tmp_path is not None
        data = json.loads(path.read_text())
        edit(data)
        path = tmp_path / "dump.json"
        path.write_text(json.dumps(data))
    return run_doctor(DoctorOptions(from_dump=str(path)))


def expected_findings() -> Counter:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    return Counter((f["id"], f["severity"]) for f in result.json["findings"])


def test_doctor_openmetrics_on_a_dump_is_read_by_the_openmetrics_parser() -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "openmetrics")
    assert result.exit_code == 1 and result.stderr == ""  # the sample has errors: exit status as with any -o
    assert result.stdout.endswith("# EOF\n")
    found = samples(result.stdout)
    assert set(found) >= FAMILIES
    assert {s.labels["cluster"] for family in found.values() for s in family} == {"cluster-dump.json"}
    findings = by_labels(found["kubectl_win_findings"], "check", "severity")
    assert {key: int(v) for key, v in findings.items() if v} == expected_findings()
    nodes = by_labels(found["kubectl_win_windows_nodes"], "build", "version", "ready", "platform")
    assert nodes == {("10.0.17763", "Windows Server 2019", "true", "unknown"): 1,
                     ("10.0.20348", "Windows Server 2022", "true", "unknown"): 2}
    assert by_labels(found["kubectl_win_scan_success"], "cluster") == {("cluster-dump.json",): 1}
    assert by_labels(found["kubectl_win_scans"], "cluster") == {("cluster-dump.json",): 1}
    for family in found.values():
        for s in family:
            assert set(s.labels) <= LABELS


def test_every_known_check_has_a_series_so_a_fixed_problem_goes_to_zero() -> None:
    """A check that finds nothing is 0 at its default severity (series never vanish); found at another
    severity, it has that series too (linux-workload-can-land-on-windows: an error and a warning)."""
    out = io.StringIO()
    render_openmetrics([ClusterScan("lab", None, sample_report(), seconds=1.5)], out)
    findings = by_labels(samples(out.getvalue())["kubectl_win_findings"], "check", "severity")
    for check, severity in known_checks():
        assert (check, severity) in findings
    assert findings[("gmsa-crd-missing", "error")] == 0
    assert findings[("linux-workload-can-land-on-windows", "error")] == 1
    assert findings[("linux-workload-can-land-on-windows", "warning")] == 1
    assert findings[("runtime-containerd-outdated", "info")] == 1  # found at info; its default is warning
    assert findings[("runtime-containerd-outdated", "warning")] == 0
    assert sum(findings.values()) == sum(expected_findings().values())


def test_no_label_carries_a_message_or_an_object_name() -> None:
    """Only the two patch-level families name an object: the Windows node they are about."""
    report = sample_report()
    out = io.StringIO()
    render_openmetrics([ClusterScan("lab", None, report, seconds=0.1)], out)
    text = out.getvalue()
    for finding in report.findings:
        assert finding.message not in text
    windows = {n.name for n in report.nodes if n.windows}
    for family, found in samples(text).items():
        for sample in found:
            if family in PER_NODE:
                assert set(sample.labels) == {"cluster", "node", "build"} and sample.labels["node"] in windows
            else:
                assert "node" not in sample.labels
                assert not any(f'"{name}"' in str(sample.labels) for name in windows), sample


def midnight(day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()


def test_support_end_is_microsofts_date_or_an_earlier_platform_retirement(tmp_path: Path) -> None:
    def on_aks(data: dict) -> None:  # win19-0 becomes an AKS node: AKS retired Windows Server 2019 on 2026-03-01
        for item in data["items"]:
            if item["kind"] == "Node" and item["metadata"]["name"] == "win19-0":
                item["metadata"]["labels"]["kubernetes.azure.com/agentpool"] = "win19"

    now = dt.datetime(2029, 1, 19, 12, tzinfo=dt.UTC)
    out = io.StringIO()
    render_openmetrics([ClusterScan("plain", None, sample_report(), seconds=1),
                        ClusterScan("aks", None, sample_report(tmp_path, on_aks), seconds=1)], out, now=now)
    ends = by_labels(samples(out.getvalue())["kubectl_win_os_support_end_timestamp_seconds"], "cluster", "build")
    assert ends[("plain", "10.0.17763")] == midnight(dt.date(2029, 1, 9))  # Microsoft's end of extended support
    assert ends[("plain", "10.0.20348")] == midnight(dt.date(2031, 10, 14))
    assert ends[("aks", "10.0.17763")] == midnight(dt.date(2026, 3, 1))


def test_a_cluster_that_could_not_be_read_has_only_its_outcome() -> None:
    out = io.StringIO()
    render_openmetrics([ClusterScan("lab", None, sample_report(), seconds=2.0),
                        ClusterScan("dead", None, None, "cannot connect to https://10.0.0.1: connection refused", 3,
                                    seconds=0.25)], out)
    found = samples(out.getvalue())
    assert by_labels(found["kubectl_win_scan_success"], "cluster") == {("lab",): 1, ("dead",): 0}
    assert by_labels(found["kubectl_win_scan_duration_seconds"], "cluster") == {("lab",): 2.0, ("dead",): 0.25}
    assert {s.labels["cluster"] for s in found["kubectl_win_findings"]} == {"lab"}  # no false zeros for dead
    assert "dead" not in {s.labels["cluster"] for s in found["kubectl_win_scan_last_success_timestamp_seconds"]}
    assert "connection refused" not in out.getvalue()


@pytest.mark.parametrize("name", ['prod "eu"', "C:\\kube\\prod", "two\nlines", 'all "of\\ it"\n', "ünïcode"])
def test_context_names_are_escaped_and_read_back_exactly_in_both_formats(name: str) -> None:
    figures = {name: ClusterFigures(name, True, 1.0, 1.0, (("windows-node-untainted", "warning", 2),),
                                    (("10.0.20348", "Windows Server 2022", "true", "aks", 3),),
                                    (("10.0.20348", dt.date(2031, 10, 14)),))}
    openmetrics, headers = exposition(figures, "application/openmetrics-text", today=dt.date(2031, 10, 4))
    assert headers["Content-Type"] == "application/openmetrics-text; version=1.0.0; charset=utf-8"
    text, headers = exposition(figures, "", today=dt.date(2031, 10, 4))
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    for body, parse in ((openmetrics, parse_openmetrics), (text, parse_text)):
        families = {family.name: family.samples for family in parse(body.decode("utf-8"))}
        [finding] = families["kubectl_win_findings"]
        assert finding.labels == {"cluster": name, "check": "windows-node-untainted", "severity": "warning"}
        assert finding.value == 2
        [end] = families["kubectl_win_os_support_end_timestamp_seconds"]
        assert (end.labels["cluster"], end.value) == (name, midnight(dt.date(2031, 10, 14)))


def test_gzip_is_sent_only_when_accepted() -> None:
    import gzip

    figures = {"lab": ClusterFigures("lab", False, 0.5)}
    plain, headers = exposition(figures, "")
    assert "Content-Encoding" not in headers
    packed, headers = exposition(figures, "", "gzip, deflate")
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(packed) == plain


def test_doctor_openmetrics_on_one_live_context_is_labelled_with_that_context(apiserver) -> None:
    apiserver.seed(SAMPLE_DUMP)
    result = run_cli("doctor", "--kubeconfig", str(apiserver.kubeconfig), "-o", "openmetrics")
    assert result.exit_code == 1, result.stderr
    found = samples(result.stdout)
    assert {s.labels["cluster"] for family in found.values() for s in family} == {"test"}
    findings = by_labels(found["kubectl_win_findings"], "check", "severity")
    assert findings[("windows-node-untainted", "warning")] == 1
    assert by_labels(found["kubectl_win_windows_nodes"], "build", "ready") == {("10.0.17763", "true"): 1,
                                                                              ("10.0.20348", "true"): 2}


def test_help_and_an_offline_openmetrics_run_import_neither_prometheus_client_nor_kubernetes() -> None:
    code = ("import sys, contextlib, io\nfrom kubectl_win.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['serve', '--help']); main(['doctor', '--help'])\n"
            "print(sorted(m for m in ('kubernetes', 'prometheus_client') if m in sys.modules))\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['doctor', '--from-dump', {str(SAMPLE_DUMP)!r}, '-o', 'openmetrics'])\n"
            "print(sorted(m for m in ('kubernetes', 'urllib3') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.stdout.split("\n")[:2] == ["[]", "[]"], result.stderr


def test_the_docs_show_what_doctor_o_openmetrics_prints() -> None:
    from tests.support.readme_examples import differences, examples, real_output

    checked = [e for e in examples((DOCS / "serve.md").read_text()) if "openmetrics" in e.command]
    assert checked
    for example in checked:
        assert differences(example.output, real_output(example.command)) == [], example.command


def _figures(name: str) -> ClusterFigures:
    return ClusterFigures(name, True, 1.0, 1.0, (("windows-node-untainted", "warning", 2),), (), ())


def test_the_cluster_label_is_left_out_in_cluster_and_named_as_asked() -> None:
    """In a pod reading its own cluster, Prometheus's target or external labels name the cluster: a `cluster`
    label of ours would clash with them. Elsewhere `cluster`, or the name --cluster-label gives."""
    def labels(figures: dict, asked: str | None = None) -> set[tuple[str, ...]]:
        body, _ = exposition(figures, "", today=dt.date(2030, 1, 1), cluster_label=asked)
        return {tuple(sorted(s.labels)) for f in parse_text(body.decode()) for s in f.samples
                if s.name == "kubectl_win_findings"}

    assert labels({"in-cluster": _figures("in-cluster")}) == {("check", "severity")}
    assert labels({"in-cluster": _figures("in-cluster")}, "k8s_cluster") == {("check", "k8s_cluster", "severity")}
    assert labels({"prod": _figures("prod")}) == {("check", "cluster", "severity")}
    assert labels({"prod": _figures("prod")}, "") == {("check", "severity")}
    assert labels({"a": _figures("a"), "in-cluster": _figures("in-cluster")}) == {("check", "cluster", "severity")}


@pytest.mark.parametrize("argv,message", [
    (["--cluster-label", "__name"], "invalid --cluster-label '__name'"),
    (["--cluster-label", "k8s-cluster"], "invalid --cluster-label 'k8s-cluster'"),
])
def test_a_bad_cluster_label_is_a_usage_error(argv: list[str], message: str) -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "openmetrics", *argv)
    assert result.exit_code == 2 and message in result.stderr


def test_doctor_openmetrics_names_the_cluster_label_asked_for() -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "openmetrics", "--cluster-label",
                     "k8s_cluster")
    found = samples(result.stdout)
    assert by_labels(found["kubectl_win_scan_success"], "k8s_cluster") == {("cluster-dump.json",): 1}
    assert all("cluster" not in s.labels for s in found["kubectl_win_findings"])


def test_the_findings_whose_message_shows_their_cause_have_their_own_series(tmp_path) -> None:
    """A script or an alert that keeps only the causes doctor is sure of reads kubectl_win_findings_cause."""
    def sure_event(data: dict) -> None:
        windows = {i["metadata"]["name"] for i in data["items"]
                   if i["kind"] == "Node" and i["metadata"]["labels"].get("kubernetes.io/os") == "windows"}
        pod = next(i for i in data["items"] if i["kind"] == "Pod" and i["spec"].get("nodeName") in windows)
        data["items"].append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "uid.1", "namespace":
                              pod["metadata"]["namespace"]}, "involvedObject": {"apiVersion": "v1", "kind": "Pod",
                              "namespace": pod["metadata"]["namespace"], "name": pod["metadata"]["name"]},
                              "reason": "Failed", "type": "Warning", "count": 1,
                              "message": "Error: run as uid (1000) is not supported on Windows"})

    out = io.StringIO()
    render_openmetrics([ClusterScan("lab", None, sample_report(tmp_path, sure_event), seconds=1.5)], out)
    found = samples(out.getvalue())
    causes = by_labels(found["kubectl_win_findings_cause"], "check", "severity")
    assert causes[("windows-identity-failure", "warning")] == 1
    assert causes[("symptom-hcn-network-create", "error")] == 0  # a reading check that found nothing: 0
    assert ("windows-node-untainted", "warning") not in causes  # a configuration check has no confidence
