"""Readings a message's own structure settles, and those it does not (issue 41): what doctor says of a feature
gate its version refuses, a port already taken, a DLL the machine lacks, a Go run-time panic, a container HCS no
longer has, a Linux path, Go's FIPS-only mode, a named pipe given to a TCP listener, a System32 program off PATH, a
file created in a folder that is not there, and who wrote a line that starts with "Error: "."""

from __future__ import annotations

import pytest

from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.deep import scan_lines
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, Finding
from tests.support.kube_objects import event, node, pod, snapshot_of, windows_spec


def _log(writer: str, line: str) -> Finding:
    [found] = [f for f in scan_lines("win-0", writer, [line], snapshot=snapshot_of(node("win-0")))
               if model.is_model_check(f.id) or f.id.startswith("symptom-")]
    return found


@pytest.mark.parametrize(("writer", "line", "confidence", "says"), [
    ("kube-proxy", 'E0525 7944 run.go:120] "command failed" err="failed complete: cannot set feature gate '
                   'IPv6DualStack to false, feature is locked to true"',
     CONFIDENCE_CAUSE, ["remove IPv6DualStack from its --feature-gates"]),
    ("kubelet", "E0101 1 server.go:302] unrecognized feature gate: CSIMigrationAzureFile",
     CONFIDENCE_CAUSE, ["remove CSIMigrationAzureFile from --feature-gates"]),
    ("windows_exporter", "cannot start windows_exporter: listen tcp :9182: bind: Only one usage of each socket address "
                         "(protocol/network address/port) is normally permitted.",
     CONFIDENCE_UNSURE, ["the message does not say why", "binds it twice", "netstat -ano"]),
    ("kubelet", r"listen unix C:\var\lib\kubelet\plugins_registry\x.sock: bind: Only one usage of each socket address "
                "(protocol/network address/port) is normally permitted.",
     CONFIDENCE_CAUSE, ["stale socket file"]),
    ("eventlog", 'Windows cannot load the extensible counter DLL "C:\\Windows\\System32\\perfts.dll" (Win32 error code '
                 "126).",
     CONFIDENCE_CAUSE, ["perfts.dll (or a DLL it depends on)", "base image does not ship it"]),
    ("kube-sonobuoy", "panic: Failed to load netapi32.dll: The specified module could not be found.",
     CONFIDENCE_CAUSE, ["Nano Server", "Server Core"]),
    ("kubelet", 'Error: recovered from panic "runtime error: invalid memory address or nil pointer dereference". '
                "(err=<nil>) Call stack:",
     CONFIDENCE_UNSURE, ["one candidate: the kubelet crashed on a bug of its own"]),
    ("kubelet", 'E0320 1 run.go:74] "command failed" err="invalid configuration: pod logs path \\"/var/log/pods\\" '
                'must be absolute path"',
     CONFIDENCE_CAUSE, ["/var/log/pods is a Linux-style path", "drive letter"]),
    ("wmco", "ssh: handshake failed: curve25519: crypto/ecdh: use of X25519 is not allowed in FIPS 140-only mode",
     CONFIDENCE_CAUSE, ["X25519, which Go's FIPS 140-only mode", "golang.org/x/crypto"]),
    ("containerd", "containerd: failed to get listener for debug endpoint: listen tcp: address \\\\.\\pipe\\"
                   "containerd-debug: missing port in address",
     CONFIDENCE_CAUSE, ["containerd treated the named pipe address", "npipe://"]),
    ("azure-npm", "powershell.exe : The term 'powershell.exe' is not recognized as the name of a cmdlet, function, "
                  "script file, or operable program.",
     CONFIDENCE_UNSURE, ["a program every Windows Server has was not found on PATH"]),
    ("rke2", "error creating calico-node.log: open C:\\var\\log\\calico-node.log: The system cannot find the path "
             "specified.",
     CONFIDENCE_UNSURE, ["why the directory is missing", "before anything creates it"]),
], ids=["locked-feature-gate", "unknown-feature-gate", "taken-port", "stale-unix-socket", "missing-dll",
        "nano-server-dll", "go-panic", "linux-path-quoted-first", "fips-only", "pipe-given-to-tcp",
        "system-program-off-path", "file-created-in-a-missing-folder"])
def test_what_a_line_s_own_words_settle(writer: str, line: str, confidence: str, says: list[str]) -> None:
    """A feature gate the running version locked or does not know, a DLL the machine lacks and a stale socket file
    are causes the words show; a taken port (whose?) and a Go panic (what did the program meet?) are not."""
    found = _log(writer, line)
    assert found.confidence == confidence
    for phrase in says:
        assert phrase in found.message
    assert "kubectl" not in found.message  # none of these lines is kubectl's output


def test_kubectl_is_the_writer_of_its_own_lower_case_errors_only() -> None:
    said = model.read("error: unable to upgrade connection: container not found", "", "pod")
    assert said.component == "kubectl-client"
    assert model.read("Error: failed to solve: failed to read dockerfile", "", "pod").component != "kubectl-client"


def test_hcs_element_not_found_about_a_container_is_not_an_hns_failure() -> None:
    line = ('msg="err in fetching container Statistics" containerId=80dd err="container 80dd encountered an error '
            'during hcs::System::Properties: failure in a Windows system call: Element not found. (0x490)"')
    found = symptoms.match(line, "", "log", "windows_exporter")
    assert found is not None and found.check != "symptom-hns-failure"
    said = _log("windows_exporter", line)
    assert (said.id, said.confidence) == ("windows-failure", CONFIDENCE_UNSURE)
    assert "subsystem not settled (perhaps runtime)" in said.message and "HNS" not in said.message.split("Message:")[0]
    hns = symptoms.match("hnsCall failed in Win32: Element not found. (0x490)", "FailedCreatePodSandBox")
    assert hns is not None and hns.check == "symptom-hns-failure"


def test_a_node_s_event_is_placed_as_the_node_s_wherever_its_words_come_from() -> None:
    text = ("Error: expected ami_type to be one of [AL2_x86_64 CUSTOM BOTTLEROCKET_x86_64], got "
            "WINDOWS_CORE_2022_x86_64")
    [found] = [f for f in run_checks(snapshot_of(node("win-0"), event(("Node", "", "win-0"), "Warning", text,
                                                                     host="win-0")))
               if f.object.display() == "Node/win-0" and model.is_model_check(f.id)]
    reading = model.read(text, "Warning", "node")
    assert (found.id, found.confidence) == (reading.check, CONFIDENCE_CAUSE if reading.established else
                                            CONFIDENCE_UNSURE)
    assert found.confidence == CONFIDENCE_CAUSE and "upgrade the provider" in found.message


def test_a_build_mismatch_whose_tag_lists_the_build_points_at_the_tool_that_chose() -> None:
    text = ("failed to create shim: hcs::CreateComputeSystem 29e9: The container operating system does not match "
            "the host operating system.: unknown")
    objs = [node("win-0", build=20348), pod("web", windows_spec("registry.example.com/web:1.0"), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", text, host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-os-build-mismatch"]
    assert found.confidence == CONFIDENCE_CAUSE
    assert ("kubectl", "win", "images", "registry.example.com/web:1.0", "--build", "10.0.20348") in found.fix.commands
    assert "containerd PR #6491" in found.fix.note



def test_a_candidate_needs_something_the_message_names_not_only_a_default_place() -> None:
    """A timeout with nothing around it (a client's port scan) is not offered HCS's usual cause because a pod's
    message defaults to the runtime; one that names HCS is."""
    bare = model.read("capz-conf-phg2v.internal.cloudapp.net [10.1.0.5] 30165 (?): TIMEDOUT", "", "pod").labels()
    assert bare["subsystem"] == "subsystem not settled" and "one candidate" not in bare["cause"]
    named = model.read("hcs::CreateComputeSystem 4f1: This operation returned because the timeout period expired.",
                       "", "pod").labels()
    assert "one candidate: HCS (vmcompute) did not create or start the container in time" in named["cause"]


@pytest.mark.parametrize(("check", "writer", "text"), [
    ("symptom-hostprocess-tty", "containerd",
     'failed to start exec "a4": console emulation not supported for job containers: unknown'),
    ("symptom-eventlog-in-container", "fluentd", 'SystemCallError error="The interface is unknown. - OpenEventLog'),
    ("symptom-azure-cloud-name", "kubelet",
     'failed to run Kubelet: could not init cloud provider "azure": autorest/azure: There is no cloud environment '
     'matching the name "AZURECLOUD"'),
    ("symptom-ec2-metadata-unreachable", "kubelet",
     'failed to run Kubelet: could not init cloud provider "aws": unable to determine AWS zone from cloud provider '
     "config or EC2 instance metadata: RequestError: send request failed"),
], ids=["hostprocess-tty", "eventlog-in-container", "azure-cloud-name", "ec2-metadata-route"])
def test_one_reading_of_a_cause_in_an_event_a_deep_log_line_and_a_bundle(check: str, writer: str,
                                                                         text: str) -> None:
    """The same text gives the same check, confidence and fix wherever doctor reads it."""
    from kubectl_win.doctor.checks.bundle_logs import scan_file

    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", text, host="win-0")]
    [from_event] = [f for f in run_checks(snapshot_of(*objs)) if f.id == check]
    [from_log] = [f for f in scan_lines("win-0", writer, [text], snapshot=snapshot_of(node("win-0")))
                  if f.id == check]
    [from_bundle] = [f for f in scan_file("win-0", f"nodes/win-0/logs/{writer}.log", text, snapshot_of(node("win-0")))
                     if f.id == check]
    assert from_event.confidence == from_log.confidence == from_bundle.confidence == CONFIDENCE_CAUSE
    assert from_log.fix.note == from_bundle.fix.note
