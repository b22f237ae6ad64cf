"""The PrometheusRule of `scaffold monitor --prometheus-rule`, checked by Prometheus's own promtool (built from
its Go module by `python -m tests.realcluster build`): `promtool check rules`, and `promtool test rules` unit
tests that fire and resolve every alert on series whose names and labels are those `doctor -o openmetrics`
prints for the bundled sample cluster."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from kubectl_win.scaffold.alerts import ALERTS, RUNBOOK_BASE, anchor, rule_groups
from tests.clirun import run_cli
from tests.tools import missing_tool

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "kubectl_win" / "examples" / "cluster-dump.json"
CLUSTER = "prod-eu"
DAY = 86400


def promtool() -> str:
    from tests.realcluster.build import binary_path

    path = binary_path("promtool", "promtool")
    if not path.is_file():
        missing_tool("promtool not built: run `python -m tests.realcluster build --promtool`")
    return str(path)


def run_promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def exported() -> dict[str, list[dict[str, str]]]:
    """family -> label sets of `doctor -o openmetrics` on the sample cluster (the cluster renamed)."""
    result = run_cli("doctor", "--from-dump", str(SAMPLE), "-o", "openmetrics")
    assert result.exit_code in (0, 1), result.stderr
    found: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(result.stdout):
        for sample in family.samples:
            labels = {**sample.labels, "cluster": CLUSTER}
            found.setdefault(sample.name, []).append(labels)
    return found


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    text = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    return {"series": f"{name}{{{text}}}", "values": values}


def expand(template: str, labels: dict[str, str], value: str) -> str:
    """What Prometheus makes of our annotation templates ($labels.X, $value, humanizeDuration)."""
    text = re.sub(r"\{\{ \$value \| humanizeDuration \}\}", value, template)
    text = text.replace("{{ $value }}", value)
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)


def expected(alert_name: str, labels: dict[str, str], value: str) -> dict[str, Any]:
    [rule] = [r for r in rule_groups()[0]["rules"] if r["alert"] == alert_name]
    return {"exp_labels": {**labels, "severity": rule["labels"]["severity"]},
            "exp_annotations": {key: expand(text, labels, value) for key, text in rule["annotations"].items()}}


def unit_tests(exported: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    """One promtool test per alert: quiet before, firing after its `for`, resolved once the cause goes."""
    node = next(labels for labels in exported["kubectl_win_windows_nodes"] if labels["build"] == "10.0.20348")
    build = node["build"]
    error = next(labels for labels in exported["kubectl_win_findings"] if labels["severity"] == "error")
    [scan] = exported["kubectl_win_scan_success"]
    support = next(labels for labels in exported["kubectl_win_os_support_end_timestamp_seconds"]
                   if labels["build"] == build)
    not_ready = {**node, "ready": "false"}
    ending = 90 * DAY + 2 * 3600  # support ends 90 days and 2 hours after the test clock's start
    ended = 2 * 3600  # two hours after it
    behind = {"cluster": CLUSTER, "node": "win22-0", "build": build}
    return [
        {"name": "a Windows node not Ready for 15 minutes", "interval": "1m",
         "input_series": [series("kubectl_win_windows_nodes", node, "2x60"),
                          series("kubectl_win_windows_nodes", not_ready, "0x9 1x29 0x20")],
         "alert_rule_test": [
             {"eval_time": "20m", "alertname": "KubectlWinWindowsNodeNotReady", "exp_alerts": []},
             {"eval_time": "30m", "alertname": "KubectlWinWindowsNodeNotReady",
              "exp_alerts": [expected("KubectlWinWindowsNodeNotReady", {"cluster": CLUSTER, "build": build}, "1")]},
             {"eval_time": "45m", "alertname": "KubectlWinWindowsNodeNotReady", "exp_alerts": []}]},
        {"name": "error findings of a check for 30 minutes", "interval": "1m",
         "input_series": [series("kubectl_win_findings", error, "0x9 2x49 0x20")],
         "alert_rule_test": [
             {"eval_time": "30m", "alertname": "KubectlWinErrorFindings", "exp_alerts": []},
             {"eval_time": "45m", "alertname": "KubectlWinErrorFindings",
              "exp_alerts": [expected("KubectlWinErrorFindings", {"cluster": CLUSTER, "check": error["check"]}, "2")]},
             {"eval_time": "65m", "alertname": "KubectlWinErrorFindings", "exp_alerts": []}]},
        {"name": "support ending within 90 days; quiet once no node of the build is left", "interval": "1m",
         "input_series": [series("kubectl_win_os_support_end_timestamp_seconds", support, f"{ending}+0x600"),
                          series("kubectl_win_windows_nodes", node, "2x360 0x240")],
         "alert_rule_test": [
             {"eval_time": "1h", "alertname": "KubectlWinWindowsSupportEnding", "exp_alerts": []},
             {"eval_time": "5h", "alertname": "KubectlWinWindowsSupportEnding",
              "exp_alerts": [expected("KubectlWinWindowsSupportEnding", support, "89d 21h 0m 0s")]},
             {"eval_time": "5h", "alertname": "KubectlWinWindowsSupportEnded", "exp_alerts": []},
             {"eval_time": "8h", "alertname": "KubectlWinWindowsSupportEnding", "exp_alerts": []}]},
        {"name": "support ended; quiet once no node of the build is left", "interval": "1m",
         "input_series": [series("kubectl_win_os_support_end_timestamp_seconds", support, f"{ended}+0x600"),
                          series("kubectl_win_windows_nodes", node, "2x360 0x240")],
         "alert_rule_test": [
             {"eval_time": "2h30m", "alertname": "KubectlWinWindowsSupportEnded", "exp_alerts": []},
             {"eval_time": "4h", "alertname": "KubectlWinWindowsSupportEnded",
              "exp_alerts": [expected("KubectlWinWindowsSupportEnded", support, "")]},
             {"eval_time": "4h", "alertname": "KubectlWinWindowsSupportEnding", "exp_alerts": []},
             {"eval_time": "8h", "alertname": "KubectlWinWindowsSupportEnded", "exp_alerts": []}]},
        {"name": "scans failing for 15 minutes", "interval": "1m",
         "input_series": [series("kubectl_win_scan_success", scan, "1x9 0x19 1x20")],
         "alert_rule_test": [
             {"eval_time": "20m", "alertname": "KubectlWinScanFailing", "exp_alerts": []},
             {"eval_time": "27m", "alertname": "KubectlWinScanFailing",
              "exp_alerts": [expected("KubectlWinScanFailing", scan, "0")]},
             {"eval_time": "35m", "alertname": "KubectlWinScanFailing", "exp_alerts": []}]},
        {"name": "a node two monthly updates behind for 6 hours", "interval": "1m",
         "input_series": [series("kubectl_win_node_os_updates_behind", behind, "1x179 2x599 0x300")],
         "alert_rule_test": [
             {"eval_time": "3h", "alertname": "KubectlWinNodeBehindOnUpdates", "exp_alerts": []},
             {"eval_time": "11h", "alertname": "KubectlWinNodeBehindOnUpdates",
              "exp_alerts": [expected("KubectlWinNodeBehindOnUpdates", behind, "2")]},
             {"eval_time": "14h", "alertname": "KubectlWinNodeBehindOnUpdates", "exp_alerts": []}]},
    ]


def test_every_alert_has_a_unit_test(exported: dict[str, list[dict[str, str]]]) -> None:
    tested = {case["alertname"] for test in unit_tests(exported) for case in test["alert_rule_test"]
              if case["exp_alerts"]}
    assert tested == {alert.name for alert in ALERTS}


def test_promtool_checks_the_rules(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups()}, sort_keys=False))
    result = run_promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in result.stdout + result.stderr


def test_promtool_fires_and_resolves_every_alert(tmp_path: Path, exported: dict[str, list[dict[str, str]]]) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups()}, sort_keys=False))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(
        {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": unit_tests(exported)}, sort_keys=False))
    result = run_promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_cli_writes_the_rule_with_the_same_groups() -> None:
    result = run_cli("scaffold", "monitor", "--image", "registry.example.com/kubectl-win:0.1.0", "--prometheus-rule")
    assert result.exit_code == 0, result.stderr
    [rule] = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "PrometheusRule"]
    assert rule["metadata"]["namespace"] == "kubectl-win"
    assert rule["spec"]["groups"] == rule_groups()


def test_every_runbook_url_leads_to_a_section_of_the_runbooks() -> None:
    headings = {line[3:].strip().lower() for line in (ROOT / "docs" / "runbooks.md").read_text().splitlines()
                if line.startswith("## ")}
    for rule in rule_groups()[0]["rules"]:
        url = rule["annotations"]["runbook_url"]
        assert url == f"{RUNBOOK_BASE}#{anchor(rule['alert'])}"
        assert anchor(rule["alert"]) in headings, rule["alert"]
