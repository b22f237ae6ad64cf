"""`scaffold monitor --grafana-dashboard`: a Grafana dashboard over the metrics `serve` exports, in a ConfigMap
Grafana's dashboard sidecar loads (label `grafana_dashboard: "1"`, as kube-prometheus-stack sets it up).

The dashboard is built with Grafana's own SDK for dashboards as code (grafana-foundation-sdk) from PANELS
below, at build time: `python -m kubectl_win.scaffold.dashboard` writes dashboard.json beside this module,
and tests/test_prometheus_rule.py fails when the committed file is not what the SDK builds. The SDK is light
(pure Python, no dependencies), but every runtime dependency is locked into the standalone archives
(release/windows-wheels.txt and the frozen bundles); a data file keeps them as they are and keeps the SDK
out of the plugin's import path. At scaffold time only the label that names the cluster is filled in.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

UID = "kubectl-win-windows"
TITLE = "kubectl-win: Windows nodes and workloads"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboard.json")
LABEL = "__CLUSTER_LABEL__"  # stands for the cluster label in dashboard.json
SELECTOR = f'{LABEL}=~"$cluster"'


@dataclass(frozen=True)
class PanelSpec:
    title: str
    kind: str  # timeseries | stat | table
    exprs: tuple[tuple[str, str], ...]  # (PromQL with {sel} for the cluster selector, legend)
    unit: str = "short"
    description: str = ""
    width: int = 12


PANELS = (
    PanelSpec("Findings by severity", "timeseries",
              (("sum by (severity) (kubectl_win_findings{{{sel}}})", "{{severity}}"),),
              description="doctor's findings of the last scan, by severity."),
    PanelSpec("Findings by check", "timeseries",
              (("sum by (check, severity) (kubectl_win_findings{{{sel}}}) > 0", "{{check}} ({{severity}})"),),
              description="Checks with findings; a fixed problem drops to nothing."),
    PanelSpec("Windows nodes by build and readiness", "timeseries",
              (("sum by (build, version, ready) (kubectl_win_windows_nodes{{{sel}}})",
                "{{version}} ({{build}}) ready={{ready}}"),)),
    PanelSpec("Windows nodes not Ready", "stat",
              (('sum(kubectl_win_windows_nodes{{{sel},ready!="true"}}) or vector(0)', "not Ready"),), width=6),
    PanelSpec("Support ends in", "stat",
              (("min by (build) (kubectl_win_os_support_end_timestamp_seconds{{{sel}}} - time())", "{{build}}"),),
              unit="s", description="Time left until support for each Windows build in use ends; negative once "
                                    "past.", width=6),
    PanelSpec("Scan health", "stat",
              (("min(kubectl_win_scan_success{{{sel}}})", "scan succeeded"),
               ("time() - max(kubectl_win_scan_last_success_timestamp_seconds{{{sel}}})", "age of the figures")),
              width=6),
    PanelSpec("Scan duration", "timeseries",
              (("max(kubectl_win_scan_duration_seconds{{{sel}}})", "duration"),
               ("sum(increase(kubectl_win_scans_total{{{sel}}}[$__rate_interval]))", "scans")), width=6),
    PanelSpec("Nodes behind on updates", "table",
              (("max by (node, build) (kubectl_win_node_os_updates_behind{{{sel}}}) > 0", "{{node}}"),
               ("time() - max by (node, build) (kubectl_win_node_os_revision_release_timestamp_seconds{{{sel}}})",
                "{{node}} revision age")),
              description="Monthly Windows updates each node is behind the newest for its build, and how long "
                          "ago its revision was released.", width=24),
)


def build() -> dict[str, Any]:
    """The dashboard from PANELS, built with Grafana's SDK (build time only; it is not a runtime dependency)."""
    from grafana_foundation_sdk.builders import dashboard, prometheus, stat, table, timeseries
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh

    source = DataSourceRef(type_val="prometheus", uid="${datasource}")
    board = (dashboard.Dashboard(TITLE).uid(UID).tags(["kubectl-win", "windows"]).refresh("1m")
             .time("now-24h", "now").timezone("browser")
             .with_variable(dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus"))
             .with_variable(dashboard.QueryVariable("cluster").label("Cluster").datasource(source)
                            .query(f"label_values(kubectl_win_scan_success, {LABEL})")
                            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).multi(True).include_all(True)
                            .all_value(".*")))
    kinds = {"timeseries": timeseries.Panel, "stat": stat.Panel, "table": table.Panel}
    for spec in PANELS:
        panel = kinds[spec.kind]().title(spec.title).datasource(source).unit(spec.unit).span(spec.width).height(8)
        if spec.description:
            panel = panel.description(spec.description)
        for index, (expr, legend) in enumerate(spec.exprs):
            query = (prometheus.Dataquery().expr(expr.format(sel=SELECTOR)).legend_format(legend)
                     .ref_id("ABCDEFGH"[index]))
            panel = panel.with_target(query.instant() if spec.kind in ("stat", "table") else query.range())
        board = board.with_panel(panel)
    return json.loads(json.dumps(board.build(), cls=JSONEncoder))


def dashboard_text(board: dict[str, Any]) -> str:
    return json.dumps(board, indent=2, sort_keys=True) + "\n"


def dashboard_json(cluster_label: str = "cluster") -> dict[str, Any]:
    """The built dashboard with the cluster label filled in."""
    with open(DATA, encoding="utf-8") as handle:
        return json.loads(handle.read().replace(LABEL, cluster_label))


def dashboard_config_map(namespace: str, labels: dict[str, str], cluster_label: str = "cluster") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kubectl-win-dashboard", "namespace": namespace,
                     "labels": {**labels, "grafana_dashboard": "1"}},
        "data": {"kubectl-win.json": dashboard_text(dashboard_json(cluster_label))},
    }


if __name__ == "__main__":
    with open(DATA, "w", encoding="utf-8") as out:
        out.write(dashboard_text(build()))
    print(DATA)
