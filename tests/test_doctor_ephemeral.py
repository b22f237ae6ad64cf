"""Pods doctor checks on their own rather than through their template's representative pod (ephemeral
containers added by `kubectl debug`), and the workloads pinned to Linux that doctor keeps only in part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ApiServerHandle
from tests.support.cli import run_cli
from tests.support.kube_objects import deployment_pod, event, gmsa, linux_spec, namespace, node, windows_spec, workload

DEBUG_PATH = "spec.ephemeralContainers[0].securityContext.capabilities"


def debugger(image: str = "mcr.microsoft.com/windows/nanoserver:ltsc2022") -> dict[str, Any]:
    """What `kubectl debug -it POD --image IMAGE` adds, here with a capability Windows rejects."""
    return {"name": "debugger-x7k2p", "image": image, "stdin": True, "tty": True,
            "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}


def web_pods(debugged: str, image: str = "mcr.microsoft.com/windows/servercore:ltsc2022",
             debug_image: str = "mcr.microsoft.com/windows/nanoserver:ltsc2022") -> list[dict[str, Any]]:
    """Three pods of Deployment web on a Windows node; the one with suffix `debugged` has a debug container."""
    pods = []
    for suffix in ("aaaaa", "bbbbb", "ccccc"):
        pod = deployment_pod("web", suffix, windows_spec(image), node="win-1")
        if suffix == debugged:
            pod["spec"]["ephemeralContainers"] = [debugger(debug_image)]
        pods.append(pod)
    return pods


def dump(folder: Path, *items: dict[str, Any]) -> str:
    path = folder / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}), encoding="utf-8")
    return str(path)


def doctor_json(path: str) -> dict[str, Any]:
    result = run_cli("doctor", "--from-dump", path, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    return result.json


@pytest.mark.parametrize("debugged", ["aaaaa", "bbbbb", "ccccc"])
def test_a_debug_container_is_checked_whichever_pod_of_the_deployment_has_it(tmp_path, debugged) -> None:  # noqa: ANN001
    report = doctor_json(dump(tmp_path, node("win-1"), workload("Deployment", "web", windows_spec()),
                              *web_pods(debugged)))
    on_debug = [f for f in report["findings"] if f["path"] == DEBUG_PATH]
    assert [f["object"]["name"] for f in on_debug] == [f"web-5d8f7c9b6-{debugged}"]
    assert on_debug[0]["id"] == "windows-capabilities"


def test_the_other_pods_of_the_deployment_are_still_reported_once(tmp_path) -> None:  # noqa: ANN001
    # A finding of the template (no memory limit reads as one per workload; a forbidden field as one per group):
    # the pods without the debug container stay one group, the debugged pod is reported on its own.
    spec = windows_spec(securityContext={"windowsOptions": {"hostProcess": False}, "runAsNonRoot": True,
                                         "seLinuxOptions": {"level": "s0"}})
    pods = []
    for suffix in ("aaaaa", "bbbbb", "ccccc"):
        pod = deployment_pod("web", suffix, spec, node="win-1")
        if suffix == "bbbbb":
            pod["spec"]["ephemeralContainers"] = [debugger()]
        pods.append(pod)
    report = doctor_json(dump(tmp_path, node("win-1"), workload("Deployment", "web", spec), *pods))
    selinux = [f for f in report["findings"] if f["path"] == "spec.securityContext.seLinuxOptions"]
    assert sorted(f["object"]["name"] for f in selinux) == ["web-5d8f7c9b6-aaaaa", "web-5d8f7c9b6-bbbbb"]
    grouped = next(f for f in selinux if f["object"]["name"] == "web-5d8f7c9b6-aaaaa")
    assert "(the same in 1 more pods of ReplicaSet/web-5d8f7c9b6)" in grouped["message"]


def test_a_linux_debug_container_on_a_linux_pod_changes_nothing(tmp_path) -> None:  # noqa: ANN001
    pods = [deployment_pod("api", suffix, linux_spec(), node="linux-1") for suffix in ("aaaaa", "bbbbb")]
    plain = doctor_json(dump(tmp_path, node("win-1"), node("linux-1", os="linux"),
                             workload("Deployment", "api", linux_spec()), *pods))
    pods[1]["spec"]["ephemeralContainers"] = [debugger("busybox:1.36")]
    debugged = doctor_json(dump(tmp_path, node("win-1"), node("linux-1", os="linux"),
                                workload("Deployment", "api", linux_spec()), *pods))
    assert debugged["findings"] == plain["findings"]


def test_images_reads_the_debug_container_of_any_pod(plain_registry, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("HOME", str(tmp_path))
    host = plain_registry.host
    items = [node("win-1", build=17763), workload("Deployment", "web", windows_spec(f"{host}/lib/multi-oci")),
             *web_pods("bbbbb", f"{host}/lib/multi-oci", f"{host}/lib/linux")]
    result = run_cli("images", "--from-dump", dump(tmp_path, *items), "--insecure-registry", host, "-o", "json")
    assert result.exit_code == 1, result.stderr  # the debug container's Linux-only image
    web = next(w for w in result.json["workloads"] if w["name"] == "web")
    entry = next(i for i in web["images"] if i["container"] == "debugger-x7k2p")
    assert entry["path"] == "spec.ephemeralContainers[0]"
    assert [v["verdict"] for v in entry["verdicts"]] == ["no-variant"]


# -- workloads pinned to Linux: kept only for the gMSA and HostProcess checks and an event's fix -------------------
def test_a_linux_pinned_workload_is_still_checked_for_gmsa_and_hostprocess(tmp_path) -> None:  # noqa: ANN001
    spec = linux_spec(securityContext={"windowsOptions": {"gmsaCredentialSpecName": "webapp2", "hostProcess": True}})
    report = doctor_json(dump(tmp_path, node("win-1"), node("linux-1", os="linux"), gmsa("webapp1"),
                              namespace("ops", **{"pod-security.kubernetes.io/enforce": "baseline"}),
                              workload("Deployment", "agent", spec, namespace="ops")))
    ids = {f["id"] for f in report["findings"] if f["object"]["name"] == "agent"}
    assert ids == {"gmsa-credential-spec-missing", "hostprocess-blocked-by-pod-security"}


def test_an_untolerated_taint_event_of_a_gone_pod_names_its_linux_pinned_deployment(tmp_path) -> None:  # noqa: ANN001
    message = ("0/2 nodes are available: 1 node(s) had untolerated taint {os: windows}, 1 node(s) had "
               "insufficient memory.")
    report = doctor_json(dump(tmp_path, node("win-1"), node("linux-1", os="linux"),
                              workload("Deployment", "api", linux_spec()),
                              event(("Pod", "shop", "api-5d8f7c9b6-abcde"), "FailedScheduling", message)))
    taint = [f for f in report["findings"] if f["id"] == "symptom-untolerated-windows-taint"]
    assert len(taint) == 1
    assert "kubectl patch deployment api -n shop" in json.dumps(taint[0]["fix"])


def test_live_pages_and_a_saved_dump_give_the_same_report(apiserver: ApiServerHandle, tmp_path) -> None:  # noqa: ANN001
    # Live, most Linux pods are dropped after a few lookups on their page; from a dump each goes through the
    # builder in full: both must see the same cluster.
    items = [node("win-1"), node("linux-1", os="linux"), gmsa("webapp1"),
             workload("Deployment", "web", windows_spec()), *web_pods("ccccc"),
             workload("Deployment", "api", linux_spec(selector=False))]
    items += [deployment_pod("api", f"a{n:04d}", linux_spec(selector=False), node="linux-1") for n in range(40)]
    items[-1]["spec"]["ephemeralContainers"] = [debugger("busybox:1.36")]
    items += [deployment_pod("api", "wwwww", linux_spec(selector=False), node="win-1")]  # landed on Windows
    for item in items:
        apiserver.put(item)
    saved = tmp_path / "saved.json"
    live = run_cli("doctor", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json", "--save-dump", str(saved))
    assert live.exit_code in (0, 1), live.stderr
    assert [f["object"]["name"] for f in live.json["findings"] if f["path"] == DEBUG_PATH] == ["web-5d8f7c9b6-ccccc"]
    assert live.json["summary"]["podsScanned"] == 44
    kept = {o["metadata"]["name"] for o in json.loads(saved.read_text())["items"] if o["kind"] == "Pod"}
    assert kept == {"web-5d8f7c9b6-aaaaa", "web-5d8f7c9b6-bbbbb", "web-5d8f7c9b6-ccccc", "api-5d8f7c9b6-wwwww"}
    again = run_cli("doctor", "--from-dump", str(saved), "-o", "json")
    assert again.stdout == live.stdout


def test_a_page_item_that_is_not_an_object_is_named_and_passed_over() -> None:
    from kubectl_win.doctor.build import SnapshotBuilder

    builder = SnapshotBuilder()
    builder.add_page("Node", "v1", [node("win-1")])
    pod = deployment_pod("web", "aaaaa", windows_spec(), node="win-1")
    del pod["kind"], pod["apiVersion"]  # as on the wire
    builder.add_page("Pod", "v1", [7, pod, "x"])
    builder.add_page("Event", "v1", {"not": "a list"})
    snapshot = builder.build()
    assert [p.name for p in snapshot.pods] == ["web-5d8f7c9b6-aaaaa"]
    assert [(s.resource, s.reason) for s in snapshot.skipped] == [
        ("pods", "items[0] is a int, not an object"), ("pods", "items[2] is a str, not an object"),
        ("events", "a list page's items are a dict, not a list")]
