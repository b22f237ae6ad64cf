"""Windows patch level as a user sees it: the update history's data, `doctor nodes` on Node objects with real
revisions of every build (through the test API server), a node on a known-bad update, a mixed pool, an image
newer than its node and Microsoft's base images through the rig's registry, a support bundle's hotfix list, and
the metrics."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_win import updates
from tests.conftest import ApiServerHandle
from tests.support.cli import run_cli

AKS = {"kubernetes.azure.com/agentpool": "win25", "kubernetes.azure.com/cluster": "MC_rg_c_eu"}
EKS = {"eks.amazonaws.com/nodegroup": "win22"}
# (name, kernelVersion, the KB and month Microsoft's history gives for it, extra labels)
NODES = [
    ("win19-a", "10.0.17763.6414", "KB5044277", "2024-10", {}),
    ("win22-bad", "10.0.20348.2582", "KB5040437", "2024-07", {}),
    ("win23h2-a", "10.0.25398.1189", "KB5044288", "2024-10", {}),
    ("win25-a", "10.0.26100.32230", "KB5073379", "2026-01", {}),
    ("aks-win25-0", "10.0.26100.7171", "KB5068861", "2025-11", AKS),
    # A mixed pool: two nodes on the February 2025 update, one left on June 2024's.
    ("eks-win22-0", "10.0.20348.3207", "KB5051979", "2025-02", EKS),
    ("eks-win22-1", "10.0.20348.3207", "KB5051979", "2025-02", EKS),
    ("eks-win22-2", "10.0.20348.2527", "KB5039227", "2024-06", EKS),
    # What the update data of 2026-05 could not name: Windows Server 2025's first update and two 2026 revisions.
    ("win25-first", "10.0.26100.2033", "KB5044284", "2024-10", {}),
    ("win22-jul26", "10.0.20348.5386", "KB5099540", "2026-07", {}),
    ("win25-aug26", "10.0.26100.33296", "KB5120233", "2026-08", {}),
]
# The suite counts updates to 2026-12-06 (tests/conftest.py): the data ends with October 2026's updates, so
# November 10's is one estimated from the monthly cadence; June 2026 of 26100 is a month the data lacks.


def node(name: str, kernel: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    build = ".".join(kernel.split(".")[:3])
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
                                                  "node.kubernetes.io/windows-build": build, **(labels or {})}},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
            "status": {"nodeInfo": {"operatingSystem": "windows", "osImage": "Windows Server Datacenter",
                                    "kernelVersion": kernel, "containerRuntimeVersion": "containerd://1.7.22",
                                    "kubeletVersion": "v1.31.4"},
                       "capacity": {"memory": "16Gi"}, "allocatable": {"memory": "14Gi"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def write_dump(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def by_id(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["id"] == check]


# -- the data --------------------------------------------------------------------------------------------------

def test_every_build_has_a_consistent_history_with_a_source_per_row() -> None:
    assert set(updates.known_builds()) == {17763, 20348, 25398, 26100}
    for build in updates.known_builds():
        rows = updates.history(build)
        revisions = [u.revision for u in rows]
        assert revisions == sorted(set(revisions)), build  # one row per revision
        dates = [u.date for u in rows if u.kind != "release"]  # release media are built before their day
        assert dates == sorted(dates), build  # revisions grow with time
        kbs = [u.kb for u in rows if u.kb]
        assert len(kbs) == len(set(kbs)), build
        months = [u.month for u in rows if u.kind == "monthly"]
        assert len(months) == len(set(months)), build  # one monthly update a month
        for row in rows:
            assert row.source.startswith("https://"), row
            assert row.kind in ("monthly", "oob", "preview", "release"), row
            assert row.date[:7] >= row.month, row  # released in its month or just after it (out-of-band)


def test_a_kb_names_one_update_of_one_build() -> None:
    kbs = [u.kb for build in updates.known_builds() for u in updates.history(build) if u.kb]
    assert len(kbs) == len(set(kbs))


@pytest.mark.parametrize("build,first,last", [(17763, "2024-06", "2026-10"), (20348, "2024-06", "2026-10"),
                                              (26100, "2024-10", "2026-10"), (25398, "2023-11", "2025-10")])
def test_the_last_24_months_are_covered_monthly(build: int, first: str, last: str) -> None:
    """Every monthly update of the span the file's header gives, each with its KB, but for a month the file
    says it lacks (counted as estimated) and the rows only Microsoft's CVE records give (no KB)."""
    months = {u.month: u for u in updates.history(build) if u.kind == "monthly"}
    year, month = map(int, first.split("-"))
    while f"{year:04d}-{month:02d}" <= last:
        name = f"{year:04d}-{month:02d}"
        row = months.get(name)
        if row is None:
            assert name in updates.missing_between(build, 0, 10**6), (build, name)
        else:
            assert row.kb or row.source.startswith("https://www.cve.org/CVERecord?id="), (build, name)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def test_the_data_says_how_old_it_is() -> None:
    newest = max(u.date for build in updates.known_builds() for u in updates.history(build))
    assert updates.updates_to().isoformat() == newest == "2026-10-13"
    assert updates.assembled() >= newest
    assert updates.patch_tuesday(2026, 11) == dt.date(2026, 11, 10)
    assert updates.unlisted_since_data(20348, dt.date(2026, 12, 6)) == [dt.date(2026, 11, 10)]
    assert updates.unlisted_since_data(20348, dt.date(2027, 2, 9)) == [dt.date(2026, m, d) for m, d in
                                                                      ((11, 10), (12, 8))] + [dt.date(2027, 1, 12),
                                                                                              dt.date(2027, 2, 9)]
    assert updates.unlisted_since_data(25398, dt.date(2026, 12, 6)) == []  # no updates after its support ended


def test_rows_agree_with_microsofts_titles_and_cve_records() -> None:
    """A sample checked against a second source (the KB titles and Microsoft's CVE fixed versions)."""
    # "October 8, 2024—KB5044281 (OS Build 20348.2762)"; CVE-2023-28237; CVE-2026-20934; Azure Local's pages.
    for kb, version, date in [("KB5044281", "10.0.20348.2762", "2024-10-08"),
                              ("KB5025229", "10.0.17763.4252", "2023-04-11"),
                              ("KB5025230", "10.0.20348.1668", "2023-04-11"),
                              ("KB5073723", "10.0.17763.8276", "2026-01-13"),
                              ("KB5073457", "10.0.20348.4648", "2026-01-13"),
                              ("KB5073379", "10.0.26100.32230", "2026-01-13"),
                              ("KB5044288", "10.0.25398.1189", "2024-10-08"),
                              ("KB5099540", "10.0.20348.5386", "2026-07-14"),  # CVE-2026-56649
                              ("KB5122882", "10.0.20348.5622", "2026-09-08"),  # CVE-2026-69525
                              ("KB5122876", "10.0.17763.9245", "2026-09-08"),
                              ("KB5099536", "10.0.26100.33158", "2026-07-14"),
                              ("KB5044284", "10.0.26100.2033", "2024-10-08"),
                              ("KB5035856", "10.0.25398.763", "2024-03-12")]:  # the KB's page, not 25398.762
        row = updates.by_kb(kb)
        assert row is not None and (row.version, row.date) == (version, date), kb


def test_version_says_how_current_the_update_data_is() -> None:
    table = run_cli("version")
    assert table.exit_code == 0
    assert f"Windows update data  Microsoft's updates to 2026-10-13 (reviewed {updates.assembled()})" in table.stdout
    assert run_cli("version", "-o", "json").json["updateData"] == {"updatesTo": "2026-10-13",
                                                                  "reviewed": updates.assembled()}


def test_a_day_to_count_to_that_is_not_a_day_is_a_one_line_error(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    dump = write_dump(tmp_path / "d.json", [node("win22", "10.0.20348.5622")])
    monkeypatch.setenv("KUBECTL_WIN_TODAY", "next tuesday")
    result = run_cli("doctor", "nodes", "--from-dump", str(dump))
    assert result.exit_code == 2 and result.stderr.startswith("error: KUBECTL_WIN_TODAY='next tuesday' is not a day")
    assert "Traceback" not in result.stderr
    monkeypatch.setenv("KUBECTL_WIN_TODAY", "2027-02-10")  # four second Tuesdays after the data: Nov to Feb
    later = run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "json").json
    assert (later["nodes"][0]["patch"]["updatesBehind"], later["nodes"][0]["patch"]["estimatedUpdates"]) == (5, 4)


def test_each_revision_the_images_view_lists_names_its_update() -> None:
    assert updates.kb_of_version("10.0.20348.2700") == "KB5042881"
    assert updates.kb_of_version("10.0.20348.2701") == "after KB5042881"  # a hotpatch or unlisted revision
    assert updates.kb_of_version("10.0.17763.9376") == "KB not in the data"
    assert updates.kb_of_version("10.0.26100.1742") == "release build (no KB)"
    assert updates.kb_of_version("10.0.20348.9999") is None and updates.kb_of_version("6.1.0") is None


def test_a_hotfix_list_names_the_2026_updates() -> None:
    from kubectl_win.doctor.read.hotfixes import installed_updates

    listing = HOTFIXES + "WIN-A         Security Update  KB5122882     NT AUTHORITY\\SYSTEM  9/9/2026 12:00:00 AM\n"
    assert [u.version for u in installed_updates(listing)][-1] == "10.0.20348.5622"
    assert updates.by_kb("KB5099536").version == "10.0.26100.33158"


def test_each_problem_names_the_rows_it_spans() -> None:
    assert updates.problems()
    for problem in updates.problems():
        introduced, fixed = updates.by_kb(problem.introduced_by), updates.by_kb(problem.fixed_by)
        assert introduced is not None and fixed is not None, problem.id
        assert (introduced.build, introduced.revision) == (problem.build, problem.start), problem.id
        assert (fixed.build, fixed.revision) == (problem.build, problem.before), problem.id
        assert problem.sources and all(s.startswith("https://") for s in problem.sources), problem.id
        assert problem.established in ("microsoft", "reports"), problem.id


def test_revisions_between_rows_and_beyond_the_data() -> None:
    assert updates.running(20348, 2655).kb == "KB5041160"
    after = updates.running(20348, 2656)  # a hotpatch or an unlisted revision: after the row before it
    assert after is not None and after.kb == "KB5041160"
    assert updates.running(20348, 1) is None
    assert updates.parse_kernel("10.0.20348.2700 ") == (20348, 2700)
    assert updates.parse_kernel("5.15.0-1057-azure") is None
    assert [u.kb for u in updates.monthly_between(20348, 2582, 2762)] == ["KB5041160", "KB5042881", "KB5044281"]


# -- doctor nodes against the test API server ---------------------------------------------------------------

def seed_nodes(apiserver: ApiServerHandle) -> None:
    for name, kernel, _, _, labels in NODES:
        apiserver.put(node(name, kernel, labels))


def test_doctor_nodes_names_each_nodes_update(apiserver: ApiServerHandle) -> None:
    seed_nodes(apiserver)
    result = run_cli("doctor", "nodes", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json")
    assert result.exit_code == 1, result.stderr  # the node on the known-bad update is an error
    nodes = {n["name"]: n["patch"] for n in result.json["nodes"]}
    for name, kernel, kb, month, _ in NODES:
        patch = nodes[name]
        assert (patch["revision"], patch["kb"], patch["releaseMonth"]) == (int(kernel.rsplit(".", 1)[1]), kb, month)
        assert patch["newerThanData"] is False
    # Behind the newest monthly update the history knows for the build (2026-10), and November's, estimated.
    assert nodes["win22-bad"]["updatesBehind"] == len(updates.monthly_between(20348, 2582, 5761)) + 1 == 28
    assert (nodes["win22-bad"]["updatesBehindAtLeast"], nodes["win22-bad"]["behindEstimated"]) == (True, True)
    # Windows Server 2025: 8 monthly rows after January 2026, June 2026 (not in the data) and November.
    assert (nodes["win25-a"]["updatesBehind"], nodes["win25-a"]["estimatedUpdates"]) == (10, 2)
    assert nodes["win25-a"]["newestKnown"] == {"revision": 33650, "source": "data", "kb": None}
    assert result.json["updateData"] == {"updatesTo": "2026-10-13", "reviewed": updates.assembled(),
                                         "countedTo": "2026-12-06", "estimatedSince": ["2026-11-10"],
                                         "releaseTags": None}

    table = run_cli("doctor", "nodes", "--kubeconfig", str(apiserver.kubeconfig))
    lines = table.stdout.splitlines()
    assert lines[0].split()[:8] == ["NAME", "NODES", "READY", "OS-IMAGE", "BUILD", "REVISION", "UPDATE", "BEHIND"]
    row = {line.split()[0]: line.split() for line in lines[1:] if line.strip()}
    assert row["win22-bad"][1] == "1" and row["win22-bad"][6:10] == ["10.0.20348", "2582", "KB5040437", "2024-07"]
    # The mixed pool folds where revisions match and splits where they do not.
    assert row["eks-win22-0"][1:4] == ["+1", "more", "2"]
    assert row["eks-win22-0"][9:12] == ["3207", "KB5051979", "2025-02"]
    assert row["eks-win22-2"][1] == "1" and row["eks-win22-2"][7:10] == ["2527", "KB5039227", "2024-06"]
    assert row["win22-bad"][10] == "≥28" and row["win25-first"][8:11] == ["KB5044284", "2024-10", "≥25"]
    footer = next(i for i, line in enumerate(lines) if line.startswith("Update data: "))
    findings = next(i for i, line in enumerate(lines) if line.startswith(("ERRORS", "Node/")))
    assert footer < findings and lines[footer - 1].strip()
    assert lines[footer].startswith("Update data: Microsoft's updates to 2026-10-13 (reviewed ")
    assert "≥: a lower bound, with the monthly updates the data lacks (2026-11-10) estimated" in table.stdout


def test_patch_findings_name_the_kb_the_problem_and_the_fix(apiserver: ApiServerHandle) -> None:
    seed_nodes(apiserver)
    result = run_cli("doctor", "nodes", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json")
    [bad] = by_id(result.json, "windows-update-known-problem")
    assert bad["severity"] == "error" and bad["object"]["name"] == "win22-bad"
    assert "10.0.20348.2582 (KB5040437, 2024-07)" in bad["message"]
    assert "container networking on Kubernetes stops working" in bad["message"]
    assert "KB5044281 (10.0.20348.2762, 2024-10) fixes it" in bad["message"]
    # No platform label of its own: the cluster's platform (its EKS nodes show it) patches it.
    assert bad["fix"]["argv"][0][:3] == ["aws", "eks", "update-nodegroup-version"]

    behind = {f["object"]["name"]: f for f in by_id(result.json, "windows-updates-behind")}
    # Every node but the one on August 2026's update is more than 3 monthly updates behind (November counted).
    assert set(behind) == {n[0] for n in NODES} - {"win25-aug26"}
    eks = behind["eks-win22-2"]
    assert eks["severity"] == "warning" and "10.0.20348.2527 (KB5039227, 2024-06)" in eks["message"]
    assert "newest known for Windows Server 2022: 10.0.20348.5761 (KB not in the data, 2026-10); 1 of them " \
           "estimated from Microsoft's monthly release cadence (the update data ends on 2026-10-13)" in eks["message"]
    # EKS patches by AMI, AKS by node image: the fix names the pool the node's label gives.
    assert eks["fix"]["argv"] == [["aws", "eks", "update-nodegroup-version", "--cluster-name", "<cluster>",
                                   "--nodegroup-name", "win22"]]
    assert behind["aks-win25-0"]["fix"]["argv"] == [["az", "aks", "nodepool", "upgrade", "--resource-group",
                                                     "<resource-group>", "--cluster-name", "<cluster>", "--name",
                                                     "win25", "--node-image-only"]]

    [spread] = [f for f in by_id(result.json, "windows-revision-spread") if "pool win22" in f["message"]]
    assert spread["severity"] == "info" and spread["object"]["name"] == "eks-win22-2"
    assert spread["message"] == ("Windows nodes of pool win22 run 2 OS revisions: 10.0.20348.3207 (KB5051979, "
                                 "2025-02): eks-win22-0, eks-win22-1; 10.0.20348.2527 (KB5039227, 2024-06): "
                                 "eks-win22-2.")

    relaxed = run_cli("doctor", "nodes", "--kubeconfig", str(apiserver.kubeconfig), "-o", "json",
                      "--max-updates-behind", "20")
    assert {f["object"]["name"] for f in by_id(relaxed.json, "windows-updates-behind")} == {
        "win22-bad", "eks-win22-2", "win25-first", "win19-a", "eks-win22-0", "eks-win22-1"}
    bad_flag = run_cli("doctor", "nodes", "--kubeconfig", str(apiserver.kubeconfig), "--max-updates-behind", "-1")
    assert bad_flag.exit_code == 2 and bad_flag.stderr.startswith("error: --max-updates-behind")


def test_a_node_newer_than_the_data_is_never_a_problem(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.json", [node("win22-new", "10.0.20348.6001"), node("win22-old", "10.0.20348.5761")])
    result = run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "json")
    assert result.exit_code == 0, result.stdout  # nothing at or above the default --fail-on
    nodes = {n["name"]: n["patch"] for n in result.json["nodes"]}
    assert nodes["win22-new"]["newerThanData"] is True and nodes["win22-new"]["updatesBehind"] == 0
    assert nodes["win22-new"]["kb"] is None and nodes["win22-new"]["releaseMonth"] is None
    # The other node sees the cluster's newer revision as the newest known: at least one more update (November's,
    # estimated from the release cadence).
    old = nodes["win22-old"]
    assert (old["updatesBehind"], old["updatesBehindAtLeast"], old["behindEstimated"]) == (1, True, True)
    assert old["newestKnown"] == {"revision": 6001, "source": "cluster", "kb": None}
    assert old["kb"] is None and old["releaseMonth"] == "2026-10"  # a row the CVE records gave, without its KB
    table = run_cli("doctor", "nodes", "--from-dump", str(dump)).stdout
    assert "newer than known" in table and "≥1" in table and "KB not in the data 2026-10" in table
    # Two nodes newer than the data: the older of them is at least one update behind the newer.
    both = write_dump(tmp_path / "b.json", [node("win22-new", "10.0.20348.6001"),
                                            node("win22-newer", "10.0.20348.6100")])
    report = run_cli("doctor", "nodes", "--from-dump", str(both), "-o", "json").json
    nodes = {n["name"]: n["patch"] for n in report["nodes"]}
    assert (nodes["win22-new"]["updatesBehind"], nodes["win22-new"]["updatesBehindAtLeast"]) == (1, True)
    assert nodes["win22-newer"]["updatesBehind"] == 0


# -- images through the rig's registry -------------------------------------------------------------------------

WORKLOAD = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                         "tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "web", "image": "IMAGE",
                                         "resources": {"limits": {"memory": "1Gi"}}}]}}}}


def pod(name: str, node_name: str, image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web", "pod-template-hash": "5d8"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8",
                                              "controller": True}]},
            "spec": {"nodeName": node_name, "nodeSelector": {"kubernetes.io/os": "windows"},
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "web", "image": image, "resources": {"limits": {"memory": "1Gi"}}}]},
            "status": {"phase": "Running"}}


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_an_image_newer_than_its_node_through_the_registry(plain_registry, clean_env: Path) -> None:  # noqa: ANN001
    host = plain_registry.host
    plain_registry.push_image("patch/web", "feb2025", os_version="10.0.20348.3207")
    image = f"{host}/patch/web:feb2025"
    workload = json.loads(json.dumps(WORKLOAD).replace("IMAGE", image))
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web-5d8-b.1", "namespace": "shop"},
             "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "web-5d8-b"}, "reason": "Failed",
             "type": "Warning", "count": 3,
             "message": "Error: failed to create containerd task: failed to create shim task: hcs::System::Start "
                        "web: The virtual machine or container exited unexpectedly.: unknown (0xc0370106)"}
    items = [node("win22-old", "10.0.20348.2700"), node("win22-new", "10.0.20348.3207"), workload,
             pod("web-5d8-a", "win22-new", image), pod("web-5d8-b", "win22-old", image)]
    dump = write_dump(clean_env / "cluster.json", items)

    offline = run_cli("doctor", "--from-dump", str(dump), "-o", "json")
    assert not by_id(offline.json, "windows-image-newer-than-node")  # the registry was not read

    checked = run_cli("doctor", "--from-dump", str(dump), "--check-images", "--insecure-registry", host, "-o", "json")
    [found] = by_id(checked.json, "windows-image-newer-than-node")
    assert found["severity"] == "warning", found
    assert found["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}
    assert found["path"] == "spec.template.spec.containers[0].image"
    assert "built on 10.0.20348.3207 (KB5051979 of 2025-02), on node win22-old (10.0.20348.2700, KB5042881 of " \
           "2024-09)" in found["message"]
    assert "Install KB5051979 or newer on win22-old" in found["fix"]["note"]

    write_dump(dump, [*items, event])
    failing = run_cli("doctor", "--from-dump", str(dump), "--check-images", "--insecure-registry", host, "-o", "json")
    [found] = by_id(failing.json, "windows-image-newer-than-node")
    assert found["severity"] == "error" and "fail to start with 0xc0370106" in found["message"]

    images = run_cli("images", "--from-dump", str(dump), "--insecure-registry", host)
    lines = images.stdout.splitlines()
    assert lines[0].split()[:8] == ["NAMESPACE", "WORKLOAD", "CONTAINER", "IMAGE", "BUILD", "VERDICT", "IMAGE-OS",
                                    "OLDER-NODES"]
    # The image's revision and the older node's, each with the update it is.
    assert "10.0.20348.3207 KB5051979" in lines[1] and "win22-old (10.0.20348.2700, KB5042881)" in lines[1]
    as_json = run_cli("images", "--from-dump", str(dump), "--insecure-registry", host, "-o", "json").json
    [verdict] = as_json["workloads"][0]["images"][0]["verdicts"]
    assert verdict["olderNodes"] == [{"name": "win22-old", "osVersion": "10.0.20348.2700", "update": "KB5042881"}]
    assert verdict["update"] == "KB5051979"


@pytest.mark.parametrize("tag,message", [
    ("10.0.20348.3207", "hcs::System::Start web: The virtual machine or container exited unexpectedly.: unknown "
                        "(0xc0370106)"),
    ("ltsc2022-KB5051979", "failed to start containerd task: hcs::System::Start 5b0b: The virtual machine or "
                           "container exited unexpectedly.: unknown")])
def test_an_image_tag_newer_than_its_node_is_the_cause_without_a_registry(tmp_path: Path, tag: str,
                                                                          message: str) -> None:
    """Offline, the image's tag names its revision (10.0.BUILD.REVISION, or a KB of the history): an image
    built on February 2025's update fails on a node of September 2024 with 0xc0370106 (or its text), and doctor
    names that cause with both revisions instead of the compute-system failure's volumes/securityContext fix."""
    image = f"registry.example/shop/web:{tag}"
    workload = json.loads(json.dumps(WORKLOAD).replace("IMAGE", image))
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web-5d8-b.1", "namespace": "shop"},
             "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "web-5d8-b"}, "reason": "Failed",
             "type": "Warning", "count": 3, "message": f"Error: failed to create containerd task: {message}"}
    dump = write_dump(tmp_path / "cluster.json", [node("win22-old", "10.0.20348.2700"), workload,
                                                  pod("web-5d8-b", "win22-old", image), event])
    result = run_cli("doctor", "--from-dump", str(dump), "-o", "json")
    [found] = by_id(result.json, "windows-image-newer-than-node")
    assert found["severity"] == "error", found
    assert ("built on 10.0.20348.3207 (KB5051979 of 2025-02, as its tag says), on node win22-old (10.0.20348.2700, "
            "KB5042881 of 2024-09): its containers fail to start with 0xc0370106") in found["message"]
    assert "Install KB5051979 or newer on win22-old" in found["fix"]["note"]
    causes = {f["id"] for f in result.json["findings"] if f["object"].get("name") in ("web-5d8-b", "web")}
    assert not causes & {"symptom-compute-system-failed", "windows-runtime-failure"}, causes
    # A tag on the node's own revision is no such case, and the failure keeps its own diagnosis.
    same = write_dump(tmp_path / "same.json", [node("win22-old", "10.0.20348.3207"), workload,
                                               pod("web-5d8-b", "win22-old", image), event])
    other = run_cli("doctor", "--from-dump", str(same), "-o", "json").json
    assert not by_id(other, "windows-image-newer-than-node")
    assert {f["id"] for f in other["findings"]} & {"symptom-compute-system-failed", "windows-runtime-failure"}


def test_microsofts_base_images_raise_the_newest_known(plain_registry, clean_env: Path) -> None:  # noqa: ANN001
    """--check-images reads the os.version of Microsoft's base image of each node build (here through a mirror
    of mcr.microsoft.com on the rig's registry): a revision newer than the data becomes the newest known."""
    host = plain_registry.host
    plain_registry.push_image("windows/nanoserver", "ltsc2022", os_version="10.0.20348.5890")
    dump = write_dump(clean_env / "d.json", [node("win22", "10.0.20348.5622")])
    plain = run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "json")
    assert plain.json["nodes"][0]["patch"]["newestKnown"]["revision"] == 5761  # the data's October 2026
    checked = run_cli("doctor", "nodes", "--from-dump", str(dump), "--check-images", "--insecure-registry", host,
                      "--registry-mirror", f"mcr.microsoft.com={host}", "-o", "json")
    patch = checked.json["nodes"][0]["patch"]
    assert patch["newestKnown"] == {"revision": 5890, "source": "registry", "kb": None}
    assert not [s for s in checked.json["skipped"] if s["resource"].startswith("base image")]


def test_microsofts_image_tags_count_the_updates_after_the_data(plain_registry, clean_env: Path) -> None:  # noqa: ANN001
    """Microsoft tags each base image it publishes 10.0.BUILD.REVISION: with --check-images doctor reads the
    tag list of mcr.microsoft.com/windows/nanoserver (here its mirror on the rig's registry, read once) and counts
    the revisions after the data as updates, exactly; offline the same month is estimated from the cadence."""
    host = plain_registry.host
    for revision in ("10.0.20348.5622", "10.0.20348.5761", "10.0.20348.5890", "10.0.17763.9500"):
        plain_registry.push_image("windows/nanoserver", revision, os_version=revision)
    dump = write_dump(clean_env / "d.json", [node("win22", "10.0.20348.5622"), node("win22-nov", "10.0.20348.5890")])

    offline = run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "json").json
    patch = {n["name"]: n["patch"] for n in offline["nodes"]}
    assert (patch["win22"]["updatesBehind"], patch["win22"]["behindEstimated"]) == (2, True)  # Oct; Nov estimated

    checked = run_cli("doctor", "nodes", "--from-dump", str(dump), "--check-images", "--insecure-registry", host,
                      "--registry-mirror", f"mcr.microsoft.com={host}", "-o", "json")
    assert checked.exit_code == 0, checked.stderr
    patch = {n["name"]: n["patch"] for n in checked.json["nodes"]}
    win22 = patch["win22"]
    assert (win22["updatesBehind"], win22["updatesBehindAtLeast"], win22["behindEstimated"]) == (2, False, False)
    assert win22["newestKnown"]["revision"] == 5890
    assert (patch["win22-nov"]["updatesBehind"], patch["win22-nov"]["newerThanData"]) == (0, True)
    assert checked.json["updateData"]["releaseTags"].startswith("mcr.microsoft.com/windows/nanoserver")
    assert checked.json["updateData"]["estimatedSince"] == []
    table = run_cli("doctor", "nodes", "--from-dump", str(dump), "--check-images", "--insecure-registry", host,
                    "--registry-mirror", f"mcr.microsoft.com={host}").stdout
    assert "the updates after it counted from the tags of mcr.microsoft.com/windows/nanoserver" in table
    assert "≥" not in table.split("Update data:")[0]


def test_the_tag_list_is_read_once_through_the_registry_layer(plain_registry, clean_env: Path) -> None:  # noqa: ANN001
    from kubectl_win.registry.client import RegistryClient, RegistryOptions
    from kubectl_win.registry.credentials import CredentialStore
    from kubectl_win.registry.reference import parse_reference

    plain_registry.push_image("windows/servercore", "10.0.26100.33650", os_version="10.0.26100.33650")
    options = RegistryOptions(insecure=(plain_registry.host,),
                              mirrors={"mcr.microsoft.com": (plain_registry.host,)})
    with RegistryClient(options, CredentialStore({})) as client:
        ref = parse_reference("mcr.microsoft.com/windows/servercore")
        assert "10.0.26100.33650" in client.list_tags(ref)
        sent = client.requests
        assert "10.0.26100.33650" in client.list_tags(ref)
        assert client.requests == sent  # the second read is the first's answer


def test_a_base_image_the_registry_cannot_give_is_said_in_skipped(tmp_path: Path) -> None:
    from kubectl_win.doctor.run import DoctorOptions, _with_base_images, take_snapshot
    from kubectl_win.images.service import Resolved

    dump = write_dump(tmp_path / "d.json", [node("win22", "10.0.20348.5139"), node("win19", "10.0.17763.8755")])
    snapshot = take_snapshot(DoctorOptions(from_dump=str(dump)))
    asked: list[str] = []

    def unreachable(images: list[str]) -> dict[str, Resolved]:
        asked.extend(images)
        return {image: Resolved(image, error="cannot resolve mcr.microsoft.com") for image in images}

    checked = _with_base_images(snapshot, unreachable)
    assert asked == ["mcr.microsoft.com/windows/nanoserver:ltsc2019", "mcr.microsoft.com/windows/nanoserver:ltsc2022"]
    assert [(s.resource, s.reason) for s in checked.skipped[-2:]] == [
        ("base image mcr.microsoft.com/windows/nanoserver:ltsc2019", "cannot resolve mcr.microsoft.com"),
        ("base image mcr.microsoft.com/windows/nanoserver:ltsc2022", "cannot resolve mcr.microsoft.com")]


def test_tag_lists_the_registry_cannot_give_are_said_in_skipped_and_the_count_is_estimated(tmp_path: Path) -> None:
    from kubectl_win.doctor import patchlevel
    from kubectl_win.doctor.run import DoctorOptions, _with_release_tags, take_snapshot

    dump = write_dump(tmp_path / "d.json", [node("win22", "10.0.20348.5622")])
    snapshot = take_snapshot(DoctorOptions(from_dump=str(dump)))
    asked: list[str] = []

    def unreachable(repository: str) -> tuple[list[str], str | None]:
        asked.append(repository)
        return [], "cannot resolve mcr.microsoft.com"

    checked = _with_release_tags(snapshot, unreachable)
    assert asked == ["mcr.microsoft.com/windows/nanoserver", "mcr.microsoft.com/windows/servercore"]
    assert [(s.resource, s.reason) for s in checked.skipped[-1:]] == [
        ("base image tags", "mcr.microsoft.com/windows/nanoserver: cannot resolve mcr.microsoft.com; "
                            "mcr.microsoft.com/windows/servercore: cannot resolve mcr.microsoft.com")]
    assert patchlevel.assess(checked)["win22"].estimated == 1  # November's, from the cadence
    # The second repository answers: its tags count, and other builds' tags are not kept.
    answered = _with_release_tags(snapshot, lambda repo: (["ltsc2022", "10.0.20348.5890", "10.0.17763.9500"], None)
                                  if repo.endswith("nanoserver") else ([], "never asked"))
    assert answered.release_tags == {20348: (5890,)}
    assert (patchlevel.assess(answered)["win22"].behind, patchlevel.assess(answered)["win22"].estimated) == (2, 0)


# -- the support bundle ----------------------------------------------------------------------------------------

HOTFIXES = """
Source        Description      HotFixID      InstalledBy          InstalledOn
------        -----------      --------      -----------          -----------
WIN-A         Update           KB5042881     NT AUTHORITY\\SYSTEM  9/11/2024 12:00:00 AM
WIN-A         Security Update  KB5044281     NT AUTHORITY\\SYSTEM  10/9/2024 12:00:00 AM
WIN-A         Update           KB5043935     NT AUTHORITY\\SYSTEM  10/9/2024 12:00:00 AM
"""


def test_the_bundle_hotfix_list_gives_the_same_verdicts(tmp_path: Path) -> None:
    from tests.support.node_archives import OS_WIN2022, node_files
    from tests.test_doctor_bundle import doctor_json, make_bundle

    # The bundle's cluster.json lost the nodes' kernelVersion: the node's os.json and hotfix list stand in.
    objects = [node("win-a", "10.0.20348.2582")]
    del objects[0]["status"]["nodeInfo"]["kernelVersion"]
    dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()
    files = node_files("win-a")
    files["node/os.json"] = {**OS_WIN2022, "UBR": 2582}
    files["node/hotfixes.txt"] = HOTFIXES
    report = doctor_json(make_bundle(tmp_path, dump, {"win-a": files}))
    patch = report["nodes"][0]["patch"]
    assert (patch["revision"], patch["kb"], patch["releaseMonth"]) == (2582, "KB5040437", "2024-07")
    [bad] = by_id(report, "windows-update-known-problem")
    assert bad["object"]["name"] == "win-a" and "KB5044281 (10.0.20348.2762, 2024-10) fixes it" in bad["message"]
    [pending] = by_id(report, "bundle-update-installed-not-running")
    assert pending["message"] == ("win-a has KB5044281 (10.0.20348.2762, 2024-10) installed, but runs "
                                  "10.0.20348.2582: the update takes effect at the next restart "
                                  "(bundle: nodes/win-a/node/hotfixes.txt).")
    assert pending["file"] == "nodes/win-a/node/hotfixes.txt"


# -- metrics ---------------------------------------------------------------------------------------------------

def test_metrics_carry_each_nodes_release_time_and_updates_behind(tmp_path: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    dump = write_dump(tmp_path / "d.json", [node(name, kernel, labels) for name, kernel, _, _, labels in NODES])
    result = run_cli("doctor", "--from-dump", str(dump), "-o", "openmetrics")
    families = {f.name: f for f in text_string_to_metric_families(result.stdout)}
    released = {s.labels["node"]: s for s in families["kubectl_win_node_os_revision_release_timestamp_seconds"].samples}
    behind = {s.labels["node"]: s.value for s in families["kubectl_win_node_os_updates_behind"].samples}
    day = dt.datetime(2024, 7, 9, tzinfo=dt.UTC).timestamp()
    assert released["win22-bad"].value == day and released["win22-bad"].labels == {
        "cluster": "d.json", "node": "win22-bad", "build": "10.0.20348"}
    assert behind["win22-bad"] == 28 and behind["win25-a"] == 10 and behind["aks-win25-0"] == 12
    assert set(released) == set(behind) == {n[0] for n in NODES}
    estimated = {s.labels["node"]: s.value
                 for s in families["kubectl_win_node_os_updates_behind_estimated"].samples}
    assert estimated["win22-bad"] == 1 and estimated["win25-a"] == 2 and estimated["win23h2-a"] == 0
    [data] = families["kubectl_win_update_data_timestamp_seconds"].samples
    assert data.value == dt.datetime(2026, 10, 13, tzinfo=dt.UTC).timestamp()


def test_the_docs_show_what_doctor_nodes_prints() -> None:
    from tests.support.readme_examples import differences, examples, real_output

    root = Path(__file__).resolve().parents[1]
    checked = [e for e in examples((root / "docs" / "doctor.md").read_text()) if "patch-levels" in e.command]
    assert checked
    for example in checked:
        printed = [line for line in real_output(example.command) if line.strip()]  # blank lines are not compared
        assert differences(example.output, printed) == [], example.command


def test_the_html_report_has_each_nodes_update() -> None:
    root = Path(__file__).resolve().parents[1]
    page = run_cli("doctor", "nodes", "--from-dump", str(root / "kubectl_win" / "examples" / "patch-levels.json"),
                   "-o", "html").stdout
    assert '<th scope="col">Update</th>' in page
    assert "KB5040437 · 2024-07" in page and "≥28 monthly updates behind (1 estimated from the monthly release " \
                                              "cadence)" in page
    assert "KB5122882 · 2026-09" in page and "≥2 monthly updates behind" in page
    assert 'href="#' in page.split("KB5040437 · 2024-07", 1)[1].split("</td>", 1)[0]  # its findings, linked
