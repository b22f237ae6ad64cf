"""The PrometheusRule of `scaffold monitor --prometheus-rule`, checked by Prometheus's own promtool (built from
its Go module by `python -m tests.realcluster build`): `promtool check rules`, and `promtool test rules` unit
tests that fire and resolve every alert on series whose names and labels are those `doctor -o openmetrics`
prints for the bundled sample cluster."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from kubectl_win.scaffold.alerts import ALERTS, JOB, RUNBOOK_BASE, anchor, rule_groups
from kubectl_win.updates import MAX_UPDATES_BEHIND
from tests.support.cli import run_cli
from tests.support.paths import ROOT, SAMPLE_DUMP
from tests.support.tools import missing_tool

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
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "openmetrics")
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


def expand(template: str, labels: dict[str, str], value: str, external: dict[str, str] | None = None) -> str:
    """What Prometheus makes of our annotation templates ($labels.X, $externalLabels.X, $value,
    humanizeDuration, the with/else that names the cluster)."""
    text = re.sub(r"\{\{ with \$labels\.(\w+) \}\}\{\{ \. \}\}\{\{ else \}\}\{\{ \$externalLabels\.(\w+) \}\}"
                  r"\{\{ end \}\}", lambda m: labels.get(m.group(1)) or (external or {}).get(m.group(2), ""), template)
    text = re.sub(r"\{\{ \$value \| humanizeDuration \}\}", value, text)
    text = text.replace("{{ $value }}", value)
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)


def expected(alert_name: str, labels: dict[str, str], value: str,
             external: dict[str, str] | None = None) -> dict[str, Any]:
    [rule] = [r for r in rule_groups()[0]["rules"] if r["alert"] == alert_name]
    return {"exp_labels": {**labels, "severity": rule["labels"]["severity"]},
            "exp_annotations": {key: expand(text, labels, value, external)
                                for key, text in rule["annotations"].items()}}


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
    target = {"cluster": CLUSTER, "job": JOB, "instance": "10.0.0.5:9108", "namespace": "kubectl-win"}
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
        {"name": "in the cluster, serve adds no cluster label: the texts take Prometheus's external one",
         "interval": "1m", "external_labels": {"cluster": "prod-eu"},
         "input_series": [series("kubectl_win_scan_success", {}, "1x9 0x19 1x20")],
         "alert_rule_test": [
             {"eval_time": "27m", "alertname": "KubectlWinScanFailing",
              "exp_alerts": [expected("KubectlWinScanFailing", {}, "0", {"cluster": "prod-eu"})]}]},
        {"name": "a node behind by doctor's threshold is quiet; one more update behind for 6 hours fires",
         "interval": "1m",
         "input_series": [series("kubectl_win_node_os_updates_behind", behind,
                                 f"{MAX_UPDATES_BEHIND}x479 {MAX_UPDATES_BEHIND + 1}x599 0x300")],
         "alert_rule_test": [
             {"eval_time": "7h", "alertname": "KubectlWinNodeBehindOnUpdates", "exp_alerts": []},
             {"eval_time": "16h", "alertname": "KubectlWinNodeBehindOnUpdates",
              "exp_alerts": [expected("KubectlWinNodeBehindOnUpdates", behind, str(MAX_UPDATES_BEHIND + 1))]},
             {"eval_time": "19h", "alertname": "KubectlWinNodeBehindOnUpdates", "exp_alerts": []}]},
        {"name": "the monitor's target down for 15 minutes", "interval": "1m",
         "input_series": [series("up", target, "1x9 0x29 1x20")],
         "alert_rule_test": [
             {"eval_time": "20m", "alertname": "KubectlWinMonitorDown", "exp_alerts": []},
             {"eval_time": "30m", "alertname": "KubectlWinMonitorDown",
              "exp_alerts": [expected("KubectlWinMonitorDown", target, "0")]},
             {"eval_time": "45m", "alertname": "KubectlWinMonitorDown", "exp_alerts": []}]},
        {"name": "the monitor not scraped at all (no target: e.g. no Prometheus selects the ServiceMonitor)",
         "interval": "1m", "external_labels": {"cluster": CLUSTER},
         "input_series": [series("up", target, "1x9 _x40 1x20")],
         "alert_rule_test": [
             {"eval_time": "12m", "alertname": "KubectlWinMonitorDown", "exp_alerts": []},
             {"eval_time": "35m", "alertname": "KubectlWinMonitorDown",
              "exp_alerts": [expected("KubectlWinMonitorDown", {"job": JOB}, "1", {"cluster": CLUSTER})]},
             {"eval_time": "55m", "alertname": "KubectlWinMonitorDown", "exp_alerts": []}]},
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


def test_the_behind_alert_and_doctor_flag_the_same_nodes() -> None:
    """One threshold: the alert fires above doctor's --max-updates-behind default, as windows-updates-behind
    does (before, the alert fired at 2 behind while doctor said "more than 3")."""
    from kubectl_win.cli import parse_args

    _, options = parse_args(["doctor", "--from-dump", str(SAMPLE_DUMP)])
    [rule] = [r for r in rule_groups()[0]["rules"] if r["alert"] == "KubectlWinNodeBehindOnUpdates"]
    assert rule["expr"].endswith(f"(kubectl_win_node_os_updates_behind) > {options.max_updates_behind}")
    assert options.max_updates_behind == MAX_UPDATES_BEHIND


def test_the_monitor_down_alert_watches_the_job_the_service_monitor_makes() -> None:
    """prometheus-operator names the job after the Service the ServiceMonitor selects."""
    result = run_cli("scaffold", "monitor", "--image", "registry.example.com/kubectl-win:0.1.0", "--service-monitor",
                     "--prometheus-rule")
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    [service] = [doc for doc in docs if doc["kind"] == "Service"]
    [monitor] = [doc for doc in docs if doc["kind"] == "ServiceMonitor"]
    assert "jobLabel" not in monitor["spec"] and service["metadata"]["name"] == JOB
    [rule] = [r for r in rule_groups()[0]["rules"] if r["alert"] == "KubectlWinMonitorDown"]
    assert f'up{{job="{JOB}"}} == 0' in rule["expr"] and f'absent(up{{job="{JOB}"}})' in rule["expr"]


def test_every_runbook_url_leads_to_a_section_of_the_runbooks() -> None:
    headings = {line[3:].strip().lower() for line in (ROOT / "docs" / "runbooks.md").read_text().splitlines()
                if line.startswith("## ")}
    for rule in rule_groups()[0]["rules"]:
        url = rule["annotations"]["runbook_url"]
        assert url == f"{RUNBOOK_BASE}#{anchor(rule['alert'])}"
        assert anchor(rule["alert"]) in headings, rule["alert"]


def test_the_exported_metrics_pass_promtools_naming_lint() -> None:
    """`promtool check metrics` (base units, counter suffixes, ...) on what serve exposes for the sample
    cluster; it refuses the days gauge the support end used to be."""
    from kubectl_win.fleet.figures import figures_of
    from kubectl_win.fleet.metrics import exposition
    from kubectl_win.fleet.scan import ClusterScan
    from tests.test_metrics import sample_report

    figures = {"lab": figures_of(ClusterScan("lab", None, sample_report(), seconds=1.0), 1.8e9)}
    body, _ = exposition(figures, "")
    assert b"kubectl_win_os_support_end_timestamp_seconds{" in body
    lint = subprocess.run([promtool(), "check", "metrics"], input=body.decode(), capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    days = "# TYPE kubectl_win_os_support_end_days gauge\nkubectl_win_os_support_end_days 3\n"
    refused = subprocess.run([promtool(), "check", "metrics"], input=days, capture_output=True, text=True)
    assert 'use base unit "seconds" instead of "days"' in refused.stdout + refused.stderr


def test_promtool_parses_every_expression_of_the_dashboard(tmp_path: Path) -> None:
    """Each panel's PromQL (Grafana's $cluster and $__rate_interval filled in) as a recording rule."""
    from kubectl_win.scaffold.dashboard import dashboard_json

    board = dashboard_json()
    exprs = [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]
    variable = next(v for v in board["templating"]["list"] if v["name"] == "cluster")
    metric = re.fullmatch(r"label_values\((\w+), cluster\)", variable["query"])
    assert metric, variable["query"]
    exprs.append(metric.group(1))
    assert len(exprs) >= 10
    rules = [{"record": f"kubectl_win:dashboard_{index}", "expr": expr.replace("$cluster", ".*")
              .replace("$__rate_interval", "5m")} for index, expr in enumerate(exprs)]
    (tmp_path / "dashboard.yaml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = run_promtool("check", "rules", "dashboard.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
        {"record": "kubectl_win:broken", "expr": "sum by (check (kubectl_win_findings)"}]}]}))
    assert run_promtool("check", "rules", "broken.yaml", cwd=tmp_path).returncode != 0  # the check can fail


def test_the_dashboard_config_map_is_picked_up_by_grafanas_sidecar() -> None:
    result = run_cli("scaffold", "monitor", "--image", "registry.example.com/kubectl-win:0.1.0", "--grafana-dashboard")
    assert result.exit_code == 0, result.stderr
    [config_map] = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "ConfigMap"]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    import json

    board = json.loads(config_map["data"]["kubectl-win.json"])
    assert board["uid"] == "kubectl-win-windows"
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource", "cluster"]
    titles = {panel["title"] for panel in board["panels"]}
    assert {"Findings by severity", "Findings by check", "Windows nodes by build and readiness", "Support ends in",
            "Scan health"} <= titles


def test_the_committed_dashboard_is_what_grafanas_sdk_builds() -> None:
    """dashboard.json is generated (`python -m kubectl_win.scaffold.dashboard`), never edited by hand."""
    try:
        import grafana_foundation_sdk  # noqa: F401 - the test extra installs it
    except ImportError:
        missing_tool("grafana-foundation-sdk is not installed (pip install -e '.[test]')")
    from kubectl_win.scaffold.dashboard import DATA, build, dashboard_text

    assert Path(DATA).read_text(encoding="utf-8") == dashboard_text(build()), \
        "kubectl_win/scaffold/dashboard.json is stale: run `python -m kubectl_win.scaffold.dashboard`"


def test_the_dashboard_groups_by_the_cluster_label_asked_for() -> None:
    from kubectl_win.scaffold.dashboard import dashboard_json

    board = dashboard_json("k8s_cluster")
    exprs = [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]
    assert all('k8s_cluster=~"$cluster"' in expr for expr in exprs)
    assert "label_values(kubectl_win_scan_success, k8s_cluster)" in json.dumps(board)


def test_the_docs_list_every_alert_as_the_rule_has_it() -> None:
    text = (ROOT / "docs" / "monitor.md").read_text(encoding="utf-8")
    for alert in ALERTS:
        assert f"| `{alert.name}` | `{alert.severity}` | `{alert.wait}` | `{alert.expr.format(c='cluster')}` |" \
            in text, alert.name
