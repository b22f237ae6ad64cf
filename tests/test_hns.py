"""kubectl win hns on recorded dumps: each known failure pattern found, nothing false on healthy nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.catalog import family
from kubectl_win.errors import InputError
from kubectl_win.hns.analyze import analyze
from kubectl_win.hns.cluster import build_view
from kubectl_win.hns.model import parse
from kubectl_win.hns.service import analyze_objects, parse_hns_text
from tests.support.hns_scenarios import HNS_FIXTURES, SCENARIOS, Scenario, cluster_items, load
from tests.support.paths import ROOT


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubectl_win", "hns", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("dump", ["win-a-v1.json", "win-b-v2.json"])
def test_healthy_nodes_have_no_findings(dump: str) -> None:
    report = analyze_objects(load(dump), build_view(cluster_items()))
    assert [f.id for f in report.findings] == []
    assert report.node == dump[:5]
    assert report.compared == ["Services", "EndpointSlices", "Pods", "Nodes"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.pattern}-{s.name.replace(' ', '-')}")
def test_each_failure_pattern_is_found_and_nothing_else(scenario: Scenario) -> None:
    dump, items = scenario.build()
    report = analyze_objects(dump, build_view(items) if items is not None else None)
    assert {f.id for f in report.findings} == scenario.expected, [f.message for f in report.findings]
    for finding in report.findings:
        assert finding.fix and finding.source and "{" not in finding.message


def test_every_pattern_has_a_scenario_and_every_check_is_exercised() -> None:
    patterns = {c.pattern for c in family("hns").values()}
    assert patterns == set(range(1, 16))
    assert {s.pattern for s in SCENARIOS} == patterns
    exercised = set().union(*(s.expected for s in SCENARIOS))
    assert exercised == set(family("hns"))


def test_findings_name_what_to_fix() -> None:
    dump, items = dict((s.name, s) for s in SCENARIOS)["missing load balancer"].build()
    [finding] = analyze_objects(dump, build_view(items)).findings
    assert finding.object.display() == "demo/Service/whoami-windows"
    assert "10.99.234.145:80/TCP" in finding.message and "win-a" in finding.message
    assert finding.severity == "error"


def test_deliberately_absent_load_balancers_are_not_missing() -> None:
    # win-a has no node-port or ingress load balancer for shop-local (externalTrafficPolicy Local, its only
    # endpoint is on win-b), none for scaled-to-zero (no endpoints) nor for iis-headless: no findings.
    from kubectl_win.hns.analyze import expected_load_balancers

    view = build_view(cluster_items())
    frontends = {(e.service.name, e.frontend()) for e in expected_load_balancers(view, "win-a")}
    assert ("shop-local", "10.100.10.30:80/TCP") in frontends
    assert not {f for f in frontends if f[0] in ("scaled-to-zero", "iis-headless")}
    assert ("shop-local", "node IP:31500/TCP") not in frontends
    assert ("shop-local", "node IP:31500/TCP") in {(e.service.name, e.frontend())
                                                  for e in expected_load_balancers(view, "win-b")}


@pytest.mark.parametrize("missing", ["networks", "endpoints", "policyLists", "namespaces", "version",
                                     "dynamicPortRange", "node"])
def test_any_key_may_be_missing(missing: str) -> None:
    dump = load("win-a-v1.json")
    del dump[missing]
    report = analyze_objects(dump, build_view(cluster_items()), node="win-a")
    # Without policyLists there is nothing to compare the Services with: nothing is invented either.
    assert [f.id for f in report.findings] == []
    assert missing not in report.to_dict()["hns"]["read"]


def test_single_objects_and_lower_case_keys_are_read() -> None:
    # ConvertTo-Json writes one result as an object, not an array; PowerShell keeps any case.
    dump = {"networks": {"id": "x", "name": "nat", "type": "nat"},
            "endpoints": {"ID": "E1", "IPAddress": "172.20.0.5", "IsRemoteEndpoint": "False", "State": "3"},
            "version": "9.5"}
    report = analyze_objects(dump, None)
    counts = report.to_dict()["hns"]["counts"]
    assert counts["networks"] == 1 and counts["localEndpoints"] == 1 and report.state.version == "9.5"
    assert report.findings == []


def test_v2_and_v1_of_the_same_load_balancer_count_once() -> None:
    dump = load("win-b-v2.json")
    v1 = load("win-a-v1.json")["policyLists"][0]
    v1["ID"] = dump["loadBalancers"][0]["ID"]
    dump["policyLists"] = [v1]
    report = analyze_objects(dump, build_view(cluster_items()))
    assert report.to_dict()["hns"]["counts"]["loadBalancers"] == len(dump["loadBalancers"])


def test_json_envelope_and_exit_codes(tmp_path: Path) -> None:
    dump, items = dict((s.name, s) for s in SCENARIOS)["missing load balancer"].build()
    (tmp_path / "hns.json").write_text(json.dumps(dump), encoding="utf-16")  # Windows PowerShell 5.1 redirection
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": items}))
    result = run_cli("--from-file", str(tmp_path / "hns.json"), "--cluster-from-dump", str(tmp_path / "cluster.json"),
                     "-o", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["schemaVersion"] == "kubectl-win/v1" and data["kind"] == "HnsReport"
    assert data["summary"]["errors"] == 1 and data["findings"][0]["id"] == "hns-missing-loadbalancer"
    assert data["hns"] == {"node": "win-a", "version": "13.2", "schemas": ["V1"],
                           "counts": {"networks": 1, "endpoints": 9, "localEndpoints": 4, "remoteEndpoints": 5,
                                      "loadBalancers": 6, "dsrLoadBalancers": 0, "nodePortLoadBalancers": 1,
                                      "namespaces": 3},
                           "read": ["dynamicPortRange", "endpoints", "namespaces", "networks", "node", "policyLists",
                                    "version"]}
    assert run_cli("--from-file", str(tmp_path / "hns.json"), "--cluster-from-dump", str(tmp_path / "cluster.json"),
                   "--fail-on", "never").returncode == 0
    as_yaml = yaml.safe_load(run_cli("--from-file", str(tmp_path / "hns.json"), "-o", "yaml").stdout)
    assert as_yaml["summary"]["comparedWith"] == [] and as_yaml["findings"] == []


def test_a_kube_proxy_sync_error_names_the_step_and_says_it_cannot_tell_why(tmp_path: Path) -> None:
    # The line names the sync step that failed, never why: hns says so, as doctor --deep and bundles do.
    dump, _ = dict((s.name, s) for s in SCENARIOS)["kube-proxy sync error"].build()
    (tmp_path / "hns.json").write_text(json.dumps(dump))
    result = run_cli("--from-file", str(tmp_path / "hns.json"), "-o", "json")
    assert result.returncode == 1, result.stderr
    [sync] = json.loads(result.stdout)["findings"]
    assert sync["id"] == "hns-kube-proxy-sync-error" and sync["confidence"] == "unsure"
    assert "does not say why" in sync["message"] and "ClusterIP policy creation failed" in sync["message"]


def test_table_and_wide_output() -> None:
    result = run_cli("--from-file", str(HNS_FIXTURES / "win-b-v2.json"), "--cluster-from-dump",
                     str(HNS_FIXTURES / "cluster.json"))
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == ("win-b: HNS 15.1 (V2): 1 network, 9 endpoints (3 local, 6 remote), "
                                             "9 load balancers (2 DSR, 2 node port)")
    assert "No problems found." in result.stdout


def test_doctor_dump_carries_what_hns_compares(tmp_path: Path) -> None:
    saved = tmp_path / "doctor.json"
    doctor = subprocess.run([sys.executable, "-m", "kubectl_win", "doctor", "--from-dump",
                             str(HNS_FIXTURES / "cluster.json"), "--save-dump", str(saved), "-o", "json"],
                            cwd=ROOT, capture_output=True, text=True)
    assert doctor.returncode in (0, 1), doctor.stderr
    assert "endpointslices" not in {s["resource"] for s in json.loads(doctor.stdout)["skipped"]}
    dump, _ = dict((s.name, s) for s in SCENARIOS)["missing load balancer"].build()
    (tmp_path / "hns.json").write_text(json.dumps(dump))
    result = run_cli("--from-file", str(tmp_path / "hns.json"), "--cluster-from-dump", str(saved), "-o", "json")
    ids = [f["id"] for f in json.loads(result.stdout)["findings"]]
    assert ids == ["hns-missing-loadbalancer"]
    healthy = run_cli("--from-file", str(HNS_FIXTURES / "win-b-v2.json"), "--cluster-from-dump", str(saved),
                      "-o", "json")
    assert json.loads(healthy.stdout)["findings"] == []


@pytest.mark.parametrize(("content", "message"), [
    (None, "HNS dump not found"),
    ("{not json", "not JSON at line 1"),
    ("[1, 2]", "the HNS dump is a list"),
    ('{"items": []}', "no HNS keys in the dump"),
])
def test_bad_input_is_one_line(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "hns.json"
    if content is not None:
        path.write_text(content)
    result = run_cli("--from-file", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    ((), "name a Windows node"),
    (("--from-file", "x.json", "--image", "foo"), "--image starts a pod"),
    (("node-1", "--cluster-from-dump", "c.json"), "--cluster-from-dump goes with --from-file"),
])
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2 and message in result.stderr


def test_shapes_seen_in_real_dumps() -> None:
    # Shapes from public issue pastes: an Azure CNI remote endpoint for a node IP (IsRemoteEndpoint true,
    # an L2Driver policy, Azure/AKS #1367), a Calico local endpoint that has no IsRemoteEndpoint field at all
    # (projectcalico/calico #4682), and a nat network whose extension names are localised (calico #8465).
    dump = {
        "networks": [{"ID": "55FEDB88-4B11-4DA4-8CD1-59970718A804", "Name": "nat", "Type": "nat", "Flags": 8,
                      "Extensions": [{"Id": "E7C3B2F0-F3C5-48DF-AF2B-10FED6D72E7A", "IsEnabled": False,
                                      "Name": "Microsoft Windows 篩選平台"}],
                      "Subnets": [{"AddressPrefix": "172.29.144.0/20", "GatewayAddress": "172.29.144.1",
                                   "IpSubnets": "System.Object[]"}]}],
        "endpoints": [
            {"ID": "2462B2D1-C402-4024-9C86-5A6903AF7759", "IPAddress": "10.240.0.11", "IsRemoteEndpoint": True,
             "MacAddress": "02-11-0a-f0-00-0b", "Name": "Ethernet", "Policies": [{"Type": "L2Driver"}],
             "Namespace": {"ID": "00000000-0000-0000-0000-000000000000"}, "PrefixLength": 16},
            {"ID": "89958F54-AEE8-4050-B1E1-CB12A86CE8BC", "IPAddress": "10.1.18.67", "EncapOverhead": 50,
             "Name": "0dd146321a68d26b_Calico", "State": 3,
             "Policies": [{"ExceptionList": ["10.152.183.0/24", "10.1.0.0/16"], "Type": "OutBoundNAT"},
                          {"DestinationPrefix": "10.152.183.0/24", "NeedEncap": True, "Type": "ROUTE"}]}],
    }
    report = analyze_objects(dump, None)
    counts = report.to_dict()["hns"]["counts"]
    assert (counts["localEndpoints"], counts["remoteEndpoints"]) == (1, 1)
    assert report.state.networks[0].subnets == ("172.29.144.0/20",) and report.findings == []


def test_a_dump_written_with_too_small_a_depth_is_refused_with_the_command_to_rerun(tmp_path: Path) -> None:
    dump = load("win-a-v1.json")
    dump["policyLists"][0]["Policies"][0]["VIPs"] = "System.Object[]"  # as in issue pastes: VIPs=System.Object[]
    path = tmp_path / "hns.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    result = run_cli("--from-file", str(path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "policyLists[0].Policies[0].VIPs reads 'System.Object[]'" in line
    assert "ConvertTo-Json -Depth 20" in line
    flattened = load("win-b-v2.json")
    flattened["endpoints"][0]["IpConfigurations"] = "@{IpAddress=10.244.2.5; PrefixLength=24}"
    with pytest.raises(InputError, match="endpoints.0..IpConfigurations"):
        parse_hns_text(json.dumps(flattened), "win-b.json")


def _missing_whoami(items: list[dict[str, Any]], now: datetime) -> list[Any]:
    dump = load("win-a-v1.json")
    dump["policyLists"] = [p for p in dump["policyLists"] if "10.99.234.145" not in p["Policies"][0]["VIPs"]]
    return [f for f in analyze(parse(dump), build_view(items), "win-a", now=now) if f.id == "hns-missing-loadbalancer"]


def test_a_missing_load_balancer_of_a_young_service_is_a_warning_that_kube_proxy_may_not_have_synced() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    items = cluster_items()
    service = next(i for i in items if i["kind"] == "Service" and i["metadata"]["name"] == "whoami-windows")
    service["metadata"]["creationTimestamp"] = "2026-12-01T11:59:40Z"
    [young] = _missing_whoami(items, now)
    assert young.severity == "warning"
    assert "created 20 s before this check" in young.message and "not have synced" in young.message
    service["metadata"]["creationTimestamp"] = "2026-11-20T08:00:00Z"
    [old] = _missing_whoami(items, now)
    assert old.severity == "error" and "synced" not in old.message


def test_a_missing_load_balancer_names_kube_proxy_restarts_and_a_fresh_start() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    items = cluster_items()
    proxy = next(i for i in items if i["kind"] == "Pod" and i["metadata"]["name"] == "kube-proxy-windows-win-a")
    proxy["status"]["containerStatuses"] = [{"name": "kube-proxy", "restartCount": 4, "state": {
        "running": {"startedAt": "2026-12-01T09:00:00Z"}}}]
    [restarted] = _missing_whoami(items, now)
    assert restarted.severity == "error"
    assert "has restarted 4 times" in restarted.message and "--previous" in restarted.message
    proxy["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = "2026-12-01T11:59:30Z"
    [fresh] = _missing_whoami(items, now)
    assert fresh.severity == "warning" and "started 30 s ago" in fresh.message
    items.remove(proxy)
    [alone] = _missing_whoami(items, now)
    assert "no kube-proxy pod runs on win-a" in alone.message
