"""`scaffold monitor --prometheus-rule`: a prometheus-operator PrometheusRule over the metrics `serve` exports.

The alerts are data (ALERTS below: name, expression, wait, severity, texts, runbook section); this module
only fills in the label that names the cluster and the runbook address. Every alert's summary and
description name the cluster, and the check, build or node its expression keeps; its runbook_url points
at its section of docs/runbooks.md. tests/test_prometheus_rule.py checks the rules with promtool and
fires and resolves each alert on series shaped like `doctor -o openmetrics` output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_win.updates import MAX_UPDATES_BEHIND

RUNBOOK_BASE = "https://github.com/kubectl-win/kubectl-win/blob/main/docs/runbooks.md"
DEFAULT_CLUSTER_LABEL = "cluster"
GROUP = "kubectl-win"
DAY = 86400
# The scrape job of the monitor: prometheus-operator names a ServiceMonitor's job after the Service it selects,
# which `scaffold monitor` calls kubectl-win (kubectl_win/scaffold/monitor.py NAME).
JOB = "kubectl-win"


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str  # {c} is the cluster label
    wait: str  # `for:`
    severity: str
    summary: str  # Prometheus templates; {cluster} is the cluster's name (cluster_text)
    description: str


ALERTS = (
    Alert("KubectlWinWindowsNodeNotReady",
          'sum by ({c}, build) (kubectl_win_windows_nodes{{ready!="true"}}) > 0', "15m", "warning",
          "Windows nodes not Ready in {cluster}",
          "{{{{ $value }}}} Windows node(s) of build {{{{ $labels.build }}}} in cluster {cluster} have "
          "not been Ready for 15 minutes. Run `kubectl win doctor nodes` against the cluster to see which, and why."),
    Alert("KubectlWinErrorFindings",
          'sum by ({c}, check) (kubectl_win_findings{{severity="error"}}) > 0', "30m", "warning",
          "kubectl-win check {{{{ $labels.check }}}} reports errors in {cluster}",
          "doctor's check {{{{ $labels.check }}}} has reported {{{{ $value }}}} error finding(s) in cluster "
          "{cluster} for 30 minutes. `kubectl win doctor` names the objects and the fix; "
          "`kubectl win explain {{{{ $labels.check }}}}` explains the check."),
    Alert("KubectlWinWindowsSupportEnding",
          "(kubectl_win_os_support_end_timestamp_seconds - time()) < 90 * 86400 "
          "and (kubectl_win_os_support_end_timestamp_seconds - time()) > 0 "
          "and on ({c}, build) (sum by ({c}, build) (kubectl_win_windows_nodes) > 0)", "1h", "warning",
          "Support for Windows build {{{{ $labels.build }}}} ends within 90 days in {cluster}",
          "Windows nodes of build {{{{ $labels.build }}}} in cluster {cluster} lose support in "
          "{{{{ $value | humanizeDuration }}}}. Plan the move of their workloads to a supported build."),
    Alert("KubectlWinWindowsSupportEnded",
          "time() >= kubectl_win_os_support_end_timestamp_seconds "
          "and on ({c}, build) (sum by ({c}, build) (kubectl_win_windows_nodes) > 0)", "1h", "critical",
          "Windows build {{{{ $labels.build }}}} is out of support in {cluster}",
          "Windows nodes of build {{{{ $labels.build }}}} in cluster {cluster} run a Windows Server "
          "build whose support has ended: no security updates. Replace them with nodes of a supported build."),
    Alert("KubectlWinScanFailing",
          "kubectl_win_scan_success == 0", "15m", "warning",
          "kubectl-win cannot scan {cluster}",
          "kubectl-win serve has not been able to read cluster {cluster} for 15 minutes; its "
          "other metrics show the last good scan. Check the monitor pod's log and its RBAC."),
    Alert("KubectlWinNodeBehindOnUpdates",
          f"max by ({{c}}, node, build) (kubectl_win_node_os_updates_behind) > {MAX_UPDATES_BEHIND}", "6h", "warning",
          "Windows node {{{{ $labels.node }}}} is behind on updates in {cluster}",
          "Windows node {{{{ $labels.node }}}} (build {{{{ $labels.build }}}}) in cluster {cluster} "
          "is {{{{ $value }}}} monthly updates behind the newest released for its build. Upgrade the node image "
          "(or run Windows Update) and cordon and drain it first."),
    Alert("KubectlWinMonitorDown",
          f'up{{{{job="{JOB}"}}}} == 0 or absent(up{{{{job="{JOB}"}}}})', "15m", "warning",
          "The kubectl-win monitor is down or not scraped in {cluster}",
          f"Prometheus's scrapes of kubectl-win serve (job {JOB}) in cluster {{cluster}} have failed, or found no "
          "target, for 15 minutes: the pod is down, or no scrape config or ServiceMonitor selects it. Until it is "
          "back, the other kubectl-win alerts cannot fire."),
)


def cluster_text(cluster_label: str) -> str:
    """The cluster's name in an alert's texts: the series' label, else Prometheus's external label of that name
    (`serve` in the cluster adds none by default: the Prometheus that scrapes it knows the cluster)."""
    return (f"{{{{ with $labels.{cluster_label} }}}}{{{{ . }}}}{{{{ else }}}}"
            f"{{{{ $externalLabels.{cluster_label} }}}}{{{{ end }}}}")


def anchor(name: str) -> str:
    """The heading anchor GitHub gives `## Name` in docs/runbooks.md."""
    return name.lower()


def alert_rules(cluster_label: str = DEFAULT_CLUSTER_LABEL, runbook_base: str = RUNBOOK_BASE) -> list[dict[str, Any]]:
    """The `rules` of the group, as Prometheus rule files and the PrometheusRule CRD both spell them."""
    return [{
        "alert": alert.name,
        "expr": alert.expr.format(c=cluster_label),
        "for": alert.wait,
        "labels": {"severity": alert.severity},
        "annotations": {
            "summary": alert.summary.format(cluster=cluster_text(cluster_label)),
            "description": alert.description.format(cluster=cluster_text(cluster_label)),
            "runbook_url": f"{runbook_base}#{anchor(alert.name)}",
        },
    } for alert in ALERTS]


def rule_groups(cluster_label: str = DEFAULT_CLUSTER_LABEL, runbook_base: str = RUNBOOK_BASE) -> list[dict[str, Any]]:
    return [{"name": GROUP, "rules": alert_rules(cluster_label, runbook_base)}]


def prometheus_rule(namespace: str, labels: dict[str, str], cluster_label: str = DEFAULT_CLUSTER_LABEL,
                    runbook_base: str = RUNBOOK_BASE) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "kubectl-win", "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": rule_groups(cluster_label, runbook_base)},
    }
