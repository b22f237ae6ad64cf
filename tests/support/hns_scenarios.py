"""One scenario per known HNS failure pattern, built on the healthy fixtures in tests/fixtures/hns/.

The healthy cluster (cluster.json) is a flannel-style overlay with a Linux control-plane node and two
Windows Server 2022 nodes: win-a dumped with the inbox V1 cmdlets (win-a-v1.json), win-b with hns.v2.psm1
(win-b-v2.json). Its Services cover the cases kube-proxy deliberately programs no load balancer for
(headless, no endpoints, externalTrafficPolicy Local without a local endpoint on win-a).

Each scenario returns (hns dump, cluster objects, node) and names the finding ids it must produce,
no more: the same check must stay silent on the healthy node.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.paths import FIXTURES

HNS_FIXTURES = FIXTURES / "hns"


def load(name: str) -> Any:
    return json.loads((HNS_FIXTURES / name).read_text(encoding="utf-8"))


def cluster_items() -> list[dict[str, Any]]:
    return load("cluster.json")["items"]


@dataclass(frozen=True)
class Scenario:
    name: str
    pattern: int
    expected: frozenset[str]
    build: Callable[[], tuple[dict[str, Any], list[dict[str, Any]] | None]]


def _v1() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return load("win-a-v1.json"), cluster_items()


def _v2() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return load("win-b-v2.json"), cluster_items()


def _endpoint_id(dump: dict[str, Any], ip: str) -> str:
    for endpoint in dump["endpoints"]:
        if endpoint.get("IPAddress") == ip or any(c["IpAddress"] == ip for c in endpoint.get("IpConfigurations", ())):
            return endpoint["ID"]
    raise KeyError(ip)


def _v1_remote(dump: dict[str, Any], ip: str, provider: str, guid: str) -> None:
    endpoint = copy.deepcopy(next(e for e in dump["endpoints"] if e["IsRemoteEndpoint"]))
    endpoint.update(ID=guid, IPAddress=ip, Policies=[{"Type": "PA", "PA": provider}])
    dump["endpoints"].append(endpoint)


def _v1_lb(dump: dict[str, Any], vip: str) -> dict[str, Any]:
    return next(p for p in dump["policyLists"] if vip in p["Policies"][0]["VIPs"])


def _slice(items: list[dict[str, Any]], service: str) -> dict[str, Any]:
    return next(i for i in items if i["kind"] == "EndpointSlice"
                and i["metadata"]["labels"]["kubernetes.io/service-name"] == service)


# -- the scenarios ---------------------------------------------------------------------------------------
def stale_remote_endpoint():  # 1
    dump, items = _v1()
    _v1_remote(dump, "10.244.2.50", "10.0.0.22", "0000DEAD-0000-4000-8000-000000000001")
    return dump, items


def stale_remote_endpoint_without_slices():  # 1, judged against pods and nodes only (k8s #68511: IP reuse)
    dump, items = _v1()
    _v1_remote(dump, "10.244.2.51", "10.0.0.22", "0000DEAD-0000-4000-8000-000000000011")
    return dump, [i for i in items if i["kind"] in ("Pod", "Node")]


def remote_endpoint_of_a_service_not_in_the_dump():  # 1, the exclusion: unknown, not stale and not clean
    dump, items = _v1()
    _v1_remote(dump, "10.244.2.52", "10.0.0.22", "0000DEAD-0000-4000-8000-000000000012")
    lb = copy.deepcopy(_v1_lb(dump, "10.99.234.145"))
    lb["ID"] = "0000DEAD-0000-4000-8000-000000000013"
    lb["Policies"][0].update(VIPs=["10.100.77.7"])
    lb["References"] = ["/endpoints/0000DEAD-0000-4000-8000-000000000012"]
    dump["policyLists"].append(lb)
    items = [i for i in items if i["kind"] != "EndpointSlice"]  # a dump of some namespaces: pods, nodes, Services
    return dump, items


def duplicate_ip():  # 2
    dump, items = _v1()
    _v1_remote(dump, "10.244.1.5", "10.0.0.22", "0000DEAD-0000-4000-8000-000000000002")
    return dump, items


def leaked_local_endpoint():  # 3
    dump, items = _v1()
    endpoint = copy.deepcopy(dump["endpoints"][0])
    endpoint.update(ID="0000DEAD-0000-4000-8000-000000000003", IPAddress="10.244.1.77", Name="leaked_1a2b3")
    dump["endpoints"].append(endpoint)
    return dump, items


def missing_load_balancer():  # 4
    dump, items = _v1()
    dump["policyLists"].remove(_v1_lb(dump, "10.99.234.145"))
    return dump, items


def no_load_balancer_at_all():  # 4 and 10 (k8s #110674: kube-proxy never recreated what was deleted)
    dump, items = _v1()
    dump["policyLists"] = None  # ConvertTo-Json of no policy lists at all
    return dump, items


def missing_on_purpose_all_terminating():  # 4, the exclusion: kube-proxy deliberately creates none
    dump, items = _v1()
    dump["policyLists"].remove(_v1_lb(dump, "10.99.234.145"))
    for endpoint in _slice(items, "whoami-windows")["endpoints"]:
        endpoint["conditions"] = {"ready": False, "serving": True, "terminating": True}
    return dump, items


def stale_load_balancer_gone_endpoint():  # 5
    dump, items = _v2()
    lb = next(lb for lb in dump["loadBalancers"] if lb["FrontendVIPs"] == ["10.99.234.145"])
    lb["HostComputeEndpoints"][0] = "0000DEAD-0000-4000-8000-000000000005"
    return dump, items


def stale_load_balancer_new_endpoint():  # 5
    dump, items = _v2()
    _slice(items, "whoami-windows")["endpoints"].append(
        {"addresses": ["10.244.1.9"], "conditions": {"ready": True}, "nodeName": "win-a"})
    return dump, items


def duplicate_load_balancer():  # 6
    dump, items = _v1()
    extra = copy.deepcopy(_v1_lb(dump, "10.96.0.10"))
    extra["ID"] = "0000DEAD-0000-4000-8000-000000000006"
    dump["policyLists"].append(extra)
    return dump, items


def orphan_load_balancer():  # 6
    dump, items = _v2()
    extra = copy.deepcopy(dump["loadBalancers"][0])
    extra.update(ID="0000DEAD-0000-4000-8000-000000000016", FrontendVIPs=["10.100.99.99"])
    dump["loadBalancers"].append(extra)
    return dump, items


def ephemeral_ports_warning():  # 7
    dump, items = _v1()
    dump["dynamicPortRange"] = {"StartPort": 64896, "NumberOfPorts": 640}  # 7 pools of 64 = 70 %
    return dump, items


def ephemeral_ports_exhausted():  # 7
    dump, items = _v1()
    dump["dynamicPortRange"] = {"StartPort": 65056, "NumberOfPorts": 480}
    return dump, items


def too_many_backends():  # 8
    dump, items = _v1()
    addresses = [f"10.245.{i // 250}.{i % 250 + 1}" for i in range(1100)]
    items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "big", "name": "fanout"},
                  "spec": {"clusterIP": "10.100.20.1", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}})
    items.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                  "metadata": {"namespace": "big", "name": "fanout-1",
                               "labels": {"kubernetes.io/service-name": "fanout"}},
                  "ports": [{"port": 80, "protocol": "TCP"}],
                  "endpoints": [{"addresses": [ip], "conditions": {"ready": True}, "nodeName": "ctrl"}
                                for ip in addresses]})
    references = []
    for index, ip in enumerate(addresses):
        guid = f"0000BEEF-0000-4000-8000-{index:012d}"
        _v1_remote(dump, ip, "10.0.0.10", guid)
        references.append(f"/endpoints/{guid}")
    lb = copy.deepcopy(_v1_lb(dump, "10.99.234.145"))
    lb["ID"] = "0000DEAD-0000-4000-8000-000000000008"
    lb["Policies"][0].update(VIPs=["10.100.20.1"], InternalPort=80)
    lb["References"] = references
    dump["policyLists"].append(lb)
    return dump, items


def kube_proxy_sync_error():  # 9
    dump, items = _v1()
    dump["kubeProxyLog"] = (
        'I1201 02:10:01.000000    4321 proxier.go:1121] "Syncing proxy rules complete" elapsed="1.2s"\n'
        'E1201 02:10:31.511870    4321 proxier.go:1375] "ClusterIP policy creation failed" '
        'err="hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013)"\n')
    return dump, items


def load_balancers_collapsed():  # 10
    dump, items = _v1()
    dump["policyLists"] = dump["policyLists"][:1]
    return dump, items


def scale():  # 10: sync cost, compared with nothing else
    dump, _ = _v1()
    for index in range(3000):
        _v1_remote(dump, f"10.246.{index // 250}.{index % 250 + 1}", "10.0.0.10",
                   f"0000CAFE-0000-4000-8000-{index:012d}")
    return dump, None


def dsr_mixed():  # 11
    dump, items = _v2()
    for lb in dump["loadBalancers"][:2]:
        lb["Flags"] = 1
    return dump, items


def dsr_local_policy_without_dsr():  # 11
    dump, items = _v2()
    for lb in dump["loadBalancers"]:
        lb["Flags"] = 0
    return dump, items


def source_vip_missing():  # 12
    dump, items = _v1()
    dump["endpoints"] = [e for e in dump["endpoints"] if e["Name"] != "source_vip"]
    return dump, items


def source_vip_is_a_pod_ip():  # 12
    dump, items = _v2()
    pod = next(i for i in items if i["kind"] == "Pod" and i["metadata"]["name"].startswith("shop-local"))
    pod["status"]["podIP"] = "10.244.2.254"
    pod["status"]["podIPs"] = [{"ip": "10.244.2.254"}]
    _slice(items, "shop-local")["endpoints"][0]["addresses"] = ["10.244.2.254"]
    endpoint = next(e for e in dump["endpoints"] if e["IpConfigurations"][0]["IpAddress"] == "10.244.2.9")
    endpoint["IpConfigurations"][0]["IpAddress"] = "10.244.2.254"
    for lb in dump["loadBalancers"]:
        if "20.1.2.3" in lb["FrontendVIPs"] or "10.100.10.30" in lb["FrontendVIPs"] or not lb["FrontendVIPs"] and \
                lb["PortMappings"][0]["ExternalPort"] == 31500:
            lb["HostComputeEndpoints"] = [_endpoint_id(dump, "10.244.2.254")]
    return dump, items


def overlay_route_missing():  # 13
    dump, items = _v2()
    network = dump["networks"][0]
    network["Policies"] = [p for p in network["Policies"]
                           if p["Settings"].get("DestinationPrefix") != "10.244.1.0/24"]
    return dump, items


def endpoint_unhealthy():  # 14
    dump, items = _v1()
    dump["endpoints"][0]["State"] = 5
    return dump, items


def load_balancer_unhealthy():  # 14
    dump, items = _v1()
    _v1_lb(dump, "10.96.0.1")["State"] = 1
    return dump, items


def management_ip_apipa():  # 14
    dump, items = _v1()
    dump["networks"]["ManagementIP"] = "169.254.17.3"
    return dump, items


def hns_crashed():  # 15
    dump, items = _v1()
    dump["events"] = [{"TimeCreated": "2026-12-01T01:58:12Z", "ProviderName": "Service Control Manager", "Id": 7031,
                       "LevelDisplayName": "Error",
                       "Message": "The Host Network Service service terminated unexpectedly.  "
                                  "It has done this 1 time(s)."}]
    return dump, items


SCENARIOS = (
    Scenario("stale remote endpoint", 1, frozenset({"hns-stale-remote-endpoint"}), stale_remote_endpoint),
    Scenario("stale remote endpoint, cluster dump without EndpointSlices", 1,
             frozenset({"hns-stale-remote-endpoint"}), stale_remote_endpoint_without_slices),
    Scenario("remote endpoint of a Service the dump does not hold", 1, frozenset({"hns-remote-endpoint-unknown"}),
             remote_endpoint_of_a_service_not_in_the_dump),
    Scenario("local and remote endpoint share an IP", 2, frozenset({"hns-duplicate-endpoint-ip"}), duplicate_ip),
    Scenario("leaked local endpoint", 3, frozenset({"hns-leaked-local-endpoint"}), leaked_local_endpoint),
    Scenario("missing load balancer", 4, frozenset({"hns-missing-loadbalancer"}), missing_load_balancer),
    Scenario("no load balancer at all on the node", 4,
             frozenset({"hns-missing-loadbalancer", "hns-loadbalancers-collapsed"}), no_load_balancer_at_all),
    Scenario("no load balancer when every endpoint terminates", 4, frozenset(), missing_on_purpose_all_terminating),
    Scenario("load balancer references a deleted endpoint", 5, frozenset({"hns-stale-loadbalancer"}),
             stale_load_balancer_gone_endpoint),
    Scenario("load balancer misses a new endpoint", 5, frozenset({"hns-stale-loadbalancer"}),
             stale_load_balancer_new_endpoint),
    Scenario("two load balancers for one VIP and port", 6, frozenset({"hns-duplicate-loadbalancer"}),
             duplicate_load_balancer),
    Scenario("orphan load balancer", 6, frozenset({"hns-orphan-loadbalancer"}), orphan_load_balancer),
    Scenario("ephemeral ports running low", 7, frozenset({"hns-ephemeral-port-exhaustion"}), ephemeral_ports_warning),
    Scenario("ephemeral ports used up", 7, frozenset({"hns-ephemeral-port-exhaustion"}), ephemeral_ports_exhausted),
    Scenario("too many backends", 8, frozenset({"hns-too-many-backends"}), too_many_backends),
    Scenario("kube-proxy sync error", 9, frozenset({"hns-kube-proxy-sync-error"}), kube_proxy_sync_error),
    Scenario("load balancers collapsed", 10, frozenset({"hns-loadbalancers-collapsed", "hns-missing-loadbalancer"}),
             load_balancers_collapsed),
    Scenario("sync cost at scale", 10, frozenset({"hns-scale"}), scale),
    Scenario("DSR on some cluster-IP load balancers only", 11, frozenset({"hns-dsr-inconsistent"}), dsr_mixed),
    Scenario("Local traffic policy without DSR", 11, frozenset({"hns-dsr-inconsistent"}), dsr_local_policy_without_dsr),
    Scenario("source VIP endpoint missing", 12, frozenset({"hns-overlay-source-vip"}), source_vip_missing),
    Scenario("source VIP handed to a pod", 12, frozenset({"hns-overlay-source-vip"}), source_vip_is_a_pod_ip),
    Scenario("overlay route to a node missing", 13, frozenset({"hns-overlay-route-missing"}), overlay_route_missing),
    Scenario("endpoint degraded", 14, frozenset({"hns-endpoint-unhealthy"}), endpoint_unhealthy),
    Scenario("load balancer not applied", 14, frozenset({"hns-loadbalancer-unhealthy"}), load_balancer_unhealthy),
    Scenario("APIPA management IP", 14, frozenset({"hns-management-ip-apipa"}), management_ip_apipa),
    Scenario("HNS crashed", 15, frozenset({"hns-service-crashed"}), hns_crashed),
)
