"""`kubectl win scaffold policy` without a server: one source with explain (every checked rule is carried or
says why not), the objects, the writer rules and bad input. The real kube-apiserver's verdicts are in
tests/test_real_policy.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_win.explain.lint import _rules_for
from kubectl_win.explain.rules import checks
from kubectl_win.scaffold import cel
from kubectl_win.scaffold.admission import (
    PLACES,
    LabelRequirement,
    PolicyOptions,
    left_out,
    parse_namespace_selector,
    policy_objects,
    policy_rules,
)
from kubectl_win.versions import NEWEST_KNOWN, parse_version
from tests.support.cli import run_cli
from tests.support.paths import ROOT


def _scaffold(*argv: str) -> list[dict]:
    result = run_cli("scaffold", "policy", *argv)
    assert result.exit_code == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_every_checked_rule_is_in_the_policy_or_says_why_not() -> None:
    """A rule added to the knowledge reaches the policy, unless its data says why CEL cannot judge it."""
    unexplained = [rule.id for rule in checks() if not cel.expressible(rule) and rule.admission is None]
    assert unexplained == [], f"neither expressible in CEL nor marked `admission:` in field_rules.yaml: {unexplained}"


def test_every_carried_rule_is_a_validation_of_every_fields_policy() -> None:
    version = NEWEST_KNOWN
    carried = [rule.id for rule in policy_rules(version, "info")]
    expected = sorted(r.id for r in _rules_for(version) if r.admission is None)
    assert sorted(carried) == expected
    policies = [o for o in policy_objects(PolicyOptions(k8s_version=version, min_severity="info"))
                if o["kind"] == "ValidatingAdmissionPolicy"]
    assert [p["metadata"]["name"] for p in policies] == [f"kubectl-win-fields-{place.suffix}" for place in PLACES]
    for policy in policies:
        ids = [re.search(r"\[([a-z0-9-]+)\]$", v["message"]).group(1) for v in policy["spec"]["validations"]]
        assert ids == carried


def test_messages_say_what_explain_says_with_the_field_path() -> None:
    [policy, *_] = policy_objects(PolicyOptions(k8s_version=NEWEST_KNOWN))
    by_id = {re.search(r"\[([a-z0-9-]+)\]$", v["message"]).group(1): v for v in policy["spec"]["validations"]}
    privileged = by_id["windows-privileged"]
    assert "Windows has no privileged containers" in privileged["message"]
    assert "'spec.containers[' + string(object.spec.containers.indexOf(c)) + '].securityContext.privileged'" \
        in privileged["messageExpression"]


def test_severity_floor_and_version_choose_the_rules() -> None:
    warning = {rule.id for rule in policy_rules(NEWEST_KNOWN, "warning")}
    info = {rule.id for rule in policy_rules(NEWEST_KNOWN, "info")}
    assert "windows-resize-policy" in info - warning  # an info finding
    assert "windows-privileged" in warning
    old = {rule.id for rule in policy_rules(parse_version("1.30"), "info")}
    assert "windows-pod-level-resources" in info - old  # spec.resources exists from 1.32, rejected from 1.34


def test_the_left_out_rules_are_listed_in_the_docs() -> None:
    text = (ROOT / "docs" / "scaffold.md").read_text()
    for rule, why in left_out(NEWEST_KNOWN):
        assert f"| `{rule.id}` | {why} |" in text, rule.id


def test_optional_checks_are_policies_of_their_own() -> None:
    objects = _scaffold("--windows-taint", "os=windows:NoSchedule", "--hostprocess-namespace", "kube-system",
                        "--namespace-selector", "team=web,env notin (dev)", "--action", "Deny",
                        "--include-system-namespaces")
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert names == [f"kubectl-win-{what}-{place.suffix}" for what in ("fields", "tolerations", "hostprocess")
                     for place in PLACES]
    bindings = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {tuple(b["spec"]["validationActions"]) for b in bindings} == {("Deny",)}
    assert bindings[0]["spec"]["matchResources"]["namespaceSelector"] == {
        "matchLabels": {"team": "web"}, "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}
    assert [o["kind"] for o in _scaffold()] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] * 3


SYSTEM = ["kube-system", "kube-public", "kube-node-lease", "calico-system", "tigera-operator"]


def test_bindings_leave_the_platforms_namespaces_out_by_default() -> None:
    """A Deny binding over kube-system refuses the platform's own DaemonSets (HostProcess agents without a memory
    limit among them): every binding leaves the system namespaces out, by name and (kube-*, openshift-*) by
    prefix; --include-system-namespaces judges them too."""
    objects = _scaffold("--action", "Deny", "--namespace-selector", "team=web")
    bindings = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert len(bindings) == 3
    for binding in bindings:
        selector = binding["spec"]["matchResources"]["namespaceSelector"]
        assert selector["matchLabels"] == {"team": "web"}
        [names] = selector["matchExpressions"]
        assert names["key"] == "kubernetes.io/metadata.name" and names["operator"] == "NotIn"
        assert set(SYSTEM) <= set(names["values"])
    for policy in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"):
        [prefixes] = [c for c in policy["spec"]["matchConditions"] if c["name"] == "not-in-a-system-namespace"]
        assert "!request.namespace.startsWith('openshift-')" in prefixes["expression"]
        assert "!request.namespace.startsWith('kube-')" in prefixes["expression"]

    included = _scaffold("--action", "Deny", "--include-system-namespaces")
    assert all("matchResources" not in o["spec"] for o in included if o["kind"] == "ValidatingAdmissionPolicyBinding")
    assert all(c["name"] != "not-in-a-system-namespace" for o in included
               if o["kind"] == "ValidatingAdmissionPolicy" for c in o["spec"]["matchConditions"])


def test_pods_are_judged_when_created_and_when_their_spec_changes_not_on_a_label_update() -> None:
    objects = _scaffold("--action", "Deny")
    conditions = {o["metadata"]["name"]: {c["name"]: c["expression"] for c in o["spec"]["matchConditions"]}
                  for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    assert conditions["kubectl-win-fields-pods"]["created-or-pod-spec-changed"] == (
        "request.operation == 'CREATE' || oldObject.spec != object.spec")
    assert conditions["kubectl-win-fields-workloads"]["created-or-pod-spec-changed"] == (
        "request.operation == 'CREATE' || oldObject.spec.template.spec != object.spec.template.spec")
    assert conditions["kubectl-win-fields-cronjobs"]["created-or-pod-spec-changed"].endswith(
        "oldObject.spec.jobTemplate.spec.template.spec != object.spec.jobTemplate.spec.template.spec")


def test_namespace_selector_reads_kubectls_syntax() -> None:
    assert parse_namespace_selector("a=b,c!=d,e,!f,g in (h, i)") == (
        LabelRequirement("a", "In", ("b",)), LabelRequirement("c", "NotIn", ("d",)), LabelRequirement("e", "Exists"),
        LabelRequirement("f", "DoesNotExist"), LabelRequirement("g", "In", ("h", "i")))


def test_out_writes_numbered_files_and_never_over_a_file_without_force(tmp_path: Path) -> None:
    out = tmp_path / "policy"
    first = run_cli("scaffold", "policy", "--out", str(out))
    assert first.exit_code == 0, first.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files[:2] == ["01-kubectl-win-fields-pods-validatingadmissionpolicy.yaml",
                         "02-kubectl-win-fields-pods-validatingadmissionpolicybinding.yaml"]
    assert len(files) == 6
    again = run_cli("scaffold", "policy", "--out", str(out))
    assert again.exit_code == 2 and "already exists (use --force to overwrite)" in again.stderr
    assert run_cli("scaffold", "policy", "--out", str(out), "--force", "--action", "Deny").exit_code == 0
    assert "- Deny" in (out / files[1]).read_text()


@pytest.mark.parametrize("argv,message", [
    (["--action", "Block"], "--action"),
    (["--windows-taint", "os=windows"], "invalid taint 'os=windows'"),
    (["--hostprocess-namespace", "Kube_System"], "--hostprocess-namespace"),
    (["--namespace-selector", "a in (b"], "--namespace-selector"),
    (["--k8s-version", "1.29"], "ValidatingAdmissionPolicy v1 needs 1.30 or later"),
    (["--k8s-version", "one"], "--k8s-version"),
    (["--force"], "--force only applies with --out DIR"),
])
def test_bad_input_is_a_one_line_usage_error(argv: list[str], message: str) -> None:
    result = run_cli("scaffold", "policy", *argv)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_an_offline_policy_run_imports_no_kubernetes_client() -> None:
    code = ("import sys, contextlib, io\nfrom kubectl_win.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['scaffold', 'policy'])\n"
            "print(sorted(m for m in ('kubernetes', 'urllib3') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.strip() == "[]", result.stderr


def test_from_cluster_reads_the_windows_nodes_taints_and_the_servers_version(apiserver) -> None:
    """Through kubectl_win/kube against the test API server (it reports v1.32.0): the Windows nodes' placement
    taints (not the Linux node's, not the node lifecycle's), and the rules of 1.32."""
    def node(name: str, os_name: str, taints: list[dict]) -> dict:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/os": os_name}}, "spec": {"taints": taints}}

    apiserver.put(node("win-1", "windows", [{"key": "os", "value": "windows", "effect": "NoSchedule"},
                                            {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
                  node("win-2", "windows", [{"key": "sku", "value": "gpu", "effect": "PreferNoSchedule"}]),
                  node("linux-1", "linux", [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]))
    result = run_cli("scaffold", "policy", "--from-cluster", "--kubeconfig", str(apiserver.kubeconfig))
    assert result.exit_code == 0, result.stderr
    objects = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    tolerations = [o for o in objects if o["metadata"]["name"] == "kubectl-win-tolerations-pods"
                   and o["kind"] == "ValidatingAdmissionPolicy"]
    assert [v["message"].split("taint ")[1].split(";")[0] for v in tolerations[0]["spec"]["validations"]] == \
        ["os=windows:NoSchedule"]
    assert objects[0]["metadata"]["annotations"]["kubectl-win.io/kubernetes-version"] == "1.32"


def test_the_docs_show_what_scaffold_policy_out_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    from tests.support.readme_examples import console_examples, differences

    [example] = [e for e in console_examples((ROOT / "docs" / "scaffold.md").read_text())
                 if e.command.startswith("kubectl win scaffold policy --action Warn --out")]
    monkeypatch.chdir(tmp_path)
    result = run_cli(*shlex.split(example.command)[2:])
    assert result.exit_code == 0, result.stderr
    shown = [line for line in example.output if not line.startswith("$ ")]
    assert differences(shown[:6], result.stdout.splitlines()) == []
