"""The real-server rig itself: the version stamp, `python -m tests.realcluster up` and its clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.realcluster import build as builder
from tests.realcluster.cluster import RealCluster
from tests.support.paths import ROOT
from tests.support.tools import missing_tool


def test_version_reports_the_release_the_module_pins(real_cluster: RealCluster, kubectl: str) -> None:
    """Runs on both real servers: /version says v1.3x.y, not v0.0.0-master (the -X ldflags took)."""
    status, version = real_cluster.client().request("GET", "/version")
    assert status == 200
    assert version["gitVersion"] == real_cluster.version == builder.module_versions(real_cluster.component)[
        "k8s.io/kubernetes"]
    assert (version["major"], version["minor"]) == ("1", real_cluster.minor.split(".")[1])
    result = subprocess.run([kubectl, "--kubeconfig", str(real_cluster.kubeconfig), "version", "-o", "json"],
                            capture_output=True, text=True, timeout=60, env={"HOME": str(real_cluster.workdir)})
    assert result.returncode == 0, result.stderr
    assert f'"gitVersion": "{real_cluster.version}"' in result.stdout


def test_up_prints_the_kubeconfig_serves_and_stops_everything_on_sigterm(tmp_path: Path, kubectl: str) -> None:
    minor = builder.KUBERNETES_MINORS[0]
    if builder.missing(f"k8s-{minor}"):
        missing_tool(f"Kubernetes {minor} not built: run `python -m tests.realcluster build --version {minor}`")
    proc = subprocess.Popen([sys.executable, "-m", "tests.realcluster", "up", "--version", minor, "--dir",
                             str(tmp_path / "state")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        kubeconfig = proc.stdout.readline().strip()
        assert kubeconfig == str(tmp_path / "state" / "kubeconfig")
        listed = subprocess.run([kubectl, "--kubeconfig", kubeconfig, "get", "namespaces", "-o", "name"],
                                capture_output=True, text=True, timeout=60, env={"HOME": str(tmp_path)})
        assert "namespace/kube-system" in listed.stdout.split(), listed.stderr
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert len(children) == 2  # etcd and kube-apiserver
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    assert code == 0
    for pid in children:
        assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
