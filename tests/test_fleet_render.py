"""The fleet renderers write clusters in the order asked for whatever order they finish in, and each cluster's
part is the single-cluster report's (dumps stand in for clusters: no server needed to test the layout)."""

from __future__ import annotations

import io
import itertools
import json
import xml.etree.ElementTree as ET

import pytest
import yaml

from kubectl_win.doctor.run import DoctorOptions, run_doctor
from kubectl_win.fleet.render import FleetOutput, render_fleet, renderer
from kubectl_win.fleet.scan import ClusterScan
from kubectl_win.fleet.summary import fleet_exit_code
from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP


def scans() -> list[ClusterScan]:
    report = run_doctor(DoctorOptions(from_dump=str(SAMPLE_DUMP)))
    return [ClusterScan("a", "https://a:6443", report, index=0),
            ClusterScan("b", None, None, "cannot connect to https://b:6443: connection refused", 3, index=1),
            ClusterScan("c", "https://c:6443", report, index=2)]


def rendered(output: str, order: tuple[int, ...]) -> str:
    every = scans()
    out = io.StringIO()
    summaries = render_fleet((every[i] for i in order), [renderer(FleetOutput(out, output))], "error")
    assert fleet_exit_code(summaries) == 1
    return out.getvalue()


@pytest.mark.parametrize("output", ["json", "yaml", "sarif", "junit"])
def test_the_order_asked_for_whatever_the_order_of_finishing(output: str) -> None:
    outputs = {rendered(output, order) for order in itertools.permutations(range(3))}
    assert len(outputs) == 1


def test_json_clusters_carry_the_single_cluster_findings_and_yaml_is_the_same_document() -> None:
    doc = json.loads(rendered("json", (2, 1, 0)))
    single = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json").json
    assert [c["context"] for c in doc["clusters"]] == ["a", "b", "c"]
    assert doc["clusters"][0]["findings"] == single["findings"] == doc["clusters"][2]["findings"]
    assert doc["clusters"][1] == {"context": "b", "server": None, "ok": False,
                                  "error": "cannot connect to https://b:6443: connection refused", "exitCode": 3}
    assert doc["summary"] == {"clusters": 3, "read": 2, "failed": 1, "errors": 2 * single["summary"]["errors"],
                              "warnings": 2 * single["summary"]["warnings"], "infos": 2 * single["summary"]["infos"],
                              "windowsNodes": 6, "exitCode": 1}
    assert yaml.safe_load(rendered("yaml", (1, 2, 0))) == doc


def test_junit_is_one_document_with_a_testsuite_per_cluster() -> None:
    suites = ET.fromstring(rendered("junit", (0, 1, 2))).findall("testsuite")
    assert [s.get("name") for s in suites] == ["kubectl-win doctor a", "kubectl-win doctor b", "kubectl-win doctor c"]


def test_the_table_folds_the_same_fix_in_several_clusters() -> None:
    text = rendered("table", (0, 1, 2))
    summary = text[text.index("=== fleet: 3 clusters, 2 read, 1 could not be read ==="):]
    assert "2: a, c" in summary and "kubectl taint nodes win22-1 os=windows:NoSchedule" in summary
    assert "b " in summary and "could not be read: cannot connect to https://b:6443" in summary


def test_fleet_progress_counts_clusters_and_steps_aside_for_a_report() -> None:
    from kubectl_win.doctor.render.progress import FleetProgress

    err = io.StringIO()
    progress = FleetProgress(err, 3, clock=lambda: 0.0)
    progress.for_cluster("a")("pods", 500)
    progress.for_cluster("b")("nodes", 20)
    assert progress.line() == "clusters: 0/3 done, 520 objects read, 0.0s"
    progress.hide()
    drawn = err.getvalue()
    progress.for_cluster("b")("pods", 40)  # while a report is printed, nothing is drawn
    assert err.getvalue() == drawn and drawn.endswith("\r\033[K")
    progress.cluster_done("b", ok=False)
    assert err.getvalue().endswith("\rclusters: 1/3 done (1 failed), 560 objects read, 0.0s\033[K")
