"""kubectl win logs against the test API server's node proxy (the kubelet's /logs/ endpoint)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest

from kubectl_win.nodelogs import locations
from kubectl_win.nodelogs.filtering import filter_stream, parse_time, timestamp
from tests.apiserver.nodelogs import NodeLogs
from tests.support.cli import CliResult, run_cli
from tests.support.hns_scenarios import cluster_items
from tests.support.paths import DOCS


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


def test_analyse_reads_the_failures_as_doctor_does(server) -> None:  # noqa: ANN001
    mount = ('operation_generator.go:1500] "MountVolume.SetUp failed for volume \\"logs\\" : mklink '
             'C:\\\\var\\\\lib\\\\kubelet\\\\pods\\\\x: The filename or extension is too long."')
    log = kubelet_log() + klog("E", timedelta(minutes=5), mount) + "\n"
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": log})
    result = logs(server, "win-a", "kubelet", "--since", "1h", "--analyse")
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "ERRORS (1)" and "WARNINGS (2)" in lines
    assert any(line.startswith("symptom-hns-failure ") and "(on win-a, in the lines read)" in line for line in lines)
    # "CreatePodSandbox failed: error 2" names the operation and nothing else: doctor says it cannot tell more.
    assert any(line.startswith("windows-failure ") and " unsure " in line and "create the pod sandbox" in line
               and "the message does not say why" in line for line in lines)
    [volume] = [line for line in lines if line.startswith("windows-volume-failure ")]
    assert "kubelet log: volume: the kubelet could not mount the volume on win-a (in the lines read): the " \
           "volume's path under the kubelet's directory" in volume
    assert "      kubectl win logs win-a csi-proxy --since 1h" in lines
    assert "old error" not in result.stdout  # two hours ago: outside --since
    quiet = logs(server, "win-a", "kubelet", "--since", "1h", "--pattern", "register", "--analyse")
    assert (quiet.exit_code, quiet.stdout) == (0, "win-a: no failures in the kubelet log lines read\n")


def test_analyse_reads_a_line_with_the_nodes_versions_as_doctor_does(apiserver) -> None:  # noqa: ANN001
    """A known bug of the kubelet version the node runs: the cause from logs --analyse, as from doctor."""
    bind = ('server.go:42] "Failed to listen" err="listen unix C:\\var\\lib\\kubelet\\device-plugins\\'
            'kubelet.sock: bind: Only one usage of each socket address (protocol/network address/port) is normally '
            'permitted."')
    items = node_items()
    for item in items:
        if item["kind"] == "Node" and item["metadata"]["name"] == "win-a":
            item["status"].setdefault("nodeInfo", {})["kubeletVersion"] = "v1.31.0"
    apiserver.put(*items)
    apiserver.server.node_logs["win-a"] = NodeLogs(
        files={"kubelet/kubelet.err.log": klog("E", timedelta(minutes=5), bind) + "\n"})
    result = logs(apiserver, "win-a", "kubelet", "--since", "1h", "--analyse")
    assert "a known bug (win-a runs kubernetes v1.31.0)" in result.stdout, result.stdout + result.stderr
    assert " cause " in result.stdout
    # Allowed to read logs but not to list pods: the text's own reading, with the version to look for.
    apiserver.auth.deny("list", "pods")
    limited = logs(apiserver, "win-a", "kubelet", "--since", "1h", "--analyse")
    assert limited.exit_code == 1 and "Traceback" not in limited.stderr, limited.stderr
    assert "a known bug (win-a runs" not in limited.stdout and "If the node runs an affected kubernetes" in \
        limited.stdout.replace("\n      ", " ")


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


# -- options the kubelet refuses for a log it serves from a file (issue #27) ------------------------------------
REFUSED = ("options present and query resolved to log files for [kubelet] try without specifying options")
FILE_LOG_NOTE = ("it serves that log from a file and applies no options to files")


def kubelet_log_the_query_finds(server):  # noqa: ANN001, ANN201
    """C:\\var\\log\\kubelet.log: no known kubeadm location, but query=kubelet resolves to it (a file logger)."""
    log = kubelet_log()
    return log, server.server.node_logs.setdefault("win-a", NodeLogs(files={"kubelet.log": log}))


@pytest.mark.parametrize(("option", "kept"), [
    (["--tail", "2"], slice(5, 7)),
    (["--since", "35m"], slice(3, 7)),  # the continuation line goes with the entry before it
    (["--until", "25m"], slice(0, 5)),
    (["--grep", "sandbox"], [3, 6]),
])
def test_each_option_the_kubelet_refuses_for_a_file_is_applied_here(server, option: list[str], kept) -> None:  # noqa: ANN001
    log, node_logs = kubelet_log_the_query_finds(server)
    lines = log.splitlines()
    expected = lines[kept] if isinstance(kept, slice) else [lines[i] for i in kept]
    result = logs(server, "win-a", "kubelet", *option, "-v")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == expected
    # Said once, with why: the kubelet's own answer.
    assert result.stderr == (f"note: kubelet: {option[0].replace('--grep', '--pattern')} applied here: the kubelet "
                             f'on win-a refused the query options: {FILE_LOG_NOTE} ("{REFUSED}")\n')
    option_name = {"--tail": "tailLines=", "--since": "sinceTime=", "--until": "untilTime=", "--grep": "pattern="}
    with_option, without = node_logs.requests[3:]
    assert "query=kubelet" in with_option and option_name[option[0]] in with_option
    assert without == "/api/v1/nodes/win-a/proxy/logs/?query=kubelet"
    # Without -v the same lines, and nothing on stderr.
    quiet = logs(server, "win-a", "kubelet", *option)
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, result.stdout, "")


def test_the_four_options_together_on_a_file(server) -> None:  # noqa: ANN001
    log, _ = kubelet_log_the_query_finds(server)
    result = logs(server, "win-a", "kubelet", "--since", "45m", "--until", "5m", "--grep", "error|fail", "--tail", "1",
                  "-v")
    assert result.exit_code == 0 and result.stdout.splitlines() == [log.splitlines()[6]]
    assert result.stderr.startswith("note: kubelet: --since, --until, --pattern, --tail applied here: the kubelet on "
                                    "win-a refused the query options") and result.stderr.count("\n") == 1


def test_a_pattern_the_kubelet_rejects_is_applied_here_not_reported_as_no_log(server) -> None:  # noqa: ANN001
    """Go's regexp has no lookahead: the kubelet answers 406 to the pattern (validate), before looking for the
    log. That refusal is about the option, not a missing log."""
    log, node_logs = kubelet_log_the_query_finds(server)
    result = logs(server, "win-a", "kubelet", "--grep", "(?=.*Sandbox).*failed", "-v")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [log.splitlines()[3], log.splitlines()[6]]
    assert result.stderr == ('note: kubelet: --pattern applied here: the kubelet on win-a refused the query options: '
                             'it answered 406 ("pattern: Invalid value: "(?=.*Sandbox).*failed": error parsing regexp: '
                             'invalid or unsupported Perl syntax: `(?=`")\n')
    assert node_logs.requests[-1] == "/api/v1/nodes/win-a/proxy/logs/?query=kubelet"


def test_a_400_refusing_the_options_is_not_no_log_found(server) -> None:  # noqa: ANN001
    """Whatever the words of a 400 or 406 to a query with options, the query is asked again without them."""
    log, _ = kubelet_log_the_query_finds(server)
    server.faults.status(r"query=kubelet&tailLines=", 400, message="options are not supported for file-based logs")
    result = logs(server, "win-a", "kubelet", "--tail", "5", "-v")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == log.splitlines()[-5:]
    assert result.stderr == ('note: kubelet: --tail applied here: the kubelet on win-a refused the query options: it '
                             'answered 400 ("options are not supported for file-based logs")\n')


def test_no_log_found_only_when_no_candidate_exists(server) -> None:  # noqa: ANN001
    server.server.node_logs["win-a"] = NodeLogs(files={"kube-proxy/kube-proxy.log": "I1201 x\n"})
    missing = logs(server, "win-a", "kubelet", "--tail", "5")
    assert missing.exit_code == 2 and missing.stderr == (
        "error: no kubelet log found on win-a (kubeadm (sig-windows-tools): looked for "
        "C:\\var\\log\\kubelet\\kubelet.err.log or C:\\var\\log\\kubelet\\kubelet.log or "
        "C:\\var\\log\\kubelet\\kubelet.out.log)\n")
    # A query refused even without options is that refusal, not "no log found".
    server.faults.status(r"query=kubelet", 400, message="the node proxy refused it")
    refused = logs(server, "win-a", "kubelet", "--tail", "5")
    assert refused.exit_code == 2 and refused.stderr == (
        "error: the kubelet on win-a refused the log query for kubelet, also without options: the node proxy "
        "refused it\n")


def test_an_event_provider_gets_the_four_options_from_the_kubelet(server) -> None:  # noqa: ANN001
    text = "\n".join(f"2026-12-01 02:{m:02d}:00 1000 Information Event number {m}" for m in range(10))
    node_logs = server.server.node_logs["win-a"] = NodeLogs(providers={"Microsoft-Windows-Security-SPP": text})
    result = logs(server, "win-a", "Microsoft-Windows-Security-SPP", "--since", "2026-12-01T02:02:00Z",
                  "--until", "2026-12-01T02:08:00Z", "--tail", "4", "--grep", "number [4-9]", "-v")
    assert result.exit_code == 0, result.stderr
    # -MaxEvents 4 of 02:02..02:08 (5..8), then the pattern: what the kubelet answered, printed as it is.
    assert [ln.rsplit(" ", 1)[-1] for ln in result.stdout.splitlines()] == ["5", "6", "7", "8"]
    assert result.stderr == ""  # nothing was filtered here
    [request] = node_logs.requests
    for option in ("sinceTime=2026-12-01T02%3A02%3A00Z", "untilTime=2026-12-01T02%3A08%3A00Z", "tailLines=4",
                   "pattern=number+%5B4-9%5D"):
        assert option in request


def test_a_file_known_by_its_location_says_why_with_v(server) -> None:  # noqa: ANN001
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": kubelet_log()})
    result = logs(server, "win-a", "kubelet", "--tail", "1", "-v")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1
    assert result.stderr == ("note: kubelet: --tail applied here: C:\\var\\log\\kubelet\\kubelet.err.log is read as a "
                             "file, and the kubelet takes no options for files\n")


def test_a_big_log_is_streamed_and_only_the_tail_is_held(server) -> None:  # noqa: ANN001
    """A 30 MB log of CRLF lines through the query fallback takes no more of the client's memory than a
    short one: the body is read as it arrives and --tail keeps only the last lines."""
    import tracemalloc

    line = (klog("I", timedelta(minutes=30), "kubelet_pods.go:1 ") + "x" * 90 + "\r\n").encode()
    block = line * 460  # about 64 KiB

    def log_of(blocks: int):  # noqa: ANN202
        def chunks():  # noqa: ANN202
            yield from (block for _ in range(blocks))
            yield klog("E", timedelta(minutes=1), "the last line").encode() + b"\r\n"
        return chunks

    def peak_reading(blocks: int) -> tuple[int, list[str]]:
        server.server.node_logs["win-a"] = NodeLogs(files={"kubelet.log": log_of(blocks)})
        tracemalloc.start()
        try:
            result = logs(server, "win-a", "kubelet", "--tail", "3")
            return tracemalloc.get_traced_memory()[1], result.stdout.splitlines()
        finally:
            tracemalloc.stop()

    peak_reading(1)  # imports and first-use caches
    short_peak, _ = peak_reading(1)
    big_peak, out = peak_reading(460)
    assert len(out) == 3 and out[-1].endswith("the last line") and not any("\r" in ln for ln in out)
    assert big_peak < short_peak + 4 * 1024 * 1024, (short_peak, big_peak, f"a {len(block) * 460} byte log")


def test_a_busy_proxy_is_asked_again_before_the_log_streams(server) -> None:  # noqa: ANN001
    log = kubelet_log()
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": log})
    busy = server.faults.status(r"kubelet\.err\.log", 503, count=2)
    result = logs(server, "win-a", "kubelet", "--tail", "1")
    assert (result.exit_code, result.stdout.splitlines(), busy.hits) == (0, log.splitlines()[-1:], 2)


def test_a_connection_dropped_while_reading_is_one_line(server) -> None:  # noqa: ANN001
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": kubelet_log() * 50})
    server.faults.truncate(r"kubelet\.err\.log")
    result = logs(server, "win-a", "kubelet")
    assert result.exit_code == 3 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: the connection to https://127.0.0.1:") and "dropped while reading" in \
        result.stderr


@pytest.mark.parametrize(("args", "expected"), [
    (["--since", "1h", "--until", "2h"], "error: --since (20"),
    (["--until", "yesterday"], "error: --until 'yesterday': expected a duration (30m, 1h, 2d) or an RFC 3339 time"),
    (["--tail", "-1"], "--tail"),
])
def test_bad_time_and_count_options(server, args: list[str], expected: str) -> None:  # noqa: ANN001
    result = logs(server, "win-a", "kubelet", *args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


# -- docs/hns-and-logs.md -------------------------------------------------------------------------------------
DOCS_KUBELET_LOG = """\
I1201 02:10:31.511870    4321 server.go:1290] "Started kubelet"
I1201 02:10:32.006153    4321 kubelet_node_status.go:76] "Attempting to register node" node="win-node-1"
E1201 02:40:11.208311    4321 remote_runtime.go:222] "RunPodSandbox from runtime service failed" err="rpc error: \
code = Unknown desc = failed to setup network for sandbox: hnsCall failed in Win32: The object already exists. (0x1392)"
E1201 02:40:11.208410    4321 kuberuntime_manager.go:1166] "CreatePodSandbox for pod failed" pod="web/iis-6c9f7-x2bq4"
I1201 02:41:02.731002    4321 kubelet.go:2450] "SyncLoop (PLEG): event for pod" pod="web/iis-6c9f7-x2bq4"
"""


def docs_cluster(server) -> None:  # noqa: ANN001
    """The node the logs examples of docs/hns-and-logs.md read: a kubeadm node whose kubelet logs to
    C:\\var\\log\\kubelet.log, a file the kubelet's query resolves by name."""
    server.put({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "win-node-1", "labels": {"kubernetes.io/os": "windows"},
        "annotations": {"kubeadm.alpha.kubernetes.io/cri-socket": "npipe:////./pipe/containerd-containerd"}},
        "status": {"nodeInfo": {"operatingSystem": "windows", "kubeletVersion": "v1.37.2"}}})
    server.server.node_logs["win-node-1"] = NodeLogs(
        files={"kubelet.log": DOCS_KUBELET_LOG.replace("\n", "\r\n")},
        providers={"Microsoft-Windows-Security-SPP": "2026-12-01 02:05:00 16384 Information Successfully scheduled "
                                                     "Software Protection service for re-start"})


def test_the_docs_show_what_logs_prints(server) -> None:  # noqa: ANN001
    """Each `$ kubectl win logs ...` example that shows output prints it (stderr, then stdout, as a terminal
    shows them), compared as the README's examples are (tests/support/readme_examples.py)."""
    import shlex

    from tests.support.readme_examples import console_examples, differences

    text = (DOCS / "hns-and-logs.md").read_text(encoding="utf-8")
    checked = console_examples(text[text.index("# `kubectl win logs`"):])
    assert len(checked) >= 4
    docs_cluster(server)
    for example in checked:
        argv = shlex.split(example.command.split("  #")[0])
        assert argv[:3] == ["kubectl", "win", "logs"], example.command
        result = logs(server, *argv[3:])
        real = (result.stderr + result.stdout).splitlines()
        assert differences(example.output, real) == [], (example.command, real)


# -- the test kubelet answers as kubelet v1.37.2 does (kubelet.go Run, kubelet_server_journal.go) -----------------
@pytest.mark.parametrize(("query", "status", "body"), [
    ("?query=kubelet&tailLines=5", 200,
     "\noptions present and query resolved to log files for [kubelet]\ntry without specifying options\n"),
    ("?query=kubelet", 200, "I1201 02:00:00.000000 1 started\n"),
    ("?query=nothing", 200, "\nlog not found for nothing\n"),
    ("?query=/kubelet.log&tailLines=5", 406, 'query: Invalid value: ["/kubelet.log"]: cannot specify file with '
                                             "options\n"),
    ("?query=/kubelet.log&query=/x.log", 406, 'query: Invalid value: ["/kubelet.log","/x.log"]: cannot specify more '
                                             "than one file\n"),
    ("?query=/kubelet.log&query=kubelet", 406, 'query: Invalid value: "[/kubelet.log], [kubelet]": cannot specify a '
                                              "file and service\n"),
    ("?query=a&query=b&query=c&query=d&query=e", 406, "query: Too many: 5: must have at most 4 items\n"),
    ("?query=kubelet&tailLines=100001", 406, "tailLines: Invalid value: 100001: must be between 0 and 100000, "
                                             "inclusive\n"),
    ("?query=kubelet&boot=-1", 406, "boot: Invalid value: -1: not supported on Windows\n"),
    ("?query=kubelet&tailLines=x&sinceTime=y", 400, '[sinceTime: Invalid value: "y": invalid time format, tailLines: '
                                                    'Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax]\n'),
    ("?query=kubelet&sinceTime=2026-12-01T03:00:00Z&untilTime=2026-12-01T02:00:00Z", 406,
     'untilTime: Invalid value: "2026-12-01T02:00:00Z": must be after `sinceTime`\n'),
    ("?query=kubelet&pattern=a(?!b)", 406, 'pattern: Invalid value: "a(?!b)": error parsing regexp: invalid or '
                                           "unsupported Perl syntax: `(?!`\n"),
    ("?tailLines=5", 406, "query: Required value: cannot be empty with options\n"),
])
def test_the_test_kubelet_answers_word_for_word(http_apiserver, query: str, status: int, body: str) -> None:  # noqa: ANN001
    import urllib.error
    import urllib.request

    http_apiserver.put(*node_items())
    http_apiserver.server.node_logs["win-a"] = NodeLogs(files={"kubelet.log": "I1201 02:00:00.000000 1 started\n"})
    try:
        with urllib.request.urlopen(f"{http_apiserver.url}/api/v1/nodes/win-a/proxy/logs/{query}") as response:
            answer = (response.status, response.read().decode())
    except urllib.error.HTTPError as exc:
        answer = (exc.code, exc.read().decode())
    assert answer == (status, body)


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
    with pytest.raises(ValueError, match="'yesterday': expected a duration"):
        parse_time("yesterday", now)


def test_every_distribution_knows_every_component_and_cites_sources() -> None:
    for entry in locations.data()["distributions"]:
        assert set(entry["logs"]) == set(locations.components()), entry["id"]
        assert entry["sources"] and entry["since"], entry["id"]
    assert {d.id for d in locations.distributions()} == {"kubeadm", "aks", "eks", "openshift", "rke2"}


# --- a saved log file, offline (--from-file) -------------------------------------------------------------------

def _saved(tmp_path, name: str, text: str, encoding: str = "utf-8"):  # noqa: ANN001, ANN202
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if encoding != "utf-16" else b"\xff\xfe" + text.encode("utf-16-le"))
    return path


@pytest.mark.parametrize("args", [["--analyse"], ["--since", "1h", "--analyse"], ["--pattern", "sandbox|register"],
                                  ["--since", "1h", "--tail", "2"]], ids=" ".join)
def test_a_saved_log_reads_as_the_same_log_on_the_node(server, tmp_path, args: list[str]) -> None:  # noqa: ANN001
    """What a ticket's attachment says is what the node's log said: the same lines, the same findings."""
    log = kubelet_log()
    server.server.node_logs["win-a"] = NodeLogs(files={"kubelet/kubelet.err.log": log})
    live = logs(server, "win-a", "kubelet", *args)
    saved = run_cli("logs", "win-a", "--from-file", str(_saved(tmp_path, "kubelet.err.log", log)), *args)
    assert (saved.exit_code, saved.stdout) == (live.exit_code, live.stdout), saved.stderr
    assert saved.stderr == ""
    if "--analyse" in args:
        assert "symptom-hns-failure " in saved.stdout and "(on win-a, in the lines read)" in saved.stdout


def test_a_saved_log_in_utf16_from_powershell_reads_the_same(tmp_path) -> None:  # noqa: ANN001
    log = kubelet_log().replace("\n", "\r\n")
    utf8 = run_cli("logs", "--from-file", str(_saved(tmp_path, "kubelet.log", log)), "--analyse")
    utf16 = run_cli("logs", "--from-file", str(_saved(tmp_path, "kubelet.out.log", log, "utf-16")), "--analyse")
    assert utf8.exit_code == utf16.exit_code == 1
    assert utf16.stdout == utf8.stdout and "Node/NODE" in utf8.stdout  # no NODE given: the fixes say NODE
    path = tmp_path / "kubelet.32.log"
    path.write_bytes(b"\xff\xfe\x00\x00" + log.encode("utf-32-le"))  # UTF-32 with its mark reads the same too
    assert run_cli("logs", "--from-file", str(path), "--analyse").stdout == utf8.stdout


@pytest.mark.parametrize(("name", "component"), [
    ("kubelet.err.log", "kubelet"), ("kubeproxy.log", "kube-proxy"), ("kube-proxy.log", "kube-proxy"),
    ("containerd.err.log", "containerd"), ("azure-vnet.log", "cni"), ("csi-proxy.log", "csi-proxy"),
    ("win-a_kubelet (1).log", "kubelet"), ("hnsremediator.log", "hns")])
def test_whose_log_a_saved_file_is_comes_from_its_name(name: str, component: str) -> None:
    from kubectl_win.nodelogs.saved import component_of_file

    assert component_of_file(f"C:\\Users\\me\\Downloads\\{name}") == component_of_file(name) == component


def test_a_saved_file_whose_name_does_not_tell_needs_component(tmp_path) -> None:  # noqa: ANN001
    mount = ('operation_generator.go:1500] "MountVolume.SetUp failed for volume \\"logs\\" : mklink '
             'C:\\\\var\\\\lib\\\\kubelet\\\\pods\\\\x: The filename or extension is too long."')
    path = _saved(tmp_path, "ticket-1234.txt", klog("E", timedelta(minutes=5), mount) + "\n")
    untold = run_cli("logs", "--from-file", str(path), "--analyse")
    assert untold.exit_code == 2 and untold.stderr == (
        f"error: cannot tell whose log {str(path)!r} is from its name: add --component "
        "(kubelet|kube-proxy|containerd|csi-proxy|cni|hns)\n")
    told = run_cli("logs", "win-b", "--from-file", str(path), "--component", "kubelet", "--analyse")
    assert told.exit_code == 1 and "windows-volume-failure " in told.stdout and "on win-b" in told.stdout


@pytest.mark.parametrize(("args", "expected"), [
    (["--from-file", "missing.log", "--analyse"], "error: cannot read missing.log: No such file or directory\n"),
    (["--from-file", "kubelet.log", "--component", "kubelett"], "error: unknown --component 'kubelett' (known: "),
    (["--from-file", "kubelet.log", "kubelet"], "error: --from-file reads one saved log: give no SERVICE"),
    (["win-a", "kubelet", "--component", "kubelet"], "error: --component only applies with --from-file"),
    ([], "error: missing argument 'NODE' (or --from-file PATH for a saved log)"),
])
def test_bad_from_file_input_is_one_line(args: list[str], expected: str) -> None:
    result = run_cli("logs", *args)
    assert result.exit_code == 2 and result.stderr.startswith(expected) and result.stderr.count("\n") == 1


@pytest.mark.tools  # a fresh interpreter: what it imports is what the command needs
def test_a_saved_log_is_read_without_the_kubernetes_client(tmp_path) -> None:  # noqa: ANN001
    from tests.support.cli import client_modules_loaded

    path = _saved(tmp_path, "kubelet.err.log", kubelet_log())
    assert client_modules_loaded("logs", "--from-file", str(path), "--analyse") == (1, [])
