"""The verdict rule against published manifest lists of real images (tests/fixtures/images/*.json, each with
the public source it was taken from) and against the edge cases of containerd's matcher."""

from __future__ import annotations

import json

import pytest

from kubectl_win.images.compat import Platform, decide, parse_host, process_compatible
from kubectl_win.registry.media import index_platforms
from tests.support.paths import FIXTURES


def published(name: str) -> list[Platform]:
    data = json.loads((FIXTURES / "images" / name).read_text())
    assert data["source"].startswith("https://")
    return index_platforms(data["index"])


# image fixture, node build -> (verdict, chosen os.version, digest prefix)
CASES = [
    ("pause-3.8.json", "ltsc2019", "runs", "10.0.17763.2928", "sha256:78bfb9d8"),
    ("pause-3.8.json", "ltsc2022", "runs", "10.0.20348.707", "sha256:e8fb66bc"),
    ("pause-3.8.json", "ltsc2025", "runs", "10.0.20348.707", "sha256:e8fb66bc"),
    ("pause-3.8.json", "10.0.19042", "runs", "10.0.19042.1706", "sha256:9d056764"),
    ("pause-3.8.json", "10.0.18363", "hyperv-only", None, None),
    ("python-windows.json", "10.0.17763.5000", "runs", "10.0.17763.4851", "sha256:5981df14"),
    ("python-windows.json", "ltsc2022", "runs", "10.0.20348.1970", "sha256:53c5f0dd"),
    ("python-windows.json", "10.0.26100.2700", "runs", "10.0.20348.1970", "sha256:53c5f0dd"),
    ("python-windows.json", "10.0.14393", "no-variant", None, None),
    ("hello-world-latest.json", "ltsc2019", "no-variant", None, None),
    ("hello-world-latest.json", "ltsc2022", "runs", "10.0.20348.5499", "sha256:acb5b18e"),
    ("hello-world-latest.json", "ltsc2025", "runs", "10.0.26100.33296", "sha256:fc346cae"),
    ("aspnet-framework-multi-windows.json", "ltsc2019", "hyperv-only", None, None),
    ("aspnet-framework-multi-windows.json", "ltsc2022", "hyperv-only", None, None),
    ("aspnet-framework-multi-windows.json", "10.0.17134", "runs", "10.0.17134.345", "sha256:6ded1178"),
    ("aspnet-framework-multi-windows.json", "10.0.14393", "runs", "10.0.14393.2485", "sha256:081edad4"),
]


@pytest.mark.parametrize(("fixture", "build", "verdict", "variant", "digest"), CASES,
                         ids=[f"{c[0].split('.json')[0]}-{c[1]}" for c in CASES])
def test_published_manifest_lists_get_the_verdict_the_rule_gives(fixture, build, verdict, variant, digest) -> None:
    result = decide(published(fixture), parse_host(build))
    assert (result.verdict, result.variant) == (verdict, variant), result.reason
    if digest:
        assert result.digest.startswith(digest)
        assert variant in result.reason
    else:
        assert result.digest is None


def test_attestation_entries_are_not_platforms() -> None:
    platforms = published("hello-world-latest.json")
    assert len(platforms) == 11  # 9 Linux + 2 Windows of the 20 entries
    assert all(p.os != "unknown" for p in platforms)


def test_reasons_say_what_exists_and_what_hyperv_needs() -> None:
    hyperv = decide(published("aspnet-framework-multi-windows.json"), parse_host("ltsc2022"))
    assert "10.0.16299.726" in hyperv.reason and "runhcs-wcow-hypervisor" in hyperv.reason
    assert "containerd >= 1.7" in hyperv.reason and "AKS" in hyperv.reason
    newer = decide(published("hello-world-latest.json"), parse_host("ltsc2019"))
    assert newer.reason.startswith("only newer Windows builds (10.0.26100.33296, 10.0.20348.5499)")
    linux = decide([Platform("linux", "amd64"), Platform("linux", "arm64", variant="v8")], parse_host("ltsc2022"))
    assert (linux.verdict, linux.reason) == ("no-variant", "not a Windows image (only linux/amd64, linux/arm64/v8)")
    arm = decide(published("python-windows.json"), parse_host("ltsc2022"), architecture="arm64")
    assert arm.verdict == "no-variant" and arm.reason.startswith("no windows/arm64 image")


def test_the_runtime_prefers_the_greatest_os_version_string() -> None:
    """containerd compares os.version as strings: 10.0.20348.987 sorts above 10.0.20348.2700."""
    entries = [Platform("windows", "amd64", "10.0.20348.2700", digest="sha256:a"),
               Platform("windows", "amd64", "10.0.20348.987", digest="sha256:b")]
    assert decide(entries, parse_host("ltsc2022")).digest == "sha256:b"


def test_an_entry_without_os_version_matches_any_host() -> None:
    result = decide([Platform("windows", "amd64", digest="sha256:c")], parse_host("ltsc2019"))
    assert (result.verdict, result.variant, result.digest) == ("runs", None, "sha256:c")


@pytest.mark.parametrize(("host", "image", "ok"), [
    ("10.0.17763", "10.0.17763.1", True), ("10.0.17763", "10.0.20348.1", False),
    ("10.0.20348", "10.0.17763.1", False), ("10.0.26100", "10.0.20348.1", True),
    ("10.0.26100", "10.0.25398.1", True), ("10.0.26100", "10.0.26200.1", False),
    ("10.0.22621", "10.0.20348.1", True), ("10.0.20348", "6.3.20348", False), ("10.0.20348", "garbage", False),
])
def test_containerds_compatibility_function(host, image, ok) -> None:
    assert process_compatible(parse_host(host), image) is ok


def test_a_server_2016_host_warns_about_another_revision() -> None:
    result = decide(published("aspnet-framework-multi-windows.json"), parse_host("10.0.14393.9999"))
    assert result.verdict == "runs" and "may refuse an image of another revision" in result.reason


@pytest.mark.parametrize("text", ["ltsc2030", "10.0", "windows", ""])
def test_bad_builds_are_refused_with_the_accepted_forms(text) -> None:
    with pytest.raises(ValueError, match="expected ltsc2019, ltsc2022, ltsc2025"):
        parse_host(text)


def test_build_names_resolve_to_their_versions() -> None:
    assert parse_host("ltsc2025").version == "10.0.26100"
    assert parse_host("10.0.20348.2700").version == "10.0.20348.2700"
    assert parse_host("ltsc2022").given == "ltsc2022"
