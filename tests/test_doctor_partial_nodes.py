"""Nodes described partially (labels but no status.nodeInfo, as from `kubectl describe` or another tool's
export): their OS and build come from the labels, unknown runtime and kubelet stay null with the reason in
`skipped`, and no check guesses."""

from __future__ import annotations

import copy
import json
from typing import Any

from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.render.report import DoctorReport
from tests.support.kube_objects import node, snapshot_of


def partial(name: str, labels: dict[str, str]) -> dict[str, Any]:
    obj = copy.deepcopy(node(name))
    obj["metadata"]["labels"] = {"kubernetes.io/hostname": name, **labels}
    del obj["status"]["nodeInfo"]
    return obj


def report_of(*objs: dict[str, Any]) -> dict[str, Any]:
    snapshot = snapshot_of(*objs)
    return json.loads(json.dumps(DoctorReport.build(snapshot, run_checks(snapshot), "cluster").to_dict()))


def test_build_from_the_build_label_and_unknowns_null_with_the_reason_in_skipped() -> None:
    labels = {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}
    data = report_of(partial("win-0", labels))
    [win] = data["nodes"]
    assert (win["os"], win["windowsBuild"]) == ("windows", "10.0.20348")
    assert (win["runtime"], win["runtimeVersion"], win["kubeletVersion"], win["kernelVersion"]) == (None,) * 4
    [skipped] = data["skipped"]
    assert skipped["resource"] == "nodes/win-0"
    assert "runtime and kubelet version unknown" in skipped["reason"]
    assert "node.kubernetes.io/windows-build" in skipped["reason"]
    ids = {f["id"] for f in data["findings"]}
    assert not ids & {"runtime-unknown", "windows-build-unknown", "kubelet-too-old", "windows-build-label-missing"}


def test_aks_labels_say_os_and_build_when_the_standard_labels_are_missing() -> None:
    data = report_of(partial("akswin000000", {"kubernetes.azure.com/os-sku": "Windows2022"}),
                     partial("akswin000001", {"kubernetes.azure.com/node-image-version":
                                              "AKSWindows-2019-containerd-17763.7009.250311"}))
    builds = {n["name"]: (n["os"], n["windowsBuild"]) for n in data["nodes"]}
    assert builds == {"akswin000000": ("windows", "10.0.20348"), "akswin000001": ("windows", "10.0.17763")}
    missing = [f for f in data["findings"] if f["id"] == "windows-build-label-missing"]
    assert {f["object"]["name"] for f in missing} == {"akswin000000", "akswin000001"}
    assert "from the label kubernetes.azure.com/os-sku" in next(
        f["message"] for f in missing if f["object"]["name"] == "akswin000000")


def test_a_node_with_nothing_to_go_on_is_unknown_not_guessed() -> None:
    data = report_of(partial("mystery", {}))
    [only] = data["nodes"]
    assert only["os"] is None and only["windowsBuild"] is None
    assert [f["id"] for f in data["findings"]] == ["windows-nodes-missing"]


def test_wrong_typed_node_info_fields_count_as_absent() -> None:
    obj = node("win-0")
    obj["status"]["nodeInfo"]["kubeletVersion"] = ["v1.31.4"]
    obj["status"]["nodeInfo"]["kernelVersion"] = 10
    data = report_of(obj)
    [win] = data["nodes"]
    assert win["kubeletVersion"] is None and win["kernelVersion"] is None
    assert win["windowsBuild"] == "10.0.20348"  # from the build label
