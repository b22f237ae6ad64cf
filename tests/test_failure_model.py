"""The model of the Windows node stack (doctor/signatures/model.py, knowledge/failure_model.yaml): every failure
on a Windows object is placed by component, operation, object and Windows condition, named with its
subsystem, component, operation and node, its cause in one sentence where the message shows it (else that it
does not) and next steps a user can paste; every corpus is graded right / honest / wrong / silent against its
answer keys and the figures are printed in the terminal summary, the held-out wrong rate first."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.knowledge import load
from tests.support import corpus_docs, corpus_figures, fresh_reading
from tests.support.kube_objects import event, node, pod, snapshot_of, windows_spec
from tests.support.paths import DOCS

KNOWLEDGE = Path(symptoms.__file__).parent.parent / "knowledge"
CORPUS = corpus_figures.CORPUS_DIR


def test_every_vocabulary_entry_has_a_source_and_every_code_it_names_is_decoded() -> None:
    data = load("failure_model")
    errors = load("windows_errors")
    names = {e["name"] for section in errors.values() if isinstance(section, list) for e in section}
    for part in ("subsystems", "components", "operations", "objects", "conditions"):
        for entry in data[part]:
            assert entry.get("sources"), (part, entry.get("id"))
            assert set(entry.get("codes") or ()) <= names, (part, entry.get("id"))
    assert [s["id"] for s in data["subsystems"]] == list(model.SUBSYSTEMS)
    subsystems = set(model.SUBSYSTEMS)
    for part in ("components", "operations"):
        for entry in data[part]:
            assert entry["subsystem"] in subsystems, entry["id"]
    logs = set(load("node_logs")["components"])
    assert {c["logs"] for c in data["components"] if c.get("logs")} <= logs


def test_every_catalogue_entry_has_its_place_in_the_model() -> None:
    data = load("failure_model")
    components = {c["id"] for c in data["components"]}
    operations = {o["id"] for o in data["operations"]}
    for entry in load("symptoms")["symptoms"]:
        assert entry["subsystem"] in model.SUBSYSTEMS, entry["check"]
        assert entry["component"].partition(":")[0] in components, entry["check"]
        assert set(entry["operations"]) <= operations, entry["check"]


@pytest.mark.parametrize(("text", "reason", "subsystem", "component", "operation", "condition"), [
    # Written for this test from the structure of each component's errors; no report has these texts.
    ('MountVolume.SetUp failed for volume "logs" : mklink C:\\var\\lib\\kubelet\\pods\\1\\volumes\\x: The filename or '
     'extension is too long.', "FailedMount", "volume", "kubelet", "mount", "path-too-long"),
    ('NodeExpandVolume.NodeExpandVolume failed for volume "pvc-1" : rpc error: code = Internal desc = csi-proxy '
     'ResizeVolume failed: Access is denied.', "VolumeResizeFailed", "volume", "csi-proxy", "resize", "access-denied"),
    ('UnmountVolume.TearDown failed for volume "data" : remove c:\\var\\lib\\kubelet\\pods\\2\\volumes\\d: The process '
     'cannot access the file because it is being used by another process.', "", "volume", "kubelet", "unmount",
     "file-in-use"),
    ('Failed to pull image "contoso.azurecr.io/app:2": rpc error: code = Unknown desc = failed to pull and unpack '
     'image: failed to extract layer sha256:aa: write C:\\ProgramData\\containerd\\x: There is not enough space on the '
     'disk.', "Failed", "image", "containerd", "unpack", "disk-full"),
    ('Failed to pull image "contoso.azurecr.io/app:2": rpc error: code = Unknown desc = failed to authorize: failed '
     'to fetch oauth token: unexpected status: 401 Unauthorized', "Failed", "image", "containerd", "pull",
     "registry-auth"),
    ('E1203 10:00:00.000000 4120 proxier.go:1200] "Failed to create load balancer" err="hcnCreateLoadBalancer failed '
     'in Win32: The parameter is incorrect. (0x57)" enableDSR=true', "", "proxy", "hns", "sync-proxy",
     "invalid-parameter"),
    ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "9f": plugin '
     'type="antrea" failed (add): rpc error: code = DeadlineExceeded', "FailedCreatePodSandBox", "network",
     "cni:antrea", "sandbox-network", "timeout"),
    ('nslookup kubernetes.default: DNS request timed out. timeout was 2 seconds.', "", "dns", "dns-client", "resolve",
     "timeout"),
    ('Failed to run kubelet: failed to run Kubelet: unknown flag: --cgroup-driver', "", "node", "kubelet",
     "kubelet-start", "linux-cgroups"),
    ('admission webhook "admission-webhook.windows-gmsa.sigs.k8s.io" denied the request: cannot find '
     'GMSACredentialSpec webapp1', "FailedCreate", "api", "gmsa-webhook", "admission", "api-rejected"),
    ('Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem web: The paging '
     'file is too small for this operation to complete.', "StartError", "resources", "hcsshim", "create",
     "out-of-memory"),
])
def test_a_new_text_is_read_by_its_structure(text: str, reason: str, subsystem: str, component: str, operation: str,
                                             condition: str) -> None:
    reading = model.read(text, reason)
    assert (reading.subsystem, reading.component, reading.operation, reading.condition) == (
        subsystem, component, operation, condition), reading


def test_a_placed_finding_names_subsystem_component_operation_node_cause_and_next_steps() -> None:
    text = ('MountVolume.SetUp failed for volume "logs" : mklink C:\\var\\lib\\kubelet\\pods\\1\\volumes\\x: The '
            'filename or extension is too long.')
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            pod("csi-smb-node-win-abcde", windows_spec(), namespace="kube-system", node="win-0"),
            event(("Pod", "shop", "web"), "FailedMount", text, host="win-0", count=3)]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-volume-failure"]
    assert found.message.startswith("shop/Pod/web: FailedMount: volume: the kubelet could not mount the volume on "
                                    "win-0 (3x): the volume's path under the kubelet's directory")
    assert "0xCE ERROR_FILENAME_EXCED_RANGE" in found.message
    assert found.fix.commands[:3] == (
        ("kubectl", "logs", "-n", "kube-system", "csi-smb-node-win-abcde", "--all-containers", "--since", "1h"),
        ("kubectl", "win", "logs", "win-0", "csi-proxy", "--since", "1h"),
        ("kubectl", "win", "logs", "win-0", "kubelet", "--since", "1h"))
    assert found.severity == "warning" and found.source


def test_specific_causes_stay_on_top() -> None:
    text = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "5": '
            'hcnCreateNetwork failed in Win32: A network with this name already exists. (0x803b0010)')
    assert symptoms.match(text, "FailedCreatePodSandBox").check == "symptom-hcn-network-create"


def test_a_node_log_line_is_read_the_same_way_and_progress_lines_are_not() -> None:
    from kubectl_win.doctor.deep import scan_lines

    lines = ["I1203 10:00:00.000000 4120 proxier.go:800] \"Syncing proxy rules\"",
             'E1203 10:00:01.000000 4120 server.go:500] "Failed to enable DSR" err="DSR is not supported on this '
             'Windows build"']
    found = scan_lines("win-0", "kube-proxy", lines)
    assert [f.id for f in found] == ["windows-proxy-failure"]
    assert found[0].fix.commands[0] == ("kubectl", "win", "logs", "win-0", "kube-proxy", "--since", "1h")


def _citations(url: str) -> list[str]:
    found = re.match(r"https://github.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url)
    if not found:
        return [url]
    repo, number = found.groups()
    names = [repo] + (["k8s"] if repo == "kubernetes/kubernetes" else []) + \
        (["k/website"] if repo == "kubernetes/website" else [])
    return [url] + [f"{name} {kind}#{number}" for name in names for kind in ("", "PR ")]


def _held_out() -> list[dict[str, Any]]:
    return corpus_figures.load(*sorted((CORPUS / "held_out").glob("*.yaml")))


def _training() -> list[dict[str, Any]]:
    return corpus_figures.load(*sorted((CORPUS / "failures").glob("*.yaml")))


def test_no_knowledge_entry_cites_a_held_out_report() -> None:
    """No held-out part (held_out/, and a round's held_out.yaml) is cited by knowledge/*.yaml."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in KNOWLEDGE.glob("*.yaml"))
    held = [entry for name, paths in corpus_figures.corpora().items() if "held" in name
            for entry in corpus_figures.load(*paths)]
    assert len(held) >= len(_held_out())
    cited = sum(1 for entry in held if any(c in text for c in _citations(entry["url"])))
    assert cited == 0, f"{cited} held-out reports are cited by knowledge/*.yaml"


def test_figures_on_the_earlier_corpus() -> None:
    """windows_messages.yaml's key is each entry's class (the catalogue entry its collector named): a class
    entry that states its cause is right, one that says the message does not settle it is honest."""
    entries = corpus_figures.load(CORPUS / "windows_messages.yaml")
    expected = [symptoms.subsystem(e["class"]) for e in entries]
    figures = corpus_figures.measure("windows_messages (earlier)", entries, expected)
    assert figures.percent("specific") == 100.0, figures.counts()
    assert figures.grades["wrong"] == 0 and figures.grades["silent"] == 0, figures.counts()
    alone = corpus_figures.model_alone([e for e in entries if "exit_code" not in e],
                                       [w for e, w in zip(entries, expected, strict=True) if "exit_code" not in e])
    corpus_figures.note("windows_messages (earlier)", alone)


# Parts measured above the bar, said here until they are not (strict: a part that meets it fails the marker).
# The held-out parts of rounds 3 to 7 were split off before anything was built from their rounds and are only
# measured, never read (their keys were checked by hand by a reviewer who does not work on doctor).
ABOVE_THE_BAR = {"round3/held_out": "2 of 19 answers state a wrong cause or subsystem (11%)",
                 "round4/held_out": "6 of 38 answers state a wrong cause or subsystem (16%)",
                 "round5/held_out": "3 of 16 answers state a wrong cause (19%)",
                 "round6/held_out": "2 of 27 answers state a wrong cause (7%): one more than before round 7's "
                                    "session added causes built from the training parts",
                 "round7/held_out": "3 of 29 answers state a wrong cause or subsystem (10%); 5 when first "
                                    "measured at the split",
                 "round8/held_out": "3 of 24 answers state a wrong cause or subsystem (12.5%), first measured "
                                    "at the split",
                 "round9/held_out": "1 of 7 answers states a wrong cause (14%), first measured at the split",
                 "round10/held_out": "1 of 10 answers is unsure in another subsystem (10%), first measured at "
                                     "the split and unchanged by the calibration on its training part",
                 "round15/held_out": "1 of 10 answers is unsure in another subsystem (10%), first measured at "
                                     "the split"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=ABOVE_THE_BAR[n])) if n in ABOVE_THE_BAR else n
    for n in sorted(corpus_figures.corpora())])
def test_graded_figures_of_every_keyed_corpus(name: str) -> None:
    """Every corpus whose entries carry answer keys (expect.right), the training and held-out parts and any new
    round, graded right / honest / wrong / silent. Only aggregate figures: a held-out corpus's messages are never
    printed, not even when this fails. A wrong cause costs a user more than none: at most 5% wrong."""
    entries = corpus_figures.load(*corpus_figures.corpora()[name])
    figures = corpus_figures.measure(name, entries)
    assert figures.graded >= 0.9 * figures.total, figures.counts()  # keys for (nearly) every entry
    assert figures.rate("wrong") <= 5.0, figures.counts()


def test_training_entries_read_without_their_own_threads_knowledge_stay_under_the_bar() -> None:
    """Every training entry graded without the knowledge built from its own thread (tests/support/fresh_reading.py):
    how doctor answers failures it was not taught, on ten times a held-out part's entries. Another thread's broad
    condition that claims a message wrongly shows here first."""
    figures = fresh_reading.figures()
    assert figures.graded >= 300, figures.counts()
    assert figures.rate("wrong") <= 5.0, figures.counts()


def test_a_thread_s_own_knowledge_is_disarmed_only_inside_the_fresh_reading() -> None:
    held_open = ('RemoveContainer "c1" from runtime service failed: rpc error: code = Unknown desc = failed to remove '
                 'container "c1": unable to remove filesystem for c1: CreateFile C:\\ProgramData\\docker\\containers'
                 '\\c1\\c1-json.log: Access is denied.')

    def answer() -> str:
        found = symptoms.match(held_open, "", "log", "kubelet")
        return found.cause if found else ""

    taught = answer()
    assert "keeps the container's log file open" in taught  # the condition fluent/fluent-bit #3892 taught
    with fresh_reading.without(frozenset({"fluent/fluent-bit#3892"})):
        assert answer() != taught
    with fresh_reading.without(frozenset({"kubernetes/kubernetes#1"})):
        assert answer() == taught
    assert answer() == taught
    assert fresh_reading.threads("see kubernetes/kubernetes PR #101047 and https://github.com/Azure/AKS/issues/1941") \
        == {"kubernetes/kubernetes#101047", "azure/aks#1941"}


def test_the_training_and_held_out_parts_are_graded() -> None:
    assert {"failures", "held_out"} <= set(corpus_figures.corpora())
    assert _training() and _held_out()


def test_no_linux_control_draws_a_finding() -> None:
    """The Linux controls of every round (tests/corpus/linux_controls.yaml, round3/linux_controls.yaml, ...)."""
    entries = corpus_figures.load(*sorted(CORPUS.rglob("linux_controls.yaml")))
    assert entries
    drawn = corpus_figures.findings_on_linux(entries)
    corpus_figures.note("linux_controls", f"{drawn} of {len(entries)} Linux failures on Linux objects draw a finding")
    assert drawn == 0, f"{drawn} of {len(entries)} Linux controls draw a finding"


@pytest.mark.parametrize("subsystem", model.SUBSYSTEMS)
def test_the_docs_worked_example_is_what_doctor_prints(subsystem: str) -> None:
    """docs/doctor.md "How doctor reads a failure": one example per subsystem, its output as doctor prints it
    (`python -m tests.support.model_examples docs/doctor.md` rewrites the blocks)."""
    from tests.support import model_examples

    text = (DOCS / "doctor.md").read_text(encoding="utf-8")
    assert model_examples.shown(text, subsystem) == model_examples.rendered(subsystem)


def test_the_docs_figures_are_the_measured_ones() -> None:
    """docs/doctor.md's table of figures is what the corpora measure now (aggregates only)."""
    text = (DOCS / "doctor.md").read_text(encoding="utf-8")
    table = text.split("<!-- corpus figures -->\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    shown = [[cell.strip() for cell in row.strip("|").split("|")][1:] for row in table]
    assert shown == [figures.row()[1:] for _, figures in corpus_docs.documented()]


def test_a_cluster_value_stays_one_argument_of_the_next_steps() -> None:
    import shlex

    hostile = "win-0;rm -rf /"
    text = 'MountVolume.SetUp failed for volume "x" : mklink C:\\a: The filename or extension is too long.'
    objs = [node(hostile), pod("web", windows_spec(), node=hostile),
            event(("Pod", "shop", "web"), "FailedMount", text, host=hostile)]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "windows-volume-failure"]
    assert all(hostile in argv for argv in found.fix.commands if "logs" in argv and "win" in argv)
    for argv, command in zip(found.fix.commands, found.fix.to_dict()["commands"], strict=True):
        assert shlex.split(command) == list(argv)


def test_two_different_failures_of_one_subsystem_in_a_log_stay_two_findings() -> None:
    from kubectl_win.doctor.deep import scan_lines

    add = ('cni.go:10] "failed to set up pod network" err="plugin type=\\"antrea\\" failed (add): The device is not '
           'ready."')
    lines = [f"E1203 10:00:01.000000 4120 {add}", f"E1203 10:00:02.000000 4120 {add}",
             'E1203 10:00:03.000000 4120 cni.go:10] "failed to set up pod network" err="plugin type=\\"antrea\\" '
             'failed (add): Access is denied."']
    found = [f for f in scan_lines("win-0", "kubelet", lines) if f.id == "windows-network-failure"]
    assert sorted("2x" in f.message for f in found) == [False, True]
    assert any("Access is denied" in f.message and "2x" not in f.message for f in found)


def test_the_readme_gives_the_measured_graded_figures() -> None:
    """The README's claim is the held-out and training parts' graded figures as measured now."""
    from tests.support.paths import ROOT

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert corpus_docs.readme_claim() in text  # python -m tests.support.corpus_docs docs/doctor.md README.md
