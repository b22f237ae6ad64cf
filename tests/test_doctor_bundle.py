"""doctor --from-bundle on bundles built from the real-shaped HNS dumps in tests/fixtures/hns/ and real log lines:
findings per node and pod naming their file and line, the node facts, the HTML report, and safe reading of
hostile bundles."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from kubectl_win.collect.bundle import BUNDLE_FORMAT, read_folder, read_tar
from kubectl_win.collect.gather import CollectOptions, NodeResult, write_bundle
from kubectl_win.errors import InputError
from tests.support.cli import CliResult, run_cli
from tests.support.hns_scenarios import HNS_FIXTURES, SCENARIOS
from tests.support.node_archives import CONTAINERD_CONFIG, node_archive, node_files


def kwin(*args: str) -> CliResult:
    """The real entry point, in-process (the same parsing, output and exit status as the command)."""
    return run_cli(*args)


@pytest.fixture(scope="module")
def cluster_dump(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("dump") / "cluster.json"
    result = kwin("doctor", "--from-dump", str(HNS_FIXTURES / "cluster.json"), "--save-dump", str(path), "-o", "json")
    assert path.exists(), result.stderr
    return path.read_bytes()


def make_bundle(folder: Path, cluster_dump: bytes, nodes: dict[str, dict[str, Any] | str], name: str = "b.tar.gz",
                errors: dict[str, dict[str, str]] | None = None) -> Path:
    """A bundle as collect writes it: node -> its files, or an error text for a node that failed."""
    results = []
    for node, files in nodes.items():
        if isinstance(files, str):
            results.append(NodeResult(node, errors=[files]))
        else:
            results.append(NodeResult(node, node_archive(files, errors=(errors or {}).get(node))))
    out = folder / name
    write_bundle(CollectOptions(output=str(out)), cluster_dump, results, [])
    return out


def doctor_json(bundle: Path, *args: str) -> dict[str, Any]:
    result = kwin("doctor", "--from-bundle", str(bundle), "-o", "json", "--fail-on", "never", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def by_id(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["id"] == check]


def test_log_lines_become_findings_on_their_pod_with_file_and_line(tmp_path: Path, cluster_dump: bytes) -> None:
    bundle = make_bundle(tmp_path, cluster_dump, {"win-a": node_files("win-a", broken_pod_image=True),
                                                  "win-b": node_files("win-b")})
    report = doctor_json(bundle)
    [mismatch] = by_id(report, "symptom-os-build-mismatch")  # klog, escaped quotes, pod="shop/web-..."
    assert mismatch["object"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-7d9c8-x2kqp"}
    assert (mismatch["file"], mismatch["line"]) == ("nodes/win-a/logs/kubelet.log", 3)
    assert "(on win-a, bundle: nodes/win-a/logs/kubelet.log:3)" in mismatch["message"]
    assert "0xC0370101 = HCS_E_IMAGE_MISMATCH" in mismatch["message"]
    [hns_failure] = by_id(report, "symptom-hns-failure")  # no pod named on the line: the node
    assert hns_failure["object"]["kind"] == "Node" and hns_failure["object"]["name"] == "win-a"
    assert 'sandbox "5a4a06b6983a"' in hns_failure["message"]  # \" unescaped
    layers = by_id(report, "symptom-layer-import-failed")  # containerd logfmt, pod from PodSandboxMetadata
    assert sorted((f["file"], f["line"], f["object"]["name"]) for f in layers) == [
        ("nodes/win-a/logs/containerd.log", 2, "web-7d9c8-x2kqp"), ("nodes/win-b/logs/containerd.log", 2,
                                                                     "web-7d9c8-x2kqp")]
    assert {f["file"] for f in by_id(report, "symptom-kube-proxy-policy")} == {
        "nodes/win-a/logs/kube-proxy.log", "nodes/win-b/logs/kube-proxy.log"}
    assert [n["node"] for n in report["hns"]["nodes"]] == ["win-a", "win-b"]
    assert report["hns"]["nodes"][0]["counts"]["loadBalancers"] == 7
    # The cluster checks ran on cluster.json too.
    assert by_id(report, "windows-node-untainted")


def test_scopes_keep_their_findings(tmp_path: Path, cluster_dump: bytes) -> None:
    bundle = make_bundle(tmp_path, cluster_dump, {"win-a": node_files("win-a", broken_pod_image=True)})
    nodes = run_cli("doctor", "nodes", "--from-bundle", str(bundle), "-o", "json").json
    assert {f["object"]["kind"] for f in nodes["findings"]} <= {"Node", "Cluster"}
    assert by_id(nodes, "symptom-hns-failure") and not by_id(nodes, "symptom-os-build-mismatch")
    workloads = run_cli("doctor", "workloads", "-A", "--from-bundle", str(bundle), "-o", "json").json
    assert not [f for f in workloads["findings"] if f["file"]] and "hns" not in workloads


def test_hns_checks_run_per_node_against_the_cluster(tmp_path: Path, cluster_dump: bytes) -> None:
    dump, _ = {s.name: s for s in SCENARIOS}["stale remote endpoint"].build()
    files = node_files("win-a")
    files["hns.json"] = dump
    bundle = make_bundle(tmp_path, cluster_dump, {"win-a": files, "win-b": node_files("win-b")})
    report = doctor_json(bundle)
    [stale] = by_id(report, "hns-stale-remote-endpoint")
    assert stale["file"] == "nodes/win-a/hns.json" and "10.244.2.50" in stale["message"]
    assert stale["message"].endswith("(bundle: nodes/win-a/hns.json)")


def test_node_facts_the_api_does_not_show(tmp_path: Path, cluster_dump: bytes) -> None:
    files = node_files("win-a", disk_free_gib=9)
    files["config/containerd/config.toml"] = CONTAINERD_CONFIG.replace(
        "pause:3.6", "pause:3.6-windows-ltsc2019-amd64")
    files["ports/excludedportrange-tcp.txt"] = ("Start Port    End Port\n----------    --------\n"
                                                "     49152       65279\n")
    bundle = make_bundle(tmp_path, cluster_dump, {"win-a": files, "win-b": node_files("win-b", disk_free_gib=18)})
    report = doctor_json(bundle)
    [sandbox] = by_id(report, "bundle-sandbox-image-build")
    assert sandbox["severity"] == "error" and sandbox["line"] == 3
    assert "built for Windows Server 2019 (17763), but the node runs Windows Server 2022 (20348)" in sandbox["message"]
    [ports] = by_id(report, "bundle-dynamic-ports-excluded")
    assert ports["object"]["name"] == "win-a" and ports["severity"] == "error"
    assert "cover 16128 of its 16384 dynamic ports (49152-65535); 256 remain" in ports["message"]
    assert "7 non-DSR load balancers take 448" in ports["message"]
    disks = sorted((f["object"]["name"], f["severity"]) for f in by_id(report, "bundle-low-disk"))
    assert disks == [("win-a", "error"), ("win-b", "warning")]


MIRRORS = """
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.registry.local"]
"""


def test_registry_mirrors_in_the_deprecated_settings(tmp_path: Path, cluster_dump: bytes) -> None:
    deprecated, conflicting = node_files("win-a"), node_files("win-b")
    deprecated["config/containerd/config.toml"] = CONTAINERD_CONFIG + MIRRORS
    conflicting["config/containerd/config.toml"] = CONTAINERD_CONFIG.replace(
        '[plugins."io.containerd.grpc.v1.cri".registry.configs', '[plugins."io.containerd.grpc.v1.cri".registry]\n'
        '  config_path = "C:\\\\Program Files\\\\containerd\\\\certs.d"\n'
        '[plugins."io.containerd.grpc.v1.cri".registry.configs') + MIRRORS
    report = doctor_json(make_bundle(tmp_path, cluster_dump, {"win-a": deprecated, "win-b": conflicting}))
    found = {f["object"]["name"]: f for f in by_id(report, "bundle-registry-mirrors")}
    assert found["win-a"]["severity"] == "info" and found["win-b"]["severity"] == "error"
    assert "docker.io -> https://mirror.registry.local" in found["win-a"]["message"]
    assert "config_path is set too" in found["win-b"]["message"]
    assert found["win-a"]["line"] == 7 and found["win-a"]["file"] == "nodes/win-a/config/containerd/config.toml"


def test_a_healthy_bundle_adds_nothing_to_the_cluster_checks(tmp_path: Path, cluster_dump: bytes) -> None:
    healthy = {"win-a": node_files("win-a"), "win-b": node_files("win-b")}
    for files in healthy.values():
        files["logs/containerd.log"] = files["logs/containerd.log"].splitlines()[0]
        files["logs/kube-proxy.log"] = files["logs/kube-proxy.log"].splitlines()[0]
        files["events/system.log"] = ("2026-12-01T02:05:00.0000000Z Information Service Control Manager 7036: The Host "
                                      "Network Service service entered the running state.\n")
    report = doctor_json(make_bundle(tmp_path, cluster_dump, healthy))
    from_nodes = [f["id"] for f in report["findings"] if f["file"]]
    assert from_nodes == []


def test_a_node_event_log_failure_no_entry_knows_is_read_by_the_model(tmp_path: Path, cluster_dump: bytes) -> None:
    """The HNS service ended unexpectedly: a service (node) of the network's HNS, and why it ended the line does
    not say, so doctor says the message settles neither the cause nor the subsystem."""
    files = {"win-a": node_files("win-a"), "win-b": node_files("win-b")}
    report = doctor_json(make_bundle(tmp_path, cluster_dump, files))
    [crash] = [f for f in by_id(report, "windows-failure") if f["object"]["name"] == "win-a"]
    assert crash["file"] == "nodes/win-a/events/system.log" and crash["line"] == 1
    assert crash["message"].startswith("Node/win-a: system events log: subsystem not settled (perhaps node): HNS (Host "
                                       "Networking Service) could not start a service on win-a (bundle: "
                                       "nodes/win-a/events/system.log:1): the message does not say why")
    assert crash["confidence"] == "unsure"
    assert crash["fix"]["commands"][0] == "kubectl win hns win-a"


def test_what_could_not_be_collected_is_said(tmp_path: Path, cluster_dump: bytes) -> None:
    bundle = make_bundle(tmp_path, cluster_dump, {
        "win-a": node_files("win-a"), "win-b": "the collection on win-b did not finish within its time budget"},
        errors={"win-a": {"events hns-admin": "No events were found that match the specified selection criteria."}})
    report = doctor_json(bundle)
    [missing] = by_id(report, "bundle-node-not-collected")
    assert missing["object"]["name"] == "win-b" and "time budget" in missing["message"]
    [partial] = by_id(report, "bundle-items-failed")
    assert partial["severity"] == "info" and "events hns-admin: error: No events" in partial["message"]
    assert report["hns"]["nodes"][1] == {"node": "win-b", "error": "the collection on win-b did not finish within "
                                                                   "its time budget"}


def test_a_folder_bundle_and_the_html_report(tmp_path: Path, cluster_dump: bytes) -> None:
    bundle = make_bundle(tmp_path, cluster_dump, {"win-a": node_files("win-a", broken_pod_image=True)})
    folder = tmp_path / "unpacked"
    folder.mkdir()
    subprocess.run(["tar", "-xzf", str(bundle), "-C", str(folder)], check=True)
    assert doctor_json(folder)["findings"] == doctor_json(bundle)["findings"]
    page = tmp_path / "report.html"
    result = kwin("doctor", "--from-bundle", str(bundle), "--report", str(page), "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    html = page.read_text()
    assert "bundle b.tar.gz" in html and "symptom-os-build-mismatch" in html
    assert "nodes/win-a/logs/kubelet.log:3" in html


@pytest.mark.parametrize(("flag", "value"), [("--from-dump", "x.json"), ("--deep", None),
                                             ("--kubeconfig", "k"), ("--save-dump", "y.json")])
def test_from_bundle_does_not_mix_with_other_sources(tmp_path: Path, flag: str, value: str | None) -> None:
    result = kwin("doctor", "--from-bundle", str(tmp_path / "b.tar.gz"), flag, *([value] if value else []))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and flag in result.stderr, result.stderr


def test_not_a_bundle_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tar")
    junk = kwin("doctor", "--from-bundle", str(tmp_path / "junk.tar.gz"))
    assert junk.exit_code == 2 and junk.stderr.startswith(f"error: {tmp_path / 'junk.tar.gz'}: not a tar archive")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "bundle.json").write_text('{"format": "someone-else/2"}')
    other = kwin("doctor", "--from-bundle", str(tmp_path / "other"))
    assert other.exit_code == 2 and "unsupported bundle format 'someone-else/2'" in other.stderr
    missing = kwin("doctor", "--from-bundle", str(tmp_path / "nope.tar.gz"))
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr


def test_a_broken_cluster_part_is_named_in_the_bundle(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, b'{"apiVersion": "v1", "kind": "List", "items": [', {"win-a": node_files("win-a")})
    result = kwin("doctor", "--from-bundle", str(bundle))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {bundle}: cluster.json: truncated JSON at line 1"), result.stderr


# -- reading hostile bundles ----------------------------------------------------------------------------------
def hostile_tar(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        header = json.dumps({"format": BUNDLE_FORMAT, "nodes": {}}).encode()
        info = tarfile.TarInfo("bundle.json")
        info.size = len(header)
        tar.addfile(info, io.BytesIO(header))
        for member, data in members:
            tar.addfile(member, io.BytesIO(data) if member.isreg() else None)
    return buffer.getvalue()


def member(name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE,
           link: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def test_names_leaving_the_bundle_links_and_devices_are_refused() -> None:
    bundle = read_tar(hostile_tar(member("../../etc/evil", b"boom"), member("/abs/path", b"boom"),
                                  member("nodes/a/../../up", b"boom"), member("C:/Windows/x", b"boom"),
                                  member("nodes/a\\..\\b", b"boom"),
                                  member("nodes/a/link", kind=tarfile.SYMTYPE, link="/etc/passwd"),
                                  member("nodes/a/hard", kind=tarfile.LNKTYPE, link="bundle.json"),
                                  member("nodes/a/dev", kind=tarfile.CHRTYPE),
                                  member("./nodes/a/ok.log", b"fine")), "hostile")
    assert sorted(bundle.files) == ["bundle.json", "nodes/a/ok.log"]
    assert len(bundle.refused) == 8


def test_sizes_are_capped() -> None:
    with pytest.raises(InputError, match="over the 0 MiB a bundle file may hold"):
        read_tar(hostile_tar(member("big.log", b"x" * 2048)), "big", max_member=1024)
    with pytest.raises(InputError, match="unpacked; not a bundle"):
        read_tar(hostile_tar(*(member(f"f{i}.log", b"x" * 600) for i in range(4))), "many", max_total=2000)
    with pytest.raises(InputError, match="more than 3 files"):
        read_tar(hostile_tar(*(member(f"f{i}.log") for i in range(4))), "count", max_members=3)


def test_a_folder_bundle_follows_no_links(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours")
    root = tmp_path / "bundle"
    (root / "nodes" / "a").mkdir(parents=True)
    (root / "bundle.json").write_text(json.dumps({"format": BUNDLE_FORMAT, "nodes": {}}))
    os.symlink(outside, root / "nodes" / "a" / "kubelet.log")
    os.symlink(tmp_path, root / "nodes" / "up")
    bundle = read_folder(str(root))
    assert sorted(bundle.files) == ["bundle.json"]
    assert sorted(bundle.refused) == ["nodes/a/kubelet.log: a link", "nodes/up: a link"]
