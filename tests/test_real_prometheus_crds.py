"""The ServiceMonitor and PrometheusRule of `scaffold monitor` against the prometheus-operator's own CRDs
(read from its Go module in the Go module cache at test time, never copied here), on the real
kube-apiserver of each supported minor: the CRDs' schemas judge the objects' shape."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.realcluster.build import PROMETHEUS_OPERATOR, BuildError, module_dir
from tests.realcluster.cluster import RealCluster
from tests.support.cli import run_cli
from tests.support.tools import missing_tool, require_kubectl

CRDS = ("monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml")


def kubectl(cluster: RealCluster, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cluster.workdir)}
    env.pop("KUBECONFIG", None)
    result = subprocess.run([require_kubectl(), "--kubeconfig", str(cluster.workdir / "kubeconfig"), *args],
                            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def crds(real_cluster: RealCluster) -> list[Path]:
    try:
        folder = module_dir(*PROMETHEUS_OPERATOR) / "example" / "prometheus-operator-crd"
    except BuildError as exc:
        missing_tool(f"the prometheus-operator CRDs: {exc}")
    paths = [folder / name for name in CRDS]
    for path in paths:
        kubectl(real_cluster, "apply", "--server-side", "-f", str(path))
    kubectl(real_cluster, "wait", "--for=condition=Established", "--timeout=120s",
            *[f"crd/{yaml.safe_load(p.read_text())['metadata']['name']}" for p in paths])
    return paths


def test_service_monitor_prometheus_rule_and_dashboard_are_accepted(
        real_cluster: RealCluster, crds: list[Path], tmp_path: Path) -> None:
    """Runs on both real servers; the objects are created for real (not a dry run)."""
    result = run_cli("scaffold", "monitor", "--image", "registry.example.com/kubectl-win:0.1.0",
                     "--service-monitor", "--prometheus-rule", "--grafana-dashboard", "-n", "kubectl-win-crds")
    assert result.exit_code == 0, result.stderr
    path = tmp_path / "monitor.yaml"
    path.write_text(result.stdout)
    # Strict field validation: a field the CRD's schema does not have fails the request.
    applied = kubectl(real_cluster, "apply", "--validate=strict", "-f", str(path))
    assert "servicemonitor.monitoring.coreos.com/kubectl-win created" in applied.stdout
    assert "prometheusrule.monitoring.coreos.com/kubectl-win created" in applied.stdout
    assert "configmap/kubectl-win-dashboard created" in applied.stdout
    stored = yaml.safe_load(kubectl(real_cluster, "-n", "kubectl-win-crds", "get", "prometheusrule", "kubectl-win",
                                    "-o", "yaml").stdout)
    sent = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "PrometheusRule"][0]
    assert stored["spec"] == sent["spec"]  # nothing pruned by the schema


def test_a_misshapen_rule_is_refused_by_the_crd(real_cluster: RealCluster, crds: list[Path], tmp_path: Path) -> None:
    """The check can fail: the same rule with `for` as a number is refused by the CRD's schema."""
    result = run_cli("scaffold", "monitor", "--image", "registry.example.com/kubectl-win:0.1.0",
                     "--prometheus-rule", "-n", "kubectl-win-crds-bad")
    rule = [doc for doc in yaml.safe_load_all(result.stdout) if doc and doc["kind"] == "PrometheusRule"][0]
    rule["spec"]["groups"][0]["rules"][0]["for"] = 15
    kubectl(real_cluster, "create", "namespace", "kubectl-win-crds-bad")
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(rule))
    refused = kubectl(real_cluster, "apply", "-f", str(path), check=False)
    assert refused.returncode != 0
    assert "spec.groups[0].rules[0].for" in refused.stderr
