"""Image-platform failures read with the cluster's evidence: the build a pull asked for (from the message, else
the node) and its support status, which way round a build mismatch goes, and a Windows image on a Linux node."""

from __future__ import annotations

import pytest

from kubectl_win.doctor.checks import image_platform
from kubectl_win.doctor.checks.plan import run_checks
from tests.support.kube_objects import event, node, pod, snapshot_of, windows_spec


def test_a_pull_that_names_an_out_of_support_build_says_the_host_must_move() -> None:
    note = image_platform.variant_note("no matching manifest for windows/amd64 10.0.17134 in the manifest list "
                                       "entries", 20348)
    assert "Windows Server, version 1803 (10.0.17134)" in note
    assert "out of support since 2019-11-12" in note and "move the node" in note


def test_a_pull_without_a_build_names_the_nodes_and_its_tags() -> None:
    note = image_platform.variant_note('failed to pull and unpack image "mcr.microsoft.com/powershell:latest": no '
                                       "match for platform in manifest: not found", 17763)
    assert "Windows Server 2019 (10.0.17763)" in note and "ltsc2019" in note
    assert image_platform.variant_note("no match for platform", None) == ""


def test_a_mismatch_naming_both_builds_says_which_way_round() -> None:
    newer = image_platform.mismatch_note("a Windows version 10.0.20348-based image is incompatible with a "
                                         "10.0.19043 host")
    assert "newer than the host's build 19043" in newer and "never runs an image of a newer build" in newer
    older = image_platform.mismatch_note("a Windows version 10.0.17763-based image is incompatible with a "
                                         "10.0.20348 host")
    assert "older than the host's Windows Server 2022" in older and "Hyper-V isolation" in older
    assert "out of support since 2019-11-12" in image_platform.mismatch_note(
        "a Windows version 10.0.17763-based image is incompatible with a 10.0.17134 host")


def test_doctor_gives_the_direction_in_the_fix_of_the_finding() -> None:
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", "a Windows version 10.0.26100-based image is incompatible with "
                  "a 10.0.20348 host", host="win-0")]
    [found] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-os-build-mismatch"]
    assert found.confidence == "cause" and "newer than the host's Windows Server 2022" in found.fix.text()


def test_a_windows_image_on_a_linux_node_is_that_and_a_linux_nodes_arm64_miss_is_nothing() -> None:
    linux = {"containers": [{"name": "app", "image": "img"}]}
    objs = [node("win-0"), node("lin-0", os="linux"), pod("w", linux, node="lin-0"), pod("a", linux, node="lin-0"),
            event(("Pod", "shop", "w"), "Failed", 'Failed to pull image "mcr.microsoft.com/windows/nanoserver:'
                  'ltsc2022": rpc error: code = NotFound desc = failed to pull and unpack image "mcr.microsoft.com/'
                  'windows/nanoserver:ltsc2022": no match for platform in manifest: not found', host="lin-0"),
            event(("Pod", "shop", "a"), "Failed", 'Failed to pull image "ghcr.io/acme/tool:1": rpc error: code = '
                  'NotFound desc = failed to pull and unpack image "ghcr.io/acme/tool:1": no match for platform in '
                  "manifest: not found", host="lin-0")]
    found = {f.object.name: f for f in run_checks(snapshot_of(*objs)) if f.id.startswith("symptom-")}
    assert set(found) == {"w"}
    assert found["w"].id == "symptom-no-matching-platform" and found["w"].confidence == "cause"
    assert '"kubernetes.io/os":"windows"' in found["w"].fix.text()


def test_the_build_the_message_names_gives_one_answer_on_every_path() -> None:
    from kubectl_win.doctor.checks.bundle_logs import scan_file
    from kubectl_win.doctor.deep import scan_lines

    text = "no matching manifest for windows/amd64 10.0.17134 in the manifest list entries"
    objs = [node("win-0"), pod("web", windows_spec(), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", text, host="win-0")]
    # The message does not say whether the tag has any Windows entry (unsure), but the build it names is out of
    # support: no image is published for it, whatever the tag, and the fix says so. It stays unsure: stated as the
    # cause, it was wrong for a Linux-only tag pulled onto such a node (a held-out answer turned wrong).
    answers = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-no-matching-platform"]
    answers += scan_lines("win-0", "containerd", [text])
    answers += scan_file("win-0", "nodes/win-0/logs/containerd.log", text)
    assert [(f.id, f.confidence) for f in answers] == [("symptom-no-matching-platform", "unsure")] * 3
    fixes = [f.fix.note for f in answers]
    assert all("out of support since 2019-11-12" in note for note in fixes), fixes


@pytest.mark.parametrize(("platforms", "decided", "said"), [
    ([{"os": "linux", "architecture": "amd64"}, {"os": "linux", "architecture": "arm64"}], True,
     "not a Windows image (only linux/amd64, linux/arm64)"),
    ([{"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.2227"}], True,
     "only newer Windows builds"),
    ([{"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.5329"}], False, None),
], ids=["linux-only-tag", "other-build", "a-variant-runs"])
def test_the_registry_s_answer_decides_a_pull_the_message_leaves_open(platforms: list[dict[str, str]],
                                                                     decided: bool, said: str | None) -> None:
    """Docker's "no matching manifest for windows/amd64 10.0.17763" does not say whether the tag has any Windows
    entry: what the registry listed (doctor --check-images) does, and the finding says it; without it, or when a
    variant runs on the node's build, the answer stays unsure."""
    image = "mcr.microsoft.com/dotnet/aspnet:8.0"
    text = "no matching manifest for windows/amd64 10.0.17763 in the manifest list entries"
    objs = [node("win-0", build=17763), pod("web", windows_spec(image), node="win-0"),
            event(("Pod", "shop", "web"), "Failed", text, host="win-0")]
    records = {image: {"digest": "sha256:" + "1" * 64, "platforms": platforms}}
    [offline] = [f for f in run_checks(snapshot_of(*objs)) if f.id == "symptom-no-matching-platform"]
    [read] = [f for f in run_checks(snapshot_of(*objs, images=records)) if f.id == "symptom-no-matching-platform"]
    assert offline.confidence == "unsure" and "--check-images" in offline.fix.note
    assert read.confidence == ("cause" if decided else "unsure")
    assert (said in read.fix.note) if said else "registry says" not in read.fix.note
    # doctor --deep reads the kubelet's line of the same pull with the same answer.
    from kubectl_win.doctor.deep import scan_lines

    line = ('E0203 21:24:07.319737 3768 remote_image.go:238] "PullImage from image service failed" err="rpc error: '
            f'code = Unknown desc = {text}" image="{image}"')
    [logged] = scan_lines("win-0", "kubelet", [line], snapshot=snapshot_of(*objs, images=records))
    assert (logged.id, logged.confidence) == (read.id, read.confidence)
    assert (said in logged.fix.note) if said else "registry says" not in logged.fix.note
