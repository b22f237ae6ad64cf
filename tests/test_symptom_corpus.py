"""Real Windows failure messages (tests/corpus/windows_messages.yaml, each with the public URL it was copied
from) are recognised: each by its own catalogue entry, never by the generic fallback, with nothing unrelated
raised for the same object, and with every Windows error code in it decoded."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.doctor.signatures import symptoms
from kubectl_win.wincodes import decode_exit, find_codes
from tests.support.kube_objects import event, node, pod, snapshot_of, windows_spec
from tests.support.paths import MESSAGES

CORPUS: list[dict[str, Any]] = yaml.safe_load(MESSAGES.read_text(encoding="utf-8"))
WHERE = {"event": "events", "log": "log", "condition": "condition", "waiting": "waiting", "terminated": "terminated"}
IDS = [f"{i:02d}-{e['class']}" for i, e in enumerate(CORPUS)]


def test_the_corpus_is_big_and_varied_and_every_entry_has_a_source() -> None:
    assert len(CORPUS) >= 135
    assert len({e["class"] for e in CORPUS}) >= 45
    for entry in CORPUS:
        assert entry["url"].startswith("https://github.com/"), entry
        assert entry["message"] and entry["where"] in WHERE, entry
    assert max(Counter(e["message"] for e in CORPUS).values()) <= 2  # copied, not repeated


@pytest.mark.parametrize("entry", [e for e in CORPUS if "exit_code" not in e], ids=[
    i for i, e in zip(IDS, CORPUS, strict=True) if "exit_code" not in e])
def test_each_message_is_claimed_by_its_own_entry(entry: dict[str, Any]) -> None:
    found = symptoms.match(entry["message"], entry.get("reason", ""), WHERE[entry["where"]])
    assert found is not None and not found.generic and found.check not in symptoms.GENERIC, entry["message"]
    assert found.check == entry["class"]
    # Matching never depends on the reason: without it the same entry claims the message.
    assert symptoms.match(entry["message"], "", WHERE[entry["where"]]).check == entry["class"]
    assert found.codes == find_codes(entry["message"])


@pytest.mark.parametrize("entry", [e for e in CORPUS if "exit_code" in e], ids=[
    i for i, e in zip(IDS, CORPUS, strict=True) if "exit_code" in e])
def test_each_exit_code_is_decoded(entry: dict[str, Any]) -> None:
    decoded = decode_exit(entry["exit_code"])
    assert decoded is not None and not decoded.name.startswith("(unknown")


def corpus_dump() -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
    """One Windows node and one pod per corpus message (events on the pod or the node, states on the pod);
    returns the objects and, per corpus index, the object display name its finding must be on."""
    objs: list[dict[str, Any]] = [node("win-0"), node("linux-0", os="linux")]
    where: dict[str, tuple[str, str]] = {}
    for index, entry in enumerate(CORPUS):
        name = f"case-{index:02d}"
        if entry.get("context") == "node":
            node_name = f"win-{index:02d}"
            objs.append(node(node_name))
            objs.append(event(("Node", "", node_name), entry.get("reason") or "Warning", entry["message"],
                              host=node_name))
            where[IDS[index]] = (entry["class"], f"Node/{node_name}")
            continue
        status: dict[str, Any] = {"name": "app", "image": "img", "ready": False, "restartCount": 3, "state": {}}
        if "exit_code" in entry:
            status["lastState"] = {"terminated": {"exitCode": entry["exit_code"], "reason": "Error"}}
        elif entry["where"] == "terminated":
            status["lastState"] = {"terminated": {"exitCode": 1, "reason": entry.get("reason") or "Error",
                                                  "message": entry["message"]}}
        statuses = [status] if entry["where"] == "terminated" else None
        objs.append(pod(name, windows_spec(), node="win-0", statuses=statuses))
        if entry["where"] != "terminated":
            objs.append(event(("Pod", "shop", name), entry.get("reason") or "", entry["message"], host="win-0",
                              count=4))
        where[IDS[index]] = (entry["class"], f"shop/Pod/{name}")
    return objs, where


def test_doctor_recognises_every_message_of_a_dump_built_from_the_corpus() -> None:
    objs, expected = corpus_dump()
    findings = run_checks(snapshot_of(*objs))
    by_object: dict[str, set[str]] = {}
    for finding in findings:
        by_object.setdefault(finding.object.display(), set()).add(finding.id)
    for case, (check, obj) in expected.items():
        raised = by_object.get(obj, set())
        assert check in raised, (case, raised)
        unrelated = {i for i in raised if i.startswith(("symptom-", "windows-runtime", "windows-error",
                                                        "windows-warning"))} - {check}
        assert unrelated == set(), (case, unrelated)


def test_every_finding_that_quotes_a_code_shows_its_decoding() -> None:
    objs, _ = corpus_dump()
    for finding in run_checks(snapshot_of(*objs)):
        for code in find_codes(finding.message.partition(" [")[0]):
            assert code.name in finding.message, finding.message


def test_repeated_events_are_folded_with_their_count() -> None:
    message = CORPUS[0]["message"]
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "FailedCreatePodSandBox", message, host="win-0", count=5),
            event(("Pod", "shop", "web"), "FailedCreatePodSandBox", message, host="win-0", count=2)]
    [finding] = [f for f in run_checks(snapshot_of(*objs)) if f.id == CORPUS[0]["class"]]
    assert "7x" in finding.message


def test_a_windows_message_no_entry_claims_is_placed_in_the_model_only_on_windows() -> None:
    text = "Error: hcs::System::Start web: The requested compute operation is not supported. (0xc0370119)"
    objs = [node("win-0"), node("linux-0", os="linux"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", text, host="win-0"),
            event(("Pod", "shop", "api"), "Failed", text, host="linux-0")]
    findings = [f for f in run_checks(snapshot_of(*objs)) if f.id.endswith("-failure")]
    assert [(f.id, f.object.display(), f.severity) for f in findings] == [
        ("windows-runtime-failure", "shop/Pod/web", "warning")]
    [found] = findings
    assert found.message.startswith("shop/Pod/web: Failed: runtime: hcsshim / HCS (vmcompute) could not start the "
                                    "container on win-0: ")
    assert "HCS_E_OPERATION_SYSTEM_CALLBACK_ALREADY_SET" in found.message
    assert found.fix.commands[0] == ("kubectl", "win", "logs", "win-0", "containerd", "--since", "1h")


def test_a_cluster_value_stays_one_argument_of_the_fix_command() -> None:
    import shlex

    hostile = "win-0;rm -rf /"
    objs = [node(hostile), pod("web", windows_spec(), node=hostile),
            event(("Pod", "shop", "web"), "FailedCreatePodSandBox", CORPUS[[e["class"] for e in CORPUS].index(
                "symptom-hns-failure")]["message"], host=hostile)]
    [finding] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-hns-failure"]
    [argv] = finding.fix.commands
    assert argv[-1] == f"spec.nodeName={hostile}"
    [command] = finding.fix.to_dict()["commands"]
    assert shlex.split(command) == list(argv)


def test_a_not_ready_windows_node_is_matched_on_its_ready_message() -> None:
    [entry] = [e for e in CORPUS if e["where"] == "condition" and "antrea" in e["url"]]
    win = node("win-0", ready=False)
    win["status"]["conditions"][0]["message"] = entry["message"]
    findings = run_checks(snapshot_of(win))
    assert {(f.id, f.object.display()) for f in findings if f.id == entry["class"]} == {(entry["class"], "Node/win-0")}


def test_an_unrecognised_windows_warning_is_reported_folded_by_reason_with_codes_decoded() -> None:
    """Only a message in which the model finds no operation, component or Windows condition is unrecognised."""
    text = "the widget said no"  # no operation, component or condition
    other = "something new happened to the gadget"
    objs = [node("win-0"), node("linux-0", os="linux"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "Odd", text, host="win-0", count=2),
            event(("Pod", "shop", "web"), "Odd", text, host="win-0", count=3),
            event(("Pod", "shop", "web"), "Strange", other, host="win-0"),
            event(("Pod", "shop", "api"), "Odd", text, host="linux-0", count=9)]
    found = [f for f in run_checks(snapshot_of(*objs)) if f.id == symptoms.UNRECOGNISED]
    assert sorted((f.object.display(), f.severity, f.message.split(": ")[1]) for f in found) == [
        ("shop/Pod/web", "info", "Odd"), ("shop/Pod/web", "info", "Strange")]
    [odd] = [f for f in found if "Odd" in f.message]
    assert "5x" in odd.message


def test_a_new_mount_or_sandbox_failure_is_read_by_its_operation_and_condition_and_says_what_is_unsettled() -> None:
    """A mount that fails with a domain trust message names two subsystems (the volume's operation, the domain's
    identity) and a logon condition whose cause the message does not give: doctor says so, with both readings."""
    mount = 'Failed to mount volume "data": plugin wrote: The trust relationship between this workstation and the ' \
            'domain is lost'
    sandbox = "Failed to create pod sandbox: something new: A specified logon session does not exist. It may " \
              "already have been terminated."
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "FailedMount", mount, host="win-0", count=2),
            event(("Pod", "shop", "web"), "FailedCreatePodSandBox", sandbox, host="win-0")]
    found = [f for f in run_checks(snapshot_of(*objs)) if f.id.endswith("-failure")]
    assert [(f.id, f.confidence) for f in found] == [("windows-failure", "unsure")] * 2
    [mount_found] = [f for f in found if "FailedMount" in f.message]
    assert "subsystem not settled (perhaps volume)" in mount_found.message
    assert "could not mount the volume on win-0 (2x): the message does not say why" in mount_found.message
    [logon] = [f for f in found if "FailedCreatePodSandBox" in f.message]
    assert "0x520 ERROR_NO_SUCH_LOGON_SESSION" in logon.message and "create the pod sandbox" in logon.message
    assert all(f.fix.commands for f in found)


def test_failing_container_states_and_not_ready_conditions_are_placed_in_the_model() -> None:
    status = {"name": "app", "image": "img", "ready": False, "restartCount": 0,
              "state": {"waiting": {"reason": "CreateContainerConfigError",
                                    "message": "couldn't find key db-password in Secret shop/db"}}}
    crash = {"name": "app", "image": "img", "ready": False, "restartCount": 4,
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed"}}}
    win = node("win-1", ready=False)
    win["status"]["conditions"][0]["message"] = "container runtime is down: a new failure nobody has seen"
    objs = [node("win-0"), win, pod("web", windows_spec(), node="win-0", statuses=[status]),
            pod("web2", windows_spec(), node="win-0", statuses=[status]),
            pod("loop", windows_spec(), node="win-0", statuses=[crash])]
    found = {(f.id, f.object.display(), f.message) for f in run_checks(snapshot_of(*objs))
             if f.id.endswith("-failure")}
    # One sign (the operation) and no condition: the node is the likely place, and doctor says it is not settled.
    assert any(i == "windows-failure" and o == "Node/win-1" and "reach the container runtime" in m
               and "subsystem not settled (perhaps node)" in m for i, o, m in found), found
    states = [m for i, o, m in found if "CreateContainerConfigError" in m]
    assert len(states) == 2 and all("the pod references a ConfigMap, Secret or key that does not exist" in m
                                    for m in states)
    assert not [m for i, o, m in found if "back-off" in m]  # a back-off only restates the last termination
