"""`kubectl win scaffold monitor` against the real kube-apiserver (each supported minor, RBAC on, Pod
Security admission on): the manifests applied with the real kubectl, doctor run with a token minted for
the ServiceAccount (no 403, the administrator's report), `kubectl auth can-i` showing it can read no
Secret and write nothing, and the pod passing Pod Security `restricted`."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.doctor.read import plan
from kubectl_win.kube.resources import resolve
from tests.realcluster.cluster import RealCluster
from tests.support.cli import run_cli

NAMESPACE = "kubectl-win"
ACCOUNT = f"system:serviceaccount:{NAMESPACE}:kubectl-win"
IMAGE = "registry.example.com/kubectl-win:0.1.0"
# What system:basic-user gives every authenticated identity: asking the server what it may do.
SELF_REVIEWS = {"selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io",
                "selfsubjectreviews.authentication.k8s.io"}
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
SENSITIVE = ("secrets", "configmaps", "pods", "pods/exec", "pods/eviction", "serviceaccounts/token", "nodes",
             "nodes/proxy", "namespaces", "deployments.apps", "daemonsets.apps", "services", "events",
             "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io")


def _kubectl(kubectl: str, kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(kubeconfig.parent)}  # kubectl's discovery cache beside the kubeconfig
    env.pop("KUBECONFIG", None)
    result = subprocess.run([kubectl, "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                            env=env, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def _token_kubeconfig(cluster: RealCluster, token: str, path: Path) -> Path:
    assert cluster.pki is not None
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "monitor",
        "clusters": [{"name": "real", "cluster": {"server": cluster.url,
                                                  "certificate-authority": str(cluster.pki.ca_cert)}}],
        "users": [{"name": "monitor", "user": {"token": token}}],
        "contexts": [{"name": "monitor", "context": {"cluster": "real", "user": "monitor"}}],
    }))
    os.chmod(path, 0o600)
    return path


@pytest.fixture(scope="module")
def installed(real_cluster: RealCluster, sample_refused: list,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample cluster with the monitor applied by `kubectl apply -f DIR` (as docs/monitor.md says) and a
    kubeconfig holding a token minted for its ServiceAccount."""
    from tests.support.tools import require_kubectl

    real_sample = real_cluster
    assert real_sample.pki is not None
    kubectl = require_kubectl()
    work = tmp_path_factory.mktemp(f"monitor-{real_sample.minor}")
    admin = real_sample.write_kubeconfig(work / "admin" / "kubeconfig", real_sample.pki.client(
        "admin", ("system:masters",)))
    out = work / "monitor"
    scaffold = run_cli("scaffold", "monitor", "--image", IMAGE, "--out", str(out))
    assert scaffold.exit_code == 0, scaffold.stderr
    applied = _kubectl(kubectl, admin, "apply", "-f", str(out))
    assert applied.stdout.count(" created") == 7, applied.stdout  # the NetworkPolicy too
    token = _kubectl(kubectl, admin, "create", "token", "kubectl-win", "-n", NAMESPACE).stdout.strip()
    (work / "monitor-user").mkdir()
    # The control: another account in the namespace, without a binding, has what every identity has.
    _kubectl(kubectl, admin, "create", "serviceaccount", "unbound", "-n", NAMESPACE)
    unbound = _kubectl(kubectl, admin, "create", "token", "unbound", "-n", NAMESPACE).stdout.strip()
    (work / "unbound-user").mkdir()
    return {"cluster": real_sample, "kubectl": kubectl, "admin": admin, "out": out,
            "account": _token_kubeconfig(real_sample, token, work / "monitor-user" / "kubeconfig"),
            "unbound": _token_kubeconfig(real_sample, unbound, work / "unbound-user" / "kubeconfig")}


def _doctor(kubeconfig: Path) -> tuple[int, dict[str, Any], str]:
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    return result.exit_code, (json.loads(result.stdout) if result.stdout else {}), result.stderr


def test_doctor_with_the_service_account_token_reads_everything_without_a_403(installed) -> None:
    """Runs on both real servers: not one resource skipped, and the report is the administrator's."""
    code, report, err = _doctor(installed["account"])
    assert err == "" and code == 1, err  # the sample cluster has errors to report
    assert report["skipped"] == []
    admin_code, admin, _ = _doctor(installed["admin"])
    assert (code, report["findings"], report["nodes"]) == (admin_code, admin["findings"], admin["nodes"])
    assert report["summary"] == admin["summary"] and report["summary"]["podsScanned"] > 0
    # /version (the kubelet skew checks) is read through system:public-info-viewer, not through the role.
    assert report["cluster"]["serverVersion"] == installed["cluster"].version


def test_without_the_binding_the_same_token_is_refused_everywhere(installed) -> None:
    """The control: the 403s the test above does not see are real. Another account in the namespace, with
    no binding, reads /version (system:public-info-viewer) and none of doctor's resources."""
    kubectl, unbound = installed["kubectl"], installed["unbound"]
    version = json.loads(_kubectl(kubectl, unbound, "get", "--raw", "/version").stdout)
    assert version["gitVersion"] == installed["cluster"].version
    code, report, err = _doctor(unbound)
    assert err == "" and code == 5, err  # nothing read: incomplete, never clean
    skipped = {s["resource"]: s["reason"] for s in report["skipped"]}
    assert set(skipped) == {*plan.CLUSTER_RESOURCES, *plan.NAMESPACED_RESOURCES}
    assert all(reason.startswith("forbidden: ") for reason in skipped.values()), skipped


def _can_i_list(installed: dict[str, Any], who: str) -> dict[str, set[str]]:
    """`kubectl auth can-i --list` as the account itself (its own token): row (resource, or [URL]) -> verbs."""
    listed = _kubectl(installed["kubectl"], installed[who], "auth", "can-i", "--list", "-n", NAMESPACE).stdout
    rows: dict[str, set[str]] = {}
    for line in listed.splitlines()[1:]:
        match = re.fullmatch(r"(\S*)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*", line.rstrip())
        assert match, line
        resource, urls, _names, verbs = match.groups()
        rows.setdefault(resource or f"[{urls}]", set()).update(verbs.split())
    return rows


def test_can_i_lists_get_and_list_on_what_doctor_reads_and_nothing_to_write(installed) -> None:
    """What the account may do beyond what every authenticated identity may (the unbound account) is exactly
    get and list on each resource doctor reads; nothing it may do writes, bar the self-reviews every
    identity may create; no Secret anywhere."""
    mine, everyone = _can_i_list(installed, "account"), _can_i_list(installed, "unbound")
    granted = {name: verbs - everyone.get(name, set()) for name, verbs in mine.items()}
    granted = {name: verbs for name, verbs in granted.items() if verbs}
    wanted = {resolve(r).plural + (f".{resolve(r).group}" if resolve(r).group else "")
              for r in (*plan.CLUSTER_RESOURCES, *plan.NAMESPACED_RESOURCES)}
    assert granted == {name: {"get", "list"} for name in wanted}
    writers = {name for name, verbs in mine.items() if verbs & {*WRITE_VERBS, "*"}}
    assert writers == SELF_REVIEWS, mine
    assert not [name for name in mine if "secret" in name or "configmap" in name], mine


@pytest.mark.parametrize("verb", WRITE_VERBS)
def test_can_i_says_no_to_every_write(installed, verb: str) -> None:
    for resource in SENSITIVE:
        for scope in (("-n", NAMESPACE), ("-A",)):
            asked = _kubectl(installed["kubectl"], installed["admin"], "auth", "can-i", verb, resource,
                             f"--as={ACCOUNT}", *scope, check=False)
            assert (asked.returncode, asked.stdout.strip()) == (1, "no"), (verb, resource, scope, asked.stdout)


def test_can_i_says_no_to_reading_secrets_and_yes_to_listing_pods(installed) -> None:
    for verb in ("get", "list", "watch"):
        for scope in (("-n", NAMESPACE), ("-n", "kube-system"), ("-A",)):
            asked = _kubectl(installed["kubectl"], installed["admin"], "auth", "can-i", verb, "secrets",
                             f"--as={ACCOUNT}", *scope, check=False)
            assert (asked.returncode, asked.stdout.strip()) == (1, "no"), (verb, scope)
    allowed = _kubectl(installed["kubectl"], installed["admin"], "auth", "can-i", "list", "pods",
                       f"--as={ACCOUNT}", "-A", check=False)
    assert (allowed.returncode, allowed.stdout.strip()) == (0, "yes")  # the check can say yes


def _pod_of_the_deployment(out: Path) -> dict[str, Any]:
    deployment = yaml.safe_load((out / "05-kubectl-win-deployment.yaml").read_text())
    template = deployment["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "monitor-pss", **template["metadata"]},
            "spec": copy.deepcopy(template["spec"])}


def test_the_pod_passes_pod_security_restricted(installed) -> None:
    """The Namespace the manifests create enforces `restricted`; the Deployment's pod, created by server-side
    dry run, is admitted, and the same pod with one of its settings removed is not (the check can fail)."""
    client = installed["cluster"].client()
    labels = client.ok("GET", f"/api/v1/namespaces/{NAMESPACE}")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    pod = _pod_of_the_deployment(installed["out"])
    status, body = client.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods?dryRun=All", pod)
    assert status == 201, body
    for breaks in ("allowPrivilegeEscalation", "capabilities", "runAsNonRoot", "seccompProfile"):
        weaker = copy.deepcopy(pod)
        weaker["spec"]["containers"][0]["securityContext"].pop(breaks)
        if breaks in ("runAsNonRoot", "seccompProfile"):
            weaker["spec"]["securityContext"].pop(breaks)
        status, body = client.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods?dryRun=All", weaker)
        assert status == 403 and "violates PodSecurity" in body["message"], (breaks, status, body)


def test_the_applied_deployment_reads_back_as_written(installed) -> None:
    client = installed["cluster"].client()
    deployment = client.ok("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/kubectl-win")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["serve", "--listen", "0.0.0.0:9108", "--interval", "5m"]
    assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/os": "linux"}
    service = client.ok("GET", f"/api/v1/namespaces/{NAMESPACE}/services/kubectl-win")
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(9108, "metrics")]
