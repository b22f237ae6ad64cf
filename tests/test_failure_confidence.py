"""doctor states a cause only when the message shows it: each finding read from a failure says how sure it is
(`cause` or `unsure`) in the table, JSON and SARIF; the shapes of wrong answers users met (a container ID "not
found" read as a missing file, a socket in use read as an image problem, an API-server rejection read as a node
failure, ...) give honest answers; and every path a failure text can reach doctor by gives the same answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.cli import main
from kubectl_win.doctor.checks.bundle_logs import scan_file
from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.deep import scan_lines
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.findings import Finding
from kubectl_win.knowledge import load
from tests.support.kube_objects import event, node, pod, snapshot_of, windows_spec

MKLINK = ('MountVolume.SetUp failed for volume "logs" : mklink C:\\var\\lib\\kubelet\\pods\\1\\volumes\\x: The '
          'filename or extension is too long.')
NO_SUCH_CONTAINER = ('failed to start container "4f1a2b3c4d5e": Error response from daemon: No such container: '
                     '4f1a2b3c4d5e6f7a8b9c')


def _model_findings(findings: list[Finding]) -> list[Finding]:
    """The findings that read a failure message: the catalogue's, the model's and the fallbacks."""
    return [f for f in findings
            if f.id.startswith("symptom-") or model.is_model_check(f.id) or f.id in symptoms.GENERIC]


# --- one reading everywhere -----------------------------------------------------------------------------------

def _answers_by_path(reason: str, text: str) -> dict[str, tuple[str, str | None, bool]]:
    """(check, confidence, the cause the finding states) for the text on every path doctor reads failures by."""
    def state(kind: str) -> list[dict[str, Any]]:
        status: dict[str, Any] = {"name": "app", "image": "img", "ready": False, "restartCount": 1, "state": {}}
        if kind == "waiting":
            status["state"] = {"waiting": {"reason": reason, "message": text}}
        else:
            status["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": text}}
        return [status]

    not_ready = node("win-1", ready=False)
    not_ready["status"]["conditions"][0]["message"] = text
    objs = [node("win-0"), not_ready, pod("ev", windows_spec(), node="win-0"),
            event(("Pod", "shop", "ev"), reason, text, host="win-0"),
            pod("wa", windows_spec(), node="win-0", statuses=state("waiting")),
            pod("te", windows_spec(), node="win-0", statuses=state("terminated"))]
    where = {"shop/Pod/ev": "event", "shop/Pod/wa": "container waiting", "shop/Pod/te": "container terminated",
             "Node/win-1": "node condition"}
    found: dict[str, list[Finding]] = {}
    for finding in _model_findings(run_checks(snapshot_of(*objs))):
        if finding.object.display() in where:
            found.setdefault(where[finding.object.display()], []).append(finding)
    found["doctor --deep, logs --analyse"] = _model_findings(scan_lines("win-0", "kubelet", [text]))
    found["bundle"] = _model_findings(scan_file("win-0", "nodes/win-0/logs/kubelet.log", text))
    cause = symptoms.match(text, reason, "events").cause  # the sentence the model (or the catalogue) states
    out = {}
    for path, findings in found.items():
        [finding] = findings
        said = cause in finding.message if finding.id.endswith("-failure") else cause == symptoms.cause(finding.id)
        out[path] = (finding.id, finding.confidence, said)
    return out


@pytest.mark.parametrize(("reason", "text"), [
    ("FailedMount", MKLINK),
    ("Failed", NO_SUCH_CONTAINER),
    ("Failed", 'Error: failed to start containerd task "web": hcs::System::Start 9a1: The process cannot access the '
               'file because it is being used by another process.'),
    ("FailedCreatePodSandBox", 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network '
                               'for sandbox "9f3c": plugin type="antrea" failed (add): the agent has not set up br-int '
                               'yet: The device is not ready.'),
    ("FailedMount", 'MountVolume.MountDevice failed for volume "pvc-1" : rpc error: code = Internal desc = '
                    'NodeStageVolume failed: mount of disk 2 with fsType ext4 failed'),
    ("Failed", "'--collector.textfile.directory' is not recognized as an internal or external command,"),
], ids=["cause-by-code", "unsure-unplaced", "cause-runtime", "unsure-network", "linux-only-setting",
        "args-run-as-command"])
def test_one_text_gets_the_same_graded_answer_on_every_path(reason: str, text: str) -> None:
    """Events, container states, node conditions, doctor --deep and logs --analyse (node logs), and bundles."""
    answers = _answers_by_path(reason, text)
    assert set(answers) == {"event", "container waiting", "container terminated", "node condition",
                            "doctor --deep, logs --analyse", "bundle"}
    assert len(set(answers.values())) == 1, answers
    assert next(iter(answers.values()))[2], answers  # each states the same cause (or says it cannot tell)


def test_an_exit_code_alone_is_an_unsure_answer_with_the_previous_log_first() -> None:
    status = {"name": "app", "image": "img", "ready": False, "restartCount": 3, "state": {},
              "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0", statuses=[status])]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-runtime-failure"]
    assert found.confidence == "unsure" and "the message does not say why" in found.message
    assert found.fix.commands[0] == ("kubectl", "logs", "-n", "shop", "web", "-c", "app", "--previous")


# --- the shapes of wrong answers, answered honestly -----------------------------------------------------------

@pytest.mark.parametrize(("where", "reason", "text", "wrong"), [
    ("events", "Failed", NO_SUCH_CONTAINER, "file the container needs is missing"),
    ("log", "", 'E1201 02:00:00.000000 4321 server.go:100] "Failed to listen" err="listen unix '
                'C:\\\\var\\\\lib\\\\kubelet\\\\device-plugins\\\\kubelet.sock: bind: Only one usage of each socket '
                'address (protocol/network address/port) is normally permitted."', "image"),
    ("events", "", "Error from server: error dialing backend: dial tcp 10.240.0.4:10250: connect: connection reset "
                   "by peer", "containerd or the runhcs shim"),
    ("events", "", 'error: unable to upgrade connection: container not found ("app")', "file the container needs"),
    ("events", "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 node(s) is incompatible with nodepool windows-pool",
     "version does not fit"),
])
def test_a_condition_word_the_message_does_not_tie_to_its_object_states_no_cause(
        where: str, reason: str, text: str, wrong: str) -> None:
    found = symptoms.match(text, reason, where, "kubelet" if where == "log" else "")
    assert found is not None
    assert wrong not in found.cause
    if "Only one usage" in text:  # the socket file in the way is the cause, and it is the node's, not the image's
        assert found.check == "windows-node-failure" and found.confidence == "cause"
        assert "kubelet.sock already exists" in found.cause and "stale socket file" in found.cause
    else:
        assert found.confidence == "unsure" and found.cause.startswith("the message does not say why")


def test_an_api_server_rejection_is_not_a_node_failure() -> None:
    text = ('Error creating: Pod "web-1" is invalid: spec.os.name: Forbidden: may not be set when feature gate '
            'IdentifyPodOS is disabled')
    found = symptoms.match(text, "FailedCreate", "events")
    assert (found.check, found.confidence) == ("windows-api-failure", "cause")
    assert "rejects spec.os.name for the reason the message names" in found.cause
    assert "credentials" not in found.cause


def test_credentials_a_components_list_and_watch_cannot_use_are_its_own_not_a_registrys() -> None:
    """client-go's reflector lists from the API server: "Unauthorized" there is the component's credentials (an
    expired or rotated token), placed with the component that wrote the line, not an image pull's."""
    line = ("E1107 10:00:00.000000 4312 reflector.go:147] k8s.io/client-go/tools/cache/reflector.go:232: Failed to "
            "watch *v1.Pod: failed to list *v1.Pod: Unauthorized")
    [found] = _model_findings(scan_lines("win-0", "calico-node", [line], snapshot=snapshot_of(node("win-0"))))
    assert found.confidence == "unsure" and "list or watch objects from the API server" in found.message
    assert "credentials for the API server" in found.fix.text() + found.message
    assert "registry" not in found.message


def test_the_kubelet_s_own_list_refused_is_the_node_s_credentials_not_a_registry_s() -> None:
    """The kubelet is a weak component (every chain passes through it), yet its own list from the API server is
    its own: "Unauthorized" there is the node's credentials (its client certificate), never an image pull's."""
    line = ("E1107 10:00:00.000000 4312 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to "
            "watch *v1.Node: failed to list *v1.Node: Unauthorized")
    [found] = _model_findings(scan_lines("win-0", "kubelet", [line], snapshot=snapshot_of(node("win-0"))))
    assert found.confidence == "unsure" and "perhaps node" in found.message
    assert "registry" not in found.message and "kubelet's credentials" in found.message


def test_a_csi_mount_failure_caused_by_a_linux_filesystem_is_not_told_to_upgrade_the_driver() -> None:
    text = ('MountVolume.MountDevice failed for volume "pvc-1" : rpc error: code = Internal desc = could not format '
            '"2" and mount it at "c:\\var\\lib\\kubelet\\plugins\\kubernetes.io\\csi\\disk.csi.azure.com\\1\\'
            'globalmount": fsType "ext4" is not supported on Windows')
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "FailedMount", text, host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.object.display() == "shop/Pod/web"
               and f.id.endswith("-failure")]
    assert (found.id, found.confidence) == ("windows-volume-failure", "cause")
    assert 'turn off or remove fsType "ext4" for the Windows nodes' in found.message
    assert "upgrade" not in found.fix.text().lower()


# --- the confidence a user and a script see -------------------------------------------------------------------

def _dump(tmp_path: Path) -> str:
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"), pod("api", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "FailedMount", MKLINK, host="win-0"),
            event(("Pod", "shop", "api"), "Failed", NO_SUCH_CONTAINER, host="win-0")]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}), encoding="utf-8")
    return str(path)


def _doctor(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(["doctor", *args])
    return capsys.readouterr().out


def test_json_carries_the_confidence_so_a_script_can_keep_the_sure_causes(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = json.loads(_doctor(capsys, "--from-dump", _dump(tmp_path), "-o", "json"))
    by_object = {f["object"]["name"]: f for f in report["findings"] if "confidence" in f}
    assert (by_object["web"]["id"], by_object["web"]["confidence"]) == ("windows-volume-failure", "cause")
    assert (by_object["api"]["id"], by_object["api"]["confidence"]) == ("windows-failure", "unsure")
    # The existing fields stay as they were; the confidence follows them.
    assert list(by_object["web"]) == ["id", "severity", "object", "path", "message", "fix", "enforcedBy", "confidence"]
    assert all("confidence" not in f for f in report["findings"] if not f["id"].endswith("-failure"))


def test_sarif_carries_the_confidence_as_a_property_and_a_rank(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = json.loads(_doctor(capsys, "--from-dump", _dump(tmp_path), "-o", "sarif"))["runs"][0]
    sure = {r["properties"]["object"]["name"]: (r["properties"].get("confidence"), r.get("rank"))
            for r in run["results"] if r["ruleId"].endswith("-failure")}
    assert sure == {"web": ("cause", 90.0), "api": ("unsure", 30.0)}


def test_the_terminal_shows_the_confidence_and_the_wide_table_a_column(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    heads = [line.split() for line in _doctor(capsys, "--from-dump", dump).splitlines() if "-failure" in line]
    assert ["WARNING", "windows-volume-failure", "confidence:", "cause"] in heads
    assert ["WARNING", "windows-failure", "confidence:", "unsure"] in heads
    wide = _doctor(capsys, "--from-dump", dump, "-o", "wide").splitlines()
    header = next(line for line in wide if line.startswith("ID "))
    assert header.split()[:5] == ["ID", "OBJECT", "PATH", "CONFIDENCE", "MESSAGE"]
    rows = [line.split()[:4] for line in wide if line.startswith("windows-")]
    assert ["windows-volume-failure", "shop/Pod/web", "-", "cause"] in rows
    assert ["windows-failure", "shop/Pod/api", "-", "unsure"] in rows


# --- known bugs, checked against what the node runs -----------------------------------------------------------

LAYER_BUG = ('failed to pull and unpack image "registry.k8s.io/pause:3.10": failed to extract layer sha256:854c: '
             'SetFileInformationByHandle \\\\?\\C:\\Windows\\Temp\\hcs1\\Hives.$wcidirs$: Invalid access to memory '
             'location.: unknown')
DSR = 'kube-proxy: syncProxyRules failed: "Failed to enable DSR" err="Platform does not support feature Direct ' \
      'Server Return (DSR)"'


def _on(win: dict[str, Any], reason: str, text: str) -> Finding:
    objs = [win, pod("web", windows_spec(), node=win["metadata"]["name"]),
            event(("Pod", "shop", "web"), reason, text, host=win["metadata"]["name"])]
    [found] = _model_findings([f for f in run_checks(snapshot_of(*objs)) if f.object.display() == "shop/Pod/web"])
    return found


def test_a_known_bug_is_the_cause_only_on_a_node_that_runs_an_affected_version() -> None:
    affected = _on(node("win-0", runtime="containerd://2.0.0-rc.0"), "Failed", LAYER_BUG)
    assert affected.confidence == "cause"
    assert affected.fix.note.startswith("This is a known bug (win-0 runs containerd 2.0.0-rc.0): ")
    assert "fixed in containerd 2.0.0-rc.1" in affected.fix.note and "containerd/containerd PR #10099" in \
        affected.fix.note
    fixed = _on(node("win-0", runtime="containerd://2.0.0"), "Failed", LAYER_BUG)
    assert fixed.confidence == "unsure" and "known bug" not in fixed.fix.note


def test_a_known_bug_checks_the_nodes_windows_build_and_kubernetes_version() -> None:
    ws2019 = _on(node("win-0", build=17763, kubelet="v1.19.4"), "KubeProxySyncFailed", DSR)
    assert (ws2019.id, ws2019.confidence) == ("windows-proxy-failure", "cause")
    assert "a known bug (win-0 runs kubernetes v1.19.4): kube-proxy (winkernel) before 1.20" in ws2019.message
    for other in (node("win-0", build=20348, kubelet="v1.19.4"), node("win-0", build=17763, kubelet="v1.21.0")):
        found = _on(other, "KubeProxySyncFailed", DSR)
        assert found.confidence == "unsure" and "known bug" not in found.message + found.fix.note


def test_where_the_version_is_not_known_the_known_bug_is_a_step_to_check() -> None:
    [found] = _model_findings(scan_lines("win-0", "containerd", [LAYER_BUG]))
    assert found.confidence == "unsure"
    assert "If the node runs an affected containerd version, this is a known bug: containerd 2.0.0-rc.0" in \
        found.fix.note


def test_a_deep_log_line_and_a_bundle_read_the_nodes_versions_as_its_events_do() -> None:
    """One reading: the same containerd text on the same node is the known bug from an event, --deep and a bundle."""
    win = node("win-0", runtime="containerd://2.0.0-rc.0")
    [line] = _model_findings(scan_lines("win-0", "containerd", [LAYER_BUG], snapshot=snapshot_of(win)))
    assert line.confidence == "cause" == _on(win, "Failed", LAYER_BUG).confidence
    assert "known bug (win-0 runs containerd 2.0.0-rc.0)" in line.fix.note
    [bundled] = _model_findings(scan_file("win-0", "nodes/win-0/logs/containerd.log", LAYER_BUG, snapshot_of(win)))
    assert bundled.confidence == "cause" and "known bug (win-0 runs containerd 2.0.0-rc.0)" in bundled.fix.note


CALICO = ("2025-06-25 08:59:13.306 [ERROR][3008] confd/status_file_watcher.go 222: Error reading directory "
          "error=open \\var\\run\\calico\\endpoint-status: The system cannot find the path specified.")


SMB_STATS = ("GRPC error: rpc error: code = Internal desc = failed to stat file c:\\var\\lib\\kubelet\\pods\\41c1\\"
             "volumes\\kubernetes.io~csi\\pvc-7\\mount: CreateFile c:\\var\\lib\\kubelet\\pods\\41c1\\volumes\\"
             "kubernetes.io~csi\\pvc-7\\mount: Access is denied.")
EXPORTER_BIND = ("cannot start windows_exporter: listen tcp :9182: bind: Only one usage of each socket address "
                 "(protocol/network address/port) is normally permitted.")


@pytest.mark.parametrize(("image", "writer", "line", "tag", "known"), [
    ("docker.io/calico/node-windows", "calico-node", CALICO, "v3.30.1", True),
    ("docker.io/calico/node-windows", "calico-node", CALICO, "v3.30.3", False),
    ("docker.io/calico/node-windows", "calico-node", CALICO, None, False),
    ("ghcr.io/prometheus-community/windows-exporter", "windows_exporter", EXPORTER_BIND, "0.20.1", True),
    ("ghcr.io/prometheus-community/windows-exporter", "windows_exporter", EXPORTER_BIND, "0.21.0", False),
    ("ghcr.io/prometheus-community/windows-exporter", "windows_exporter", EXPORTER_BIND, None, False),
    ("registry.k8s.io/sig-storage/smbplugin", "csi-smb-node-win", SMB_STATS, "v1.2.0", True),
    ("registry.k8s.io/sig-storage/smbplugin", "csi-smb-node-win", SMB_STATS, "v1.3.0", False),
    ("registry.k8s.io/sig-storage/smbplugin", "csi-smb-node-win", SMB_STATS, None, False),
])
def test_an_agents_version_comes_from_its_pods_image_on_the_node(image: str, writer: str, line: str,
                                                                  tag: str | None, known: bool) -> None:
    component = next(name for name, names in load("failure_model")["agent_images"].items()
                     if any(n in image for n in names))
    objs = [node("win-0")]
    if tag:
        objs.append(pod("agent-x1", {"containers": [{"name": "agent", "image": f"{image}:{tag}"}]}, node="win-0",
                        namespace="kube-system"))
    [found] = _model_findings(scan_lines("win-0", writer, [line], snapshot=snapshot_of(*objs)))
    assert (found.confidence == "cause") is known
    assert (f"known bug (win-0 runs {component} {tag})" in found.message + found.fix.note) is known
    if tag is None:  # no version to check: the bug is a step
        assert f"If the node runs an affected {component} version" in found.fix.note


EBS_EXPAND = ('MountVolume.MountDevice failed while expanding volume for volume "pvc-1" : Expander.NodeExpand failed '
              'to expand the volume : rpc error: code = Internal desc = Could not determine device path: executable '
              'file not found in %PATH%')


@pytest.mark.parametrize(("tag", "known"), [("v1.5.3", True), ("v1.6.0", False)])
def test_a_csi_node_plugins_version_comes_from_its_image_too(tag: str, known: bool) -> None:
    objs = [node("win-0"), pod("ebs-csi-node-windows-x1", {"containers": [
        {"name": "ebs-plugin", "image": f"public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:{tag}"}]}, node="win-0",
        namespace="kube-system"), pod("app", windows_spec(), node="win-0"),
        event(("Pod", "shop", "app"), "FailedMount", EBS_EXPAND, host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.object.name == "app"]
    assert (f"known bug (win-0 runs aws-ebs-csi-driver {tag})" in found.message + found.fix.note) is known
    if known:
        assert found.confidence == "cause" and "findmnt" in found.message + found.fix.note


def test_a_releases_change_of_behaviour_is_the_cause_from_that_release_on() -> None:
    text = ('Error: failed to create containerd task: failed to create shim task: failed to bind target '
            '"\\\\?\\Volume{473e}\\" to root "C:\\data" for job object: Do not attach the filter to the volume at '
            'this time.: unknown')
    changed = _on(node("win-0", runtime="containerd://1.7.0"), "Failed", text)
    assert changed.confidence == "cause"
    assert "a change of behaviour (win-0 runs containerd 1.7.0): from containerd 1.7 a HostProcess container" in \
        changed.message
    before = _on(node("win-0", runtime="containerd://1.6.20"), "Failed", text)
    assert "change of behaviour" not in before.message + before.fix.note


def test_a_removed_built_in_api_says_when_it_went_and_what_replaces_it() -> None:
    found = symptoms.match('error: resource mapping not found for name: "win" namespace: "" from "rc.yaml": no '
                           'matches for kind "RuntimeClass" in version "node.k8s.io/v1beta1"', "", "events")
    assert found is not None and found.confidence == "cause"
    assert "RuntimeClass in node.k8s.io/v1beta1 was removed in Kubernetes 1.25: use node.k8s.io/v1" in found.cause
    other = symptoms.match('no matches for kind "Widget" in version "v1"', "", "events")
    assert other is not None and "was removed in Kubernetes" not in other.cause


def test_an_unknown_flag_the_nodes_version_removed_is_that_removal() -> None:
    def on(kubelet: str) -> Finding:
        win = node("win-0", ready=False, kubelet=kubelet)
        win["status"]["conditions"][0]["message"] = "failed to run Kubelet: unknown flag: --network-plugin"
        [found] = _model_findings(run_checks(snapshot_of(win)))
        return found

    removed = on("v1.29.2")
    assert (removed.id, removed.confidence) == ("windows-node-failure", "cause")
    assert "a removal (win-0 runs kubernetes v1.29.2): the kubelet's Docker and CNI flags" in removed.message
    assert "CHANGELOG-1.24" in removed.message
    before = on("v1.23.5")  # the version still had it: an unknown flag, without the removal's story
    assert before.confidence == "cause" and "a removal" not in before.message
    assert "started with a flag its version does not have (--network-plugin)" in before.message


def test_a_credential_the_api_server_refuses_is_said_to_be_that() -> None:
    text = ('E1201 10:00:00.000000 4120 reflector.go:138] failed to list *v1.Pod: the server has asked for the client '
            'to provide credentials (get pods)')
    found = symptoms.match(text, "", "log", "calico-node")
    assert (found.check, found.confidence) == ("windows-network-failure", "cause")
    assert found.cause.startswith("the API server refused the credentials the component on the node uses")


@pytest.mark.parametrize(("message", "where", "writer", "says"), [
    ('no matches for kind "GMSACredentialSpec" in version "windows.k8s.io/v1"', "events", "",
     "CustomResourceDefinition that defines GMSACredentialSpec is not installed"),
    ('no matches for kind "CertificateSigningRequest" in version "certificates.k8s.io/v1"', "events", "",
     "was removed in (or is not yet in) the Kubernetes version"),
    ("Error: run as uid (20000) is not supported on Windows", "events", "", "windowsOptions.runAsUserName"),
    ("""The terminal process "kubectl.exe 'exec', '-it', 'web-0', '--', 'sh'" terminated with exit code: 126.""",
     "events", "", "a Linux shell or binary"),
    ('mkdir : Das Argument kann nicht an den Parameter "Path" gebunden werden, da es NULL ist.', "log",
     "kube-flannel", "a variable it reads is not set"),
    ("Cannot bind argument to parameter 'Path' because it is null.", "log", "kube-proxy",
     "a variable it reads is not set"),
    ("(InvalidParameter) The value of parameter agentPoolProfile.name is invalid. Please see "
     "https://aka.ms/aks-naming-rules for more details.", "events", "", "6 for a Windows pool"),
    ("Parameter 'ManagedClusterWindowsProfile.admin_password' must conform to the following pattern", "events", "",
     "complexity rules"),
    ('failed to setup network for sandbox "8e7c": plugin type="nat" name="nat" failed (add): hcnCreateNetwork failed '
     "in Win32: The object already exists. (0x1392)", "events", "", "the cluster's CNI"),
    ("hcs::CreateComputeSystem 20a2d6b: The virtual machine could not be started", "events", "", "Hyper-V isolated"),
    ("error loading system cert pool for probe (calico): crypto/x509: system root pool is not available on Windows",
     "log", "rancher-wins", "Go 1.18 or later"),
    ("failed to create user process token: failed to logon user: Access is denied.: unknown", "events", "",
     "run the containerd service as LocalSystem"),
    ("Unable to set node resource configuration error=operation Create is not supported on Node(ip-10-1-2-3.corp.int)",
     "log", "calico-node", "looked up Node ip-10-1-2-3.corp.int, which does not exist"),
    ("0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector.", "events",
     "", "no node the pod may land on has enough unrequested memory"),
    ("OOMKilled", "events", "", "more memory than its memory limit"),
], ids=["crd-not-installed", "built-in-group", "run-as-uid", "exec-sh", "ps-null-de", "ps-null-en", "aks-pool-name",
        "aks-password", "nat-cni", "hyperv-vm", "go-cert-pool", "hostprocess-token", "calico-nodename", "no-room",
        "oom-killed"])
def test_a_cause_that_generalises_is_read_from_the_message_s_structure(message: str, where: str, writer: str,
                                                                        says: str) -> None:
    found = symptoms.match(message, "", where, writer)
    assert found is not None and found.confidence == "cause", found
    assert says in found.cause, found.cause


@pytest.mark.parametrize("message", [
    "the server could not find the requested resource (get pods.metrics.k8s.io)",
    "network: unexpected end of JSON input",
    "Could not find a part of the path 'C:\\hpc\\etc\\kube-flannel\\net-conf.json'",
    "no matching manifest for windows/amd64 10.0.20348 in the manifest list entries",
], ids=["not-served", "cni-no-result", "missing-directory", "docker-manifest"])
def test_a_symptom_that_several_causes_print_is_unsure(message: str) -> None:
    """Texts that threads traced to more than one cause (an API not served, a CNI that wrote no result, a directory
    that is not there, a tag without this build) name what failed, not why."""
    found = symptoms.match(message, "", "events")
    assert found is not None and found.confidence == "unsure", found
    assert "does not say" in found.cause


def test_a_catalogue_finding_says_its_reading_where_the_user_reads_it() -> None:
    """The table, JSON and SARIF show the finding's message: it ends with the catalogue's cause, or with the
    unsure sentence and its candidates, not only with how sure doctor is."""
    sure = "invalid mount config for type \"bind\": source path must be a directory"
    open_ = "network: unexpected end of JSON input"
    objs = [node("win-0"), pod("a", windows_spec(), node="win-0"), pod("b", windows_spec(), node="win-0"),
            event(("Pod", "shop", "a"), "Failed", sure, host="win-0"),
            event(("Pod", "shop", "b"), "FailedCreatePodSandBox", open_, host="win-0")]
    found = {f.object.name: f for f in _model_findings(run_checks(snapshot_of(*objs)))}
    assert found["a"].confidence == "cause" and " Cause: Docker on Windows bind-mounts directories only" in \
        found["a"].message
    assert found["b"].confidence == "unsure" and " Unsure: the message does not say why; the CNI plugin exited" in \
        found["b"].message


# --- the cluster's evidence decides ------------------------------------------------------------------------

CHOWN = ('MountVolume.SetUp failed for volume "kube-api-access-x" : chown c:\\var\\lib\\kubelet\\pods\\1\\volumes\\'
         'kubernetes.io~projected\\kube-api-access-x\\..2024\\token: not supported by windows')


@pytest.mark.parametrize(("message", "reason"), [
    (CHOWN, "FailedMount"),
    ('Error: failed to start containerd task "app": hcs::System::CreateProcess app: The system cannot find the file '
     'specified.: unknown', "Failed"),
], ids=["chown", "entrypoint"])
def test_a_linux_workload_on_a_windows_node_fails_for_its_placement(message: str, reason: str) -> None:
    """The same failure on a pod that selects Windows is a setting to change; on a pod that neither selects
    Windows nor runs a Windows image, its cause is that it landed there, and the fix keeps it on Linux."""
    linux = {"containers": [{"name": "app", "image": "quay.io/acme/snapshot-controller:v6"}]}
    objs = [node("win-0", taints=[]), pod("lin", linux, node="win-0"), pod("win", windows_spec(), node="win-0"),
            event(("Pod", "shop", "lin"), reason, message, host="win-0"),
            event(("Pod", "shop", "win"), reason, message, host="win-0")]
    found = {f.object.name: f for f in _model_findings(run_checks(snapshot_of(*objs)))}
    placed, meant = found["lin"], found["win"]
    assert placed.confidence == "cause"
    assert "shop/lin is a Linux workload" in placed.message + placed.fix.text()
    assert '"nodeSelector":{"kubernetes.io/os":"linux"}' in placed.fix.text()
    assert "Linux workload" not in meant.message + meant.fix.text()
    assert "kubernetes.io/os\":\"linux" not in meant.fix.text()


def test_an_api_rejection_of_a_field_gives_the_rule_explain_gives_for_it() -> None:
    """One answer for `kubectl win explain FIELD` and for the rejection of that field doctor reads."""
    from kubectl_win.explain.field_query import find_fields
    from kubectl_win.versions import parse_version

    text = ('Pod "web" is invalid: spec.containers[0].securityContext.runAsUser: Forbidden: cannot be set for a '
            "windows pod")
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"), event(("Pod", "shop", "web"), "FailedCreate",
                                                                           text, host="win-0")]
    [found] = [f for f in _model_findings(run_checks(snapshot_of(*objs))) if f.object.name == "web"]
    [rule] = [m.rule for m in find_fields("securityContext.runAsUser", parse_version("1.31"))
              if m.rule.status == "rejected"]
    assert found.confidence == "cause" and model.subsystem_of_check(found.id) == "api"
    assert f"explain {rule.id}" in found.message and rule.instead.rstrip(".") in found.message


def test_a_rejected_security_context_names_the_setting_it_sets_not_the_ones_it_lists_as_nil() -> None:
    text = ('admission webhook "windows.common-webhooks.networking.gke.io" denied the request: spec.containers[0].'
            "securityContext: Invalid value: v1.SecurityContext{Capabilities:(*v1.Capabilities)(nil), "
            "Privileged:(*bool)(0xc000696a3c), SELinuxOptions:(*v1.SELinuxOptions)(nil)}")
    found = symptoms.match(text, "FailedCreate", "events")
    assert found is not None and found.confidence == "cause"
    assert "explain windows-privileged" in found.cause and "seLinuxOptions" not in found.cause


@pytest.mark.parametrize(("message", "reason", "placed"), [
    ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod '
     '"ingress-admission-create-x": Error response from daemon', "FailedCreatePodSandBox", True),
    ("failed to parse Kubernetes args: pod does not have label vpc.amazonaws.com/PrivateIPv4Address",
     "FailedCreatePodSandBox", True),
    ('Liveness probe failed: Get "http://10.0.0.5:8080/healthz": context deadline exceeded', "Unhealthy", False),
], ids=["sandbox", "vpc-ipam", "probe"])
def test_a_linux_workload_fails_for_its_placement_on_the_way_to_its_first_start(message: str, reason: str,
                                                                                placed: bool) -> None:
    """A Linux image never gets past a pull, a mount, its sandbox or its start on a Windows node: any failure
    there is its placement's, even one no entry marks as a Linux workload's. A failure after it ran (a probe)
    is not."""
    linux = {"containers": [{"name": "app", "image": "registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1"}]}
    objs = [node("win-0", taints=[]), pod("lin", linux, node="win-0"),
            event(("Pod", "shop", "lin"), reason, message, host="win-0")]
    [found] = [f for f in _model_findings(run_checks(snapshot_of(*objs))) if f.object.name == "lin"]
    said = found.message + found.fix.text()
    assert ("shop/lin is a Linux workload" in said) is placed, said
    assert found.confidence == "cause" or not placed


def test_a_kubelet_log_line_naming_a_linux_workload_gives_the_same_answer_as_its_event() -> None:
    """doctor --deep reads a node log line with the pod it names: one answer for the line and the pod's event."""
    linux = {"containers": [{"name": "app", "image": "quay.io/acme/webhook-patch:v1"}]}
    line = ('E0402 10:00:00.000000    4321 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to '
            'mount volume: ' + CHOWN + '" pod="monitoring/patch-job-x1"')
    objs = [node("win-0", taints=[]), pod("patch-job-x1", linux, node="win-0", namespace="monitoring")]
    snapshot = snapshot_of(*objs)
    [linked] = _model_findings(scan_lines("win-0", "kubelet", [line], snapshot=snapshot))
    [alone] = _model_findings(scan_lines("win-0", "kubelet", [line]))
    assert linked.confidence == "cause" and "monitoring/patch-job-x1 is a Linux workload" in linked.message
    assert '"nodeSelector":{"kubernetes.io/os":"linux"}' in linked.fix.text()
    assert "Linux workload" not in alone.message


def test_a_bundle_log_line_about_a_linux_workload_gives_the_same_answer() -> None:
    linux = {"containers": [{"name": "app", "image": "quay.io/acme/webhook-patch:v1"}]}
    quoted = CHOWN.replace('"', '\\"')  # klog's structured value escapes the quotes inside it
    line = ('E0402 10:00:00.000000    4321 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to '
            'mount volume: ' + quoted + '" pod="monitoring/patch-job-x1"')
    snapshot = snapshot_of(node("win-0", taints=[]), pod("patch-job-x1", linux, node="win-0", namespace="monitoring"))
    [linked] = _model_findings(scan_file("win-0", "nodes/win-0/logs/kubelet.log", line, snapshot))
    assert linked.confidence == "cause" and "monitoring/patch-job-x1 is a Linux workload" in linked.message


# --- causes that presume a context, and the codes that never name one cause -------------------------------------

NOT_ON_PATH = ('failed to create containerd task: failed to create shim task: hcs::System::CreateProcess: failed to '
               'get application name from commandline "agent.exe --config C:\\etc\\agent.yaml": failed to find '
               'executable')


def _host_process_spec() -> dict[str, Any]:
    spec = windows_spec()
    spec["securityContext"] = {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    spec["hostNetwork"] = True
    return spec


def test_a_hostprocess_cause_is_stated_only_for_a_pod_that_runs_hostprocess_containers() -> None:
    """"failed to find executable" is a HostProcess container's Linux-style command path only when the pod runs
    HostProcess containers; of any other pod doctor says the message does not tell why, on every path."""
    objs = [node("win-0"), pod("hpc", _host_process_spec(), node="win-0"), pod("app", windows_spec(), node="win-0"),
            event(("Pod", "shop", "hpc"), "Failed", NOT_ON_PATH, host="win-0"),
            event(("Pod", "shop", "app"), "Failed", NOT_ON_PATH, host="win-0")]
    snapshot = snapshot_of(*objs)
    found = {f.object.name: f for f in _model_findings(run_checks(snapshot))}
    assert found["hpc"].confidence == "cause" and "CONTAINER_SANDBOX_MOUNT_POINT" in found["hpc"].fix.text()
    assert found["app"].confidence == "unsure"
    assert "does not run HostProcess containers" in found["app"].fix.text()
    assert "CONTAINER_SANDBOX_MOUNT_POINT" not in found["app"].fix.text()
    line = ('E0402 10:00:00.000000    4321 pod_workers.go:1301] "Error syncing pod, skipping" err="' +
            NOT_ON_PATH.replace('"', '\\"') + '" pod="shop/app"')
    [from_log] = _model_findings(scan_lines("win-0", "kubelet", [line], snapshot=snapshot))
    [from_bundle] = _model_findings(scan_file("win-0", "nodes/win-0/logs/kubelet.log", line, snapshot))
    assert from_log.confidence == from_bundle.confidence == "unsure"
    assert "does not run HostProcess containers" in from_log.fix.text() + from_bundle.fix.text()


PROBE_TO_LOCALHOST = ('Liveness probe failed: Get "http://localhost:29643/healthz": dial tcp [::1]:29643: connectex: '
                      "No connection could be made because the target machine actively refused it.")


def test_a_probe_of_localhost_is_the_cause_only_for_a_pod_on_the_pod_network() -> None:
    """The kubelet probes from the node: localhost there is the pod only when the pod runs with hostNetwork, so the
    cause (the probe's host) is stated for a pod on the pod network and not for a hostNetwork pod."""
    objs = [node("win-0"), pod("csi", windows_spec(), node="win-0"), pod("hpc", _host_process_spec(), node="win-0"),
            event(("Pod", "shop", "csi"), "Unhealthy", PROBE_TO_LOCALHOST, host="win-0"),
            event(("Pod", "shop", "hpc"), "Unhealthy", PROBE_TO_LOCALHOST, host="win-0")]
    found = {f.object.name: f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-probe-to-node-localhost"}
    assert found["csi"].confidence == "cause" and "remove httpGet.host from the probe of shop/Pod/csi" in \
        found["csi"].fix.text()
    assert found["hpc"].confidence == "unsure" and "runs with hostNetwork" in found["hpc"].fix.text()


NO_SUCH_DOMAIN = ("encountered an error during hcs::System::CreateProcess: CMD: failure in a Windows system call: "
                  "The specified domain either does not exist or could not be contacted. (0x54b)")


@pytest.mark.parametrize(("options", "confidence"), [
    ({}, "cause"),
    ({"runAsUserName": "ContainerUser"}, "cause"),
    ({"gmsaCredentialSpecName": "webapp01"}, "unsure"),
    ({"runAsUserName": "CONTOSO\\svc-web"}, "unsure"),
], ids=["local-default", "local-named", "gmsa", "domain-user"])
def test_a_logon_to_no_domain_is_the_image_s_only_for_a_pod_without_a_domain_identity(options: dict[str, str],
                                                                                     confidence: str) -> None:
    """ERROR_NO_SUCH_DOMAIN when a container's process starts: for a pod that logs on locally the domain is the
    image's own (its LSA primary domain unset); a gMSA or a DOMAIN\\user pod's domain may be unreachable, and
    the message does not say which."""
    spec = windows_spec()
    if options:
        spec["securityContext"] = {"windowsOptions": options}
    objs = [node("win-0", build=26100), pod("web", spec, node="win-0"),
            event(("Pod", "shop", "web"), "Failed", NO_SUCH_DOMAIN, host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-container-user-no-domain"]
    assert found.confidence == confidence
    said = found.fix.text()
    assert ("WORKGROUP" in said) if confidence == "cause" else ("nltest /dsgetdc" in said and "gMSA" in said)


@pytest.mark.parametrize("text", [
    'error executing command in container: failed to exec in container: failed to start exec "b01": failed to get '
    'application name from commandline "sh -c \\"tar cf - /x | tail -c+0\\"": failed to find executable',
    "executor error: 'gzip' is not recognized as an internal or external command,\r\noperable program or batch file.",
], ids=["kubectl-cp-retries", "cmd-gzip"])
def test_a_linux_shell_or_command_in_a_windows_container_is_named_as_such(text: str) -> None:
    found = symptoms.match(text, "", "events")
    assert found is not None and found.check == "symptom-linux-command" and found.confidence == "cause"
    assert "Linux" in found.cause and "HostProcess" not in found.cause


@pytest.mark.parametrize("text", [
    # a code whose condition has several causes: the registry's refusal, a file in use, a full disk
    'failed to pull and unpack image "contoso.azurecr.io/shop/web:2.4": failed to resolve reference '
    '"contoso.azurecr.io/shop/web:2.4": failed to authorize: failed to fetch anonymous token: unexpected status: '
    "401 Unauthorized",
    'Error: failed to start containerd task "web": hcs::System::Start 9a1: The process cannot access the file because '
    "it is being used by another process.",
], ids=["registry-401", "sharing-violation"])
def test_a_windows_code_with_several_causes_names_one_only_as_a_candidate(text: str) -> None:
    found = symptoms.match(text, "Failed", "events")
    assert found is not None and found.confidence == "unsure"
    assert found.cause.startswith("the message does not say why") and "; one candidate: " in found.cause


# Texts whose own structure states the cause, and look-alikes that do not (the reading a user gets either way).
STATED = [
    ("Format-Volume : Cannot validate argument on parameter 'FileSystem'. The argument \"ext4\" does not belong "
     "to the set", "cause", "ext4, a Linux file system"),
    ("failed to run Kubelet: bad socketPath, must be an absolute path: /var/lib/kubelet/device-plugins/kubelet.sock",
     "cause", "a Linux-style path"),
    ("error: one of src or dest must be a local file specification", "cause", "drive letter"),
    ("Error: expected ami_type to be one of [AL2_x86_64 CUSTOM], got WINDOWS_CORE_2022_x86_64", "cause",
     "predates WINDOWS_CORE_2022_x86_64"),
    # The list names Windows values: the client knows Windows, so the value given is a typo or an unknown variant.
    ("Error: expected ami_type to be one of [AL2_x86_64 WINDOWS_CORE_2019_x86_64], got WINDOWS_CORE_2019", "unsure",
     ""),
    ("docker: Error response from daemon: invalid volume specification: 'C:\\agent:C:\\\\agent'.", "cause",
     "doubled backslash"),
    # A log line that escapes every backslash: the doubling is the log's, not the path's.
    ('level=error msg="x" error="invalid volume specification: \'c:\\\\host\\\\opt\\\\/opt:c:/host/opt\'"', "unsure",
     ""),
    ("panic: Failed to load netapi32.dll: The specified module could not be found.", "cause", "Nano Server"),
    ('Error: failed to start container "jnlp": Error response from daemon: container jnlp encountered an error '
     'during CreateProcess: failure in a Windows system call: The password for this account has expired. (0x532)',
     "cause", "PasswordNeverExpires"),
    # Several causes print it (not installed, not on the service's PATH, arguments written into the name).
    ("crictl is required by the container runtime: executable file not found in %PATH%", "unsure", ""),
    ('parse "unix://C:\\csi\\csi.sock": invalid port ":\\csi\\csi.sock" after host', "cause", "drive letter"),
    ('transport: Error while dialing dial tcp: address unix://C:\\k\\providers/azure.sock: too many colons in '
     'address', "cause", "drive letter"),
    # A real port, an IPv6 address: no drive letter in them.
    ('parse "tcp://10.0.0.1:99999": invalid port ":99999" after host', "unsure", ""),
    ("An error occurred: PowerShell is not installed. Minimum required version: 3.0", "cause", "Server Core"),
    ("Error response from daemon: manifest for mcr.microsoft.com/windows/servercore:latest not found: manifest "
     "unknown: manifest unknown", "cause", "no latest tag"),
    ("UnsupportedOperation: Microsoft Windows is not supported for the instance type 'p4d.24xlarge'", "cause",
     "instance type p4d.24xlarge"),
    ("(InvalidOSSKU) OSSKU='Windows2022' is invalid, details: Unrecognized OSSKU", "cause", "--os-type Windows"),
    ("Windows agent pool name can not be longer than 6 characters.", "cause", "6 for a Windows pool"),
    ('Error encountered: HcnCreateNetwork -- HRESULT: 2151350288. Result: {"Success":false,"Error":"A network '
     'with this name already exists. ","ErrorCode":2151350288}', "cause", "already exists on the node"),
]


def test_a_named_pipe_or_share_begins_with_two_backslashes_by_right() -> None:
    """\\\\.\\pipe\\ and \\\\server\\share are written with two backslashes: a volume spec of them is not doubled."""
    for spec in ("\\\\.\\pipe\\docker_engine:\\\\.\\pipe\\docker_engine",
                 "\\\\files\\share:C:\\data"):
        found = symptoms.match(f"Error response from daemon: invalid volume specification: '{spec}'", "", "log",
                               "kubelet")
        assert found is None or "doubled backslash" not in found.cause, spec


@pytest.mark.parametrize(("text", "confidence", "says"), STATED, ids=[s[0][:40] for s in STATED])
def test_a_text_states_its_cause_only_where_its_own_structure_does(text: str, confidence: str, says: str) -> None:
    found = symptoms.match(text, "", "log", "kubelet")
    assert found is not None and found.confidence == confidence, (found.check if found else None, text)
    assert says in (found.cause + " " + found.fix)


# --- an agent the platform runs with the node's identity --------------------------------------------------------

REFUSED_AS_NODE = ('E0711 09:12:44.000000    4411 reflector.go:138] failed to list *v1.Endpoints: endpoints is '
                   'forbidden: User "system:node:ip-10-0-3-7.ec2.internal" cannot list resource "endpoints" in API '
                   'group "" at the cluster scope')


@pytest.mark.parametrize(("labels", "says", "fix_says"), [
    ({"eks.amazonaws.com/nodegroup": "win", "alpha.eksctl.io/cluster-name": "prod"}, "eks:kube-proxy-windows",
     "EC2_WINDOWS"),
    ({}, "given the node's kubeconfig", "kubectl win logs win-0 kube-proxy"),
], ids=["eks", "kubeadm"])
def test_kube_proxy_refused_as_the_node_is_read_in_the_platform_s_terms(labels: dict[str, str], says: str,
                                                                       fix_says: str) -> None:
    """EKS runs kube-proxy as a Windows service with the node's identity and grants it kube-proxy's rights through
    the node role's mapping: refused there, the mapping is the cause; elsewhere kube-proxy was given the kubelet's
    kubeconfig. `doctor --deep`, `logs --analyse` and a bundle's log give the same answer."""
    snapshot = snapshot_of(node("win-0", labels=labels))
    [from_log] = _model_findings(scan_lines("win-0", "kube-proxy", [REFUSED_AS_NODE], snapshot=snapshot))
    [from_bundle] = _model_findings(scan_file("win-0", "nodes/win-0/logs/kube-proxy.log", REFUSED_AS_NODE, snapshot))
    for found in (from_log, from_bundle):
        assert found.confidence == "cause" and says in found.message, found.message
        assert fix_says in found.fix.text()
    if labels:  # the platform's fix, whichever path read the line
        for found in (from_log, from_bundle):
            assert any(argv[:3] == ("kubectl", "get", "configmap") for argv in found.fix.commands)


@pytest.mark.parametrize(("code", "confidence", "says"), [
    (-1073741515, "cause", "STATUS_DLL_NOT_FOUND"),  # the image lacks the DLL: why the process ended
    (-1073741502, "unsure", "not why"),  # a DLL failed to initialise: what ended it, for one of several reasons
    (-1073741819, "unsure", "not why"),  # a crash
])
def test_an_exit_code_is_a_cause_only_where_its_meaning_is_why_the_process_ended(code: int, confidence: str,
                                                                                  says: str) -> None:
    status = {"name": "app", "image": "img", "ready": False, "restartCount": 4, "state": {},
              "lastState": {"terminated": {"exitCode": code, "reason": "Error"}}}
    objs = [node("win-0"), pod("app", windows_spec(), node="win-0", statuses=[status])]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-ntstatus-exit"]
    assert found.confidence == confidence and says in found.message + found.fix.text()


@pytest.mark.parametrize(("text", "runtime"), [
    ("hcs::CreateComputeSystem 4f1: This operation returned because the timeout period expired.", True),
    ("Stop-Service : Service 'W3SVC' cannot be stopped: This operation returned because the timeout period "
     "expired. (0x800705B4)", False),
    ("Access is denied. (Exception from HRESULT: 0x80070005 (E_ACCESSDENIED))", False),
    ("hcs::CreateComputeSystem 4f1: Access is denied.", True),
], ids=["hcs-timeout", "program-timeout", "program-denied", "hcs-denied"])
def test_a_win32_code_alone_is_no_container_runtime_failure(text: str, runtime: bool) -> None:
    """A Win32 code any program prints (a timeout, access denied) is the container runtime's only with the
    runtime's words: the runtime's candidates would send a user to the wrong place."""
    found = symptoms.match(text, "", "log", "application")
    claimed = found is not None and found.check in ("symptom-compute-system-timeout", "symptom-access-denied")
    assert claimed == runtime, (found.check if found else None)


def test_a_build_mismatch_whose_image_names_no_build_says_how_to_read_the_tags_builds() -> None:
    """The image's build is not in its tag: doctor names the likely case (a tag published for another Windows
    Server release only) and the command that reads the tag's builds from the registry."""
    objs = [node("win-0", build=20348), pod("app", windows_spec("registry.example.com/shop/app:2.20"), node="win-0"),
            event(("Pod", "shop", "app"), "Failed", "hcs::CreateComputeSystem 9f: The container operating system does "
                  "not match the host operating system.", host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-os-build-mismatch"]
    assert ("kubectl", "win", "images", "registry.example.com/shop/app:2.20", "--build", "10.0.20348") in \
        found.fix.commands
    assert "no 20348 variant in its manifest list" in found.fix.note


@pytest.mark.parametrize(("writer", "subsystems"), [("kube-proxy", {"proxy", None}), ("flanneld", {"network"})])
def test_an_unsure_reading_stays_in_the_subsystem_its_writer_settles(writer: str, subsystems: set[str | None]) -> None:
    """The same words in kube-proxy's own log are not the CNI's failure (kube-proxy's, or unplaced where the
    words do not settle it); in the CNI agent's they are."""
    line = 'E0310 08:01:02.000000    2212 server.go:88] "Network cbr0 not found"'
    found = symptoms.match(line, "", "log", writer)
    assert found is not None and found.confidence == "unsure"
    assert symptoms.subsystem(found.check) in subsystems, found.check
