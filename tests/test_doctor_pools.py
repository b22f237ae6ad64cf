"""Node pools: nodes alike but for their names share one row of `doctor nodes` and of the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

from kubectl_win.doctor.constructors import node_record
from kubectl_win.doctor.grouping import node_pools
from kubectl_win.findings import Finding, ObjectRef
from tests.support.cli import run_cli
from tests.support.kube_objects import node


def _finding(check: str, name: str) -> Finding:
    return Finding(check, "warning", ObjectRef("v1", "Node", None, name), "spec.taints", f"{check} on {name}")


def test_nodes_alike_but_for_names_and_zones_are_one_pool() -> None:
    nodes = [node_record(node(f"win-{i}", labels={"topology.kubernetes.io/zone": f"zone-{i % 3}"}))
             for i in range(5)]
    pools = node_pools(nodes, [])
    assert [[n.name for n in pool.nodes] for pool in pools] == [[f"win-{i}" for i in range(5)]]


def test_a_different_version_label_or_finding_makes_its_own_pool() -> None:
    nodes = [node_record(node("win-a")), node_record(node("win-b")), node_record(node("win-c", kubelet="v1.30.2")),
             node_record(node("win-d", labels={"agentpool": "other"})), node_record(node("win-e"))]
    findings = [_finding("windows-node-untainted", "win-b"), _finding("windows-node-untainted", "win-e")]
    pools = node_pools(nodes, findings)
    assert [[n.name for n in pool.nodes] for pool in pools] == [["win-a"], ["win-b", "win-e"], ["win-c"], ["win-d"]]
    assert [f.object.name for f in pools[1].findings] == ["win-b"]


def test_doctor_nodes_prints_one_row_per_pool_and_json_one_entry_per_node(tmp_path: Path) -> None:
    items = [node(f"win-{i:02}") for i in range(12)] + [node("win-old", kubelet="v1.30.2"), node("lin-0", os="linux")]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    table = run_cli("doctor", "nodes", "--from-dump", str(dump))
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["NAME", "NODES", "READY"]
    assert lines[1].split()[:4] == ["win-00", "+11", "more", "12"]
    assert lines[2].split()[:2] == ["win-old", "1"]
    assert lines[3].startswith("Update data: ")  # how current the patch data is, under the table
    assert not lines[4].strip()
    assert len(run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "json").json["nodes"]) == 13
