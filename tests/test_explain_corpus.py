"""explain on real Windows manifests published by other projects (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.paths import SHARED_MANIFESTS
from tests.support.tools import require_corpus


@pytest.fixture(autouse=True, scope="module")
def _corpus() -> None:
    require_corpus()


@pytest.fixture(scope="module")
def report() -> dict:
    result = run_cli("explain", "-f", str(SHARED_MANIFESTS), "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert "error:" not in result.stderr  # every file is readable
    return result.json


def by_file(report: dict, name: str) -> set[tuple[str, str]]:
    return {(f["id"], f["severity"]) for f in report["findings"] if Path(f["file"]).name == name}


def test_every_published_workload_is_checked_as_a_windows_workload(report: dict) -> None:
    assert report["summary"]["objects"] >= 25


def test_the_only_error_is_the_uppercase_gmsa_name(report: dict) -> None:
    errors = [(Path(f["file"]).name, f["id"]) for f in report["findings"] if f["severity"] == "error"]
    assert errors == [("kubernetes-website__configure-gmsa-container-level.yaml", "windows-gmsa-name-invalid")]


@pytest.mark.parametrize(
    "name,expected",
    [
        ("azure-container-networking__cns-azure-cns-windows.yaml", ("windows-privileged", "warning")),
        ("csi-driver-smb__deploy-csi-smb-node-windows.yaml", ("windows-capabilities", "warning")),
        ("csi-driver-smb__deploy-csi-smb-node-windows.yaml", ("windows-seccomp-profile", "warning")),
        ("azurefile-csi-driver__deploy-csi-azurefile-node-windows.yaml", ("windows-seccomp-profile", "warning")),
        ("kubernetes-website__examples-windows-deploy-hyperv.yaml", ("windows-hyperv-isolation", "warning")),
        ("sig-windows-tools__kubeadm-kube-proxy-wins.yml", ("windows-volume-default-mode", "info")),
        # A Windows image and nothing else: on a cluster with Linux nodes its pods land there too (doctor says so).
        ("kubernetes-website__examples-windows-deploy-resource.yaml", ("windows-workload-no-os-selector", "warning")),
    ],
)
def test_genuine_problems_are_reported(report: dict, name: str, expected: tuple[str, str]) -> None:
    assert expected in by_file(report, name)


@pytest.mark.parametrize(
    "name",
    [
        "azure-aks-docs__quick-windows-container-deploy-sample.yaml",
    ],
)
def test_correct_manifests_stay_quiet(report: dict, name: str) -> None:
    assert by_file(report, name) == set()


def test_hostprocess_daemonsets_are_not_told_to_drop_host_network(report: dict) -> None:
    ids = {f["id"] for f in report["findings"] if "hostprocess" in Path(f["file"]).name}
    assert not ids & {
        "windows-host-network-ignored",
        "windows-hostprocess-host-network",
        "windows-hostprocess-not-all-containers",
        "windows-dns-cluster-first-with-host-net",
    }


def test_findings_point_at_real_lines(report: dict) -> None:
    for finding in report["findings"]:
        lines = Path(finding["file"]).read_text().splitlines()
        leaf = finding["path"].rsplit(".", 1)[-1].split("[")[0]
        # A missing field (a memory limit, the OS selector) points at the object that lacks it.
        missing = finding["id"] in ("windows-memory-limit-missing", "windows-workload-no-os-selector")
        assert leaf in lines[finding["line"] - 1] or missing, finding
