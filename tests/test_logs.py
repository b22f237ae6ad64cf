"""kubectl win logs against the test API server's node proxy (the kubelet's /logs/ endpoint)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest

from kubectl_win.nodelogs import locations
from kubectl_win.nodelogs.filtering import filter_stream, parse_time, timestamp
from tests.apiserver.nodelogs import NodeLogs
from tests.clirun import CliResult, run_cli
from tests.hns_scenarios import cluster_items


def klog(level: str, ago: timedelta, text: str) -> str:
    t = datetime.now(UTC) - ago  # relative to when the test runs, not to when the module was imported
    return f"{level}{t:%m%d %H:%M:%S}.000000    4321 {text}"


def kubelet_log() -> str:
    return "\n".join([
        klog("I", timedelta(hours=3), "kubelet.go:1500] Started kubelet"),
        klog("E", timedelta(hours=2), 'pod_workers.go:1298] "Error syncing pod, skipping" err="old error"'),
        klog("I", timedelta(minutes=40), "kubelet_node_status.go:76] Attempting to register node"),
        klog("E", timedelta(minutes=30), 'remote_runtime.go:222] "RunPodSandbox from runtime service failed" '
                                         'err="hnsCall failed in Win32: The object already exists. (0x1392)"'),
        "    continuation of the message above",
        klog("W", timedelta(minutes=20), "warnings.go:70] something mild"),
        klog("E", timedelta(minutes=10), 'kuberuntime_manager.go:1166] "CreatePodSandbox failed" err="error 2"'),
    ]) + "\n"


def node_items(**node_meta) -> list[dict]:  # noqa: ANN003
    items = copy.deepcopy(cluster_items())
    for item in items:
        if item["kind"] == "Node" and item["metadata"]["name"] == "win-a":
            for key, value in node_meta.items():
                if key == "providerID":
                    item["spec"]["providerID"] = value
                else:
                    item["metadata"].setdefault(key, {}).update(value)
    return items


@pytest.fixture
def server(apiserver):  # noqa: ANN001, ANN201
    apiserver.put(*node_items())
    return apiserver


def logs(apiserver, *args: str) -> CliResult:  # noqa: ANN001
    result = run_cli("logs", *args, "--kubeconfig", str(apiserver.kubeconfig))
    return result


def test_kubelet_file_is_fetched_and_filtered_here(server) -> None:  # noqa: ANN001
    log = kubelet_log()
    node_logs = server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": log})
    result = logs(server, "win-a", "kubelet", "--since", "1h", "--pattern", "error|failed", "--tail", "2")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [log.splitlines()[3], log.splitlines()[6]]
    # The kubelet takes no options for files: one plain fetch of the file, filtered here.
    assert node_logs.requests == ["/api/v1/nodes/win-a/proxy/logs/kubelet/kubelet.err.log"]


def test_multi_line_entries_follow_their_timestamp(server) -> None:  # noqa: ANN001
    log = kubelet_log()
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": log})
    result = logs(server, "win-a", "kubelet", "--since", "35m", "--tail", "3")
    assert result.stdout.splitlines() == log.splitlines()[4:7]


def test_listing_where_each_component_logs(server) -> None:  # noqa: ANN001
    result = logs(server, "win-a")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "win-a: kubeadm (sig-windows-tools); the log API serves C:\\var\\log"
    assert any(ln.split()[:3] == ["kubelet", "log", "API"] and "C:\\var\\log\\kubelet\\kubelet.err.log" in ln
               for ln in lines)
    assert any(ln.startswith("hns") and " no " in ln for ln in lines)


def test_openshift_locations(apiserver) -> None:  # noqa: ANN001
    apiserver.put(*node_items(labels={"node.openshift.io/os_id": "Windows"}))
    apiserver.server.node_logs["win-a"] = NodeLogs(files={
        "kube-proxy/kube-proxy.log": klog("E", timedelta(minutes=5), '"ClusterIP policy creation failed"') + "\n"})
    result = logs(apiserver, "win-a", "kube-proxy")
    assert result.exit_code == 0 and "ClusterIP policy creation failed" in result.stdout


def test_aks_logs_are_out_of_reach_and_we_say_how_to_read_them(apiserver) -> None:  # noqa: ANN001
    apiserver.put(*node_items(labels={"kubernetes.azure.com/cluster": "MC_rg_aks_westeurope"}))
    result = logs(apiserver, "win-a", "kubelet")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "C:\\k\\kubelet.log" in result.stderr and "outside the kubelet's log directory" in result.stderr
    assert "Get-Content -Tail 200 'C:\\k\\kubelet.log'" in result.stderr
    spp = "TimeCreated Id\n1 2\n"
    apiserver.server.node_logs["win-a"] = NodeLogs(providers={"Microsoft-Windows-Security-SPP": spp})
    mixed = logs(apiserver, "win-a", "kubelet", "Microsoft-Windows-Security-SPP")
    assert mixed.exit_code == 0 and "note: kubelet on win-a logs to C:\\k\\kubelet.log" in mixed.stderr
    assert "==> Microsoft-Windows-Security-SPP:" in mixed.stdout and "1 2" in mixed.stdout


def test_a_component_no_known_location_has_falls_back_to_the_log_query_api(server) -> None:  # noqa: ANN001
    # kubelet.log at the top of C:\\var\\log: in no kubeadm location, but the kubelet resolves query=kubelet to it.
    log = kubelet_log()
    node_logs = server.server.node_logs["win-a"] = NodeLogs(files={"kubelet.log": log})
    result = logs(server, "win-a", "kubelet", "--pattern", "RunPodSandbox")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [log.splitlines()[3]]
    assert node_logs.requests[:3] == [f"/api/v1/nodes/win-a/proxy/logs/kubelet/{n}"
                                      for n in ("kubelet.err.log", "kubelet.log", "kubelet.out.log")]
    assert any("query=kubelet" in r for r in node_logs.requests[3:])
    # Nothing anywhere: the note names the places looked at, the query did not invent a log.
    server.server.node_logs["win-a"] = NodeLogs()
    missing = logs(server, "win-a", "kubelet")
    assert missing.exit_code == 2 and "no kubelet log found on win-a" in missing.stderr


def test_event_providers_go_to_the_query_api_with_options(server) -> None:  # noqa: ANN001
    text = "\n".join(f"2026-12-01 02:{m:02d}:00 1000 Information Event number {m}" for m in range(10))
    node_logs = server.server.node_logs["win-a"] = NodeLogs(providers={"Microsoft-Windows-Security-SPP": text})
    result = logs(server, "win-a", "Microsoft-Windows-Security-SPP", "--tail", "3", "--pattern", "number")
    assert result.exit_code == 0, result.stderr
    assert [ln.rsplit(" ", 1)[-1] for ln in result.stdout.splitlines()] == ["7", "8", "9"]
    [request] = node_logs.requests
    assert "query=Microsoft-Windows-Security-SPP" in request
    assert "tailLines=3" in request and "pattern=number" in request


def test_a_file_logger_with_options_is_fetched_whole_and_filtered_here(server) -> None:  # noqa: ANN001
    content = "\n".join([klog("I", timedelta(minutes=2), "csi-proxy started"), klog("E", timedelta(minutes=1), "oops")])
    node_logs = server.server.node_logs["win-a"] = NodeLogs(files={"csi-proxy.log": content})
    result = logs(server, "win-a", "csi-proxy", "--pattern", "oops")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [content.splitlines()[1]]
    assert len(node_logs.requests) == 3  # the file (404), the query with options, the query without


@pytest.mark.parametrize(("node_logs", "expected"), [
    (NodeLogs(query=False), "the node log query API is not enabled on win-a's kubelet"),
    (NodeLogs(handler=False), "has its log endpoint disabled (logs endpoint is disabled.)"),
    (NodeLogs(served=False), "does not serve the node log query API (404"),
])
def test_feature_not_enabled_says_which_kubelet_settings(server, node_logs: NodeLogs, expected: str) -> None:  # noqa: ANN001
    server.server.node_logs["win-a"] = node_logs
    result = logs(server, "win-a", "Microsoft-Windows-Security-SPP")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr and "enableSystemLogQuery: true" in result.stderr


def test_missing_nodes_proxy_permission(server) -> None:  # noqa: ANN001
    server.auth.deny("get", "nodes/proxy")
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": kubelet_log()})
    result = logs(server, "win-a", "kubelet")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1
    assert "needs get on nodes/proxy" in result.stderr


def test_a_linux_node(server) -> None:  # noqa: ANN001
    result = logs(server, "ctrl", "kubelet")
    assert result.exit_code == 2 and result.stderr.startswith("error: node ctrl runs linux; logs reads Windows nodes")


@pytest.mark.parametrize(("service", "expected"), [
    ("frobnicator", "unknown service 'frobnicator' on win-a: not an event provider in the Application log"),
    ("bad/name", "unknown service 'bad/name': a service is a component (kubelet, kube-proxy"),
])
def test_an_unknown_service(server, service: str, expected: str) -> None:  # noqa: ANN001
    server.server.node_logs["win-a"] = NodeLogs()
    result = logs(server, "win-a", service)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and expected in result.stderr


def test_kube_proxy_running_as_a_pod_is_read_from_its_pod(server) -> None:  # noqa: ANN001
    line = klog("E", timedelta(minutes=3), '"Policy creation failed" err="hcnCreateLoadBalancer failed (0x803b0013)"')
    server.put({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "namespace": "kube-system", "name": "kube-proxy-windows-7xk2p",
        "annotations": {"test.kubectl-win.io/log": "I1201 started\n" + line + "\n"}},
        "spec": {"nodeName": "win-a", "containers": [{"name": "kube-proxy", "image": "x"}]}})
    result = logs(server, "win-a", "kube-proxy", "--pattern", "failed")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [line]


# -- local filtering ----------------------------------------------------------------------------------------
def test_timestamps_of_windows_node_components() -> None:
    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    assert timestamp("E1201 02:10:31.511870    4321 proxier.go:1375] x", now) == datetime(2026, 12, 1, 2, 10, 31,
                                                                                              tzinfo=UTC)
    assert timestamp("E1231 23:59:59.000000 x", now).year == 2025  # klog has no year: the closest one
    assert timestamp('time="2026-11-30T23:00:00.123Z" level=error msg=x', now) == datetime(2026, 11, 30, 23,
                                                                                            tzinfo=UTC)
    assert timestamp("2026-12-01T04:00:00+02:00 x", now) == datetime(2026, 12, 1, 2, tzinfo=UTC)
    assert timestamp("12/1/2026 2:05:00 AM  7031 Error", now) == datetime(2026, 12, 1, 2, 5, tzinfo=UTC)
    assert timestamp("    at goroutine 1", now) is None


def test_filtering_and_since() -> None:
    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    text = "I1201 01:00:00.0 a\nE1201 02:30:00.0 b\n  more b\nI1201 02:50:00.0 c\n"
    lines = text.splitlines()
    assert list(filter_stream(lines, since=parse_time("1h", now=now), now=now)) == [
        "E1201 02:30:00.0 b", "  more b", "I1201 02:50:00.0 c"]
    assert list(filter_stream(lines, until=parse_time("20m", now=now), now=now)) == [
        "I1201 01:00:00.0 a", "E1201 02:30:00.0 b", "  more b"]
    assert list(filter_stream(lines, tail=0, now=now)) == []
    assert list(filter_stream(["  before any timestamp", *lines], until=now, tail=2, now=now)) == lines[2:]
    assert parse_time("1h30m", now=now) == now - timedelta(hours=1, minutes=30)
    assert parse_time("2026-12-01T00:00:00Z", now=now) == datetime(2026, 12, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="--until 'yesterday': expected a duration"):
        parse_time("yesterday", "--until", now)


def test_every_distribution_knows_every_component_and_cites_sources() -> None:
    for entry in locations.data()["distributions"]:
        assert set(entry["logs"]) == set(locations.components()), entry["id"]
        assert entry["sources"] and entry["since"], entry["id"]
    assert {d.id for d in locations.distributions()} == {"kubeadm", "aks", "eks", "openshift", "rke2"}
