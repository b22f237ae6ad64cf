"""The structural matcher (doctor/signatures/structure.py, knowledge/error_chains.yaml) recognises failures by
their error chain: the operation, the failing component and the Windows code in any notation.

Held-out messages: the corpus entries marked `held_out` (tests/corpus/windows_messages.yaml) come from
reports no file in kubectl_win/knowledge cites, and the text catalogue alone does not recognise them as their
class; only their structure does. The test below checks all three, so a rule cannot be fitted to their text
without the test saying so."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.catalog import doctor_checks as catalog
from kubectl_win.doctor.signatures import structure, symptoms
from kubectl_win.knowledge import load
from kubectl_win.wincodes import codes_in_text, find_codes
from tests.support.paths import MESSAGES

CORPUS: list[dict[str, Any]] = yaml.safe_load(
    MESSAGES.read_text(encoding="utf-8"))
HELD_OUT = [e for e in CORPUS if e.get("held_out")]
WHERE = {"event": "events"}
KNOWLEDGE = Path(symptoms.__file__).parent.parent / "knowledge"


def _citations(url: str) -> list[str]:
    repo, number = re.match(r"https://github.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url).groups()
    names = [repo] + (["k8s"] if repo == "kubernetes/kubernetes" else [])
    return [f"{name} {kind}#{number}" for name in names for kind in ("", "PR ")]


def test_there_are_enough_held_out_messages_in_enough_classes() -> None:
    assert len(HELD_OUT) >= 12
    assert len({e["class"] for e in HELD_OUT}) >= 10


@pytest.mark.parametrize("entry", HELD_OUT, ids=[f"{e['class']}-{e['url'].rsplit('/', 1)[1]}" for e in HELD_OUT])
def test_a_held_out_message_is_recognised_by_its_structure_alone(entry: dict[str, Any]) -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in KNOWLEDGE.glob("*.yaml"))
    assert not [c for c in _citations(entry["url"]) if c in text], "the knowledge data cites a held-out report"
    where = WHERE.get(entry["where"], entry["where"])
    by_text = symptoms.match_text(entry["message"], "", where)
    assert by_text is None or by_text.check != entry["class"], "the text catalogue already knows it"
    found = symptoms.match_structure(entry["message"], "", where)
    assert found is not None and found.check == entry["class"] and found.structural
    assert symptoms.match(entry["message"], entry.get("reason", ""), where).check == entry["class"]


@pytest.mark.parametrize(("text", "operation", "components"), [
    ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "07e1": '
     'plugin type="flannel" name="vxlan0" failed (add): error while AddHnsEndpoint(x): failed to find HNSEndpoint x',
     "sandbox", {"cni:flannel", "hns"}),
    ('MountVolume.MountDevice failed for volume "pv-smb" : rpc error: code = Internal desc = volume(abc) mount '
     '"//f6.file.core.windows.net/pvc" on "\\\\var\\\\lib\\\\kubelet\\\\plugins\\\\kubernetes.io\\\\csi\\\\pv\\\\pv-smb'
     '\\\\globalmount" failed with smb mapping failed with error: rpc error: code = Unknown desc = NewSmbGlobalMapping',
     "mount", {"csi", "csi:smb", "csi:azurefile"}),
    ('Liveness probe errored: rpc error: code = Unknown desc = failed to exec in container: failed to start exec "d6": '
     'hcs::System::CreateProcess 05f: The RPC server is unavailable.: unknown', "probe", {"hcs"}),
    ('failed to destroy network for sandbox "52ad": plugin type="sdnbridge" name="l2bridge" failed (delete): ',
     "kill", {"cni:sdnbridge"}),
    ('HTTP InternalServerError serving /stats/summary: Internal Error: failed to list pod stats: failed to list all '
     'container stats: rpc error: code = Unknown desc = hcsshim::OpenComputeSystem a4: A virtual machine or '
     'container with the specified identifier does not exist.', "stats", {"hcs", "kubelet-stats"}),
])
def test_the_chain_names_the_operation_and_the_components(text: str, operation: str, components: set[str]) -> None:
    chain = structure.parse(text)
    assert chain.operation == operation
    assert components <= chain.components, chain.describe()


def test_the_reason_names_the_operation_only_when_the_text_does_not() -> None:
    assert structure.parse("Error: context deadline exceeded", "StartError").operation == "start"
    assert structure.parse("Error: context deadline exceeded").operation is None
    assert structure.parse("MountVolume.SetUp failed for volume x: context deadline exceeded",
                           "Failed").operation == "mount"


@pytest.mark.parametrize(("text", "names"), [
    ("unable to valid path to counter. Error code is c0000bb8", ["PDH_CSTATUS_NO_OBJECT"]),  # bare hex
    ("Error 80070002 while unpacking", ["HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)"]),
    ("nltest : I_NetLogonControl failed: Status = 1722 0x6ba RPC_S_SERVER_UNAVAILABLE", ["RPC_S_SERVER_UNAVAILABLE"]),
    ("FullyQualifiedErrorId : Windows System Error 1326,New-SmbGlobalMapping", ["ERROR_LOGON_FAILURE"]),
    ("Win32 error 1219", ["ERROR_SESSION_CREDENTIAL_CONFLICT"]),
    ('{"Success":false,"ErrorCode":2151350288}', ["HCN_E_NETWORK_ALREADY_EXISTS"]),  # unsigned decimal
    ("Exit Code: -1073741510", ["STATUS_CONTROL_C_EXIT"]),  # signed decimal NTSTATUS
    ("exitCode=-2147467259", ["E_FAIL"]),  # an HRESULT as exit code
    ("winapi error #3489792023", ["HRESULT_FROM_NT(RPC_NT_SERVER_UNAVAILABLE)"]),
    ("err: exit status 0xc0000142", ["STATUS_DLL_INIT_FAILED"]),
])
def test_every_notation_of_a_windows_code_is_decoded(text: str, names: list[str]) -> None:
    assert [c.name for c in find_codes(text)] == names


def test_codes_named_only_by_their_text_are_found_across_quoted_line_breaks() -> None:
    text = ('New-SmbGlobalMapping : Multiple connections to a server or shared resource by the same user, using more '
            'than one user \\r\\nname, are not allowed.')
    assert [c.name for c in codes_in_text(text)] == ["ERROR_SESSION_CREDENTIAL_CONFLICT"]
    assert [c.name for c in codes_in_text("hcs::CreateComputeSystem: The directory name is invalid.: unknown")] == [
        "ERROR_DIRECTORY"]


def test_a_new_text_with_a_known_structure_gets_the_specific_check() -> None:
    """Messages written for this test (no report has them): the structure is known, the text is not."""
    smb = ('MountVolume.MountDevice failed for volume "data" : rpc error: code = Internal desc = volume(x) mount '
           '\\\\files.example.com\\share failed with NewSmbGlobalMapping failed. output: "", '
           'err: Windows System Error 1219')
    assert symptoms.match(smb, "FailedMount").check == "symptom-smb-multiple-connections"
    probe = ('Readiness probe errored: rpc error: code = Unknown desc = failed to exec in container: '
             'hcs::System::CreateProcess 9a1: The remote procedure call failed.: unknown')
    assert symptoms.match(probe, "Unhealthy").check == "symptom-exec-rpc-failed"
    task = 'Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem web: ' \
           'The directory name is invalid.: unknown'
    assert symptoms.match(task, "Failed").check == "symptom-invalid-directory"


def test_the_rules_refer_to_known_checks_operations_and_components() -> None:
    data = load("error_chains")
    operations = {o["id"] for o in data["operations"]}
    components = {c["id"] for c in data["components"]} | {"cni", "csi"}
    for rule in data["rules"]:
        assert rule["check"] in catalog(), rule
        assert set(rule.get("operations") or ()) <= operations, rule
        assert set(rule.get("components") or ()) <= components, rule
        assert rule.get("operations") or rule.get("components") or rule.get("codes"), rule


def test_doctor_deep_reads_node_logs_through_the_structural_matcher() -> None:
    from kubectl_win.doctor.deep import scan_lines

    lines = ["I0423 06:10:13.641898    7636 kubelet.go:1] starting",
             "E0423 06:10:14.109208    7636 perfcounter_nodestats.go:171] Unable to get cpu perf counter data; err: "
             "unable to collect data from counter. Error code is 800007d6",
             "E0423 06:10:19.030905    7636 perfcounter_nodestats.go:171] Unable to get cpu perf counter data; err: "
             "unable to collect data from counter. Error code is 800007d6",
             'E0930 20:21:31.218007 5020 handler.go:321] HTTP InternalServerError serving /stats/summary: Internal '
             'Error: failed to list pod stats: failed to list all container stats: rpc error: code = Unknown desc = '
             'hcsshim::OpenComputeSystem 46527a: A virtual machine or container with the specified identifier does '
             'not exist.']
    found = {f.id: f for f in scan_lines("win-0", "kubelet", lines)}
    assert set(found) == {"symptom-kubelet-perf-counters", "symptom-kubelet-stats"}
    assert "2x in the last hour" in found["symptom-kubelet-perf-counters"].message
    assert "0x800007D6 = PDH_NO_DATA" in found["symptom-kubelet-perf-counters"].message
    assert "lodctr /R" in found["symptom-kubelet-perf-counters"].fix.text()
