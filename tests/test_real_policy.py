"""`kubectl win scaffold policy` on the real kube-apiserver (each supported minor): the policies are
accepted, and on every manifest of the explain corpus, the bundled examples and the knowledge cases the
server's verdict through the real kubectl (`kubectl apply --dry-run=server`: the policy's warnings, or the
API server's own rejection) agrees with explain's, object by object. A disagreement is fixed in the rules
data, in explain or in kubectl_win/scaffold/cel.py, never here.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_win.explain.lint import lint_object, lint_object_detailed
from kubectl_win.kube.resources import for_kind
from kubectl_win.manifests.objects import pod_templates
from kubectl_win.scaffold.admission import policy_rules
from kubectl_win.scaffold.options import Taint
from kubectl_win.versions import parse_version
from tests.realcluster.cluster import RealCluster, StartError
from tests.realcluster.knowledge_cases import KINDS, OS_VARIANTS, cases, checked_rules, with_os, wrap
from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS, ROOT
from tests.support.tools import missing_tool, require_corpus, require_kubectl

NAMESPACE = "policy-verdicts"
WARNING = re.compile(r"^Warning: Validation failed for ValidatingAdmissionPolicy '([^']+)' with binding '[^']+': (.*)$")
DONE = re.compile(r"^[\w.]+/(obj-\d+) (?:created|configured|unchanged) \(server dry run\)$")
REJECTED = re.compile(r"\"(obj-\d+)\" is (?:invalid|forbidden): (.*)$")
RULE_ID = re.compile(r"\[([a-z0-9-]+)\]$")


def kubectl(cluster: RealCluster, *args: str, check: bool = True, merged: bool = False,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    kubeconfig = cluster.workdir / "policy-kubeconfig"
    if not kubeconfig.exists():
        kubeconfig.write_text((cluster.workdir / "kubeconfig").read_text())
    env = {**os.environ, "HOME": str(cluster.workdir)}
    env.pop("KUBECONFIG", None)
    result = subprocess.run([require_kubectl(), "--kubeconfig", str(kubeconfig), *args], text=True, env=env, cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merged else subprocess.PIPE)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def apply_policy(cluster: RealCluster, tmp: Path, argv: list[str]) -> list[dict[str, Any]]:
    """`scaffold policy` output applied with kubectl, once the admission plugin enforces it; returns the
    objects."""
    result = run_cli("scaffold", "policy", *argv)
    assert result.exit_code == 0, result.stderr
    path = tmp / "policy.yaml"
    path.write_text(result.stdout)
    kubectl(cluster, "apply", "-f", str(path))
    deny = "Deny" in argv
    probes = tmp / "probes.yaml"
    probes.write_text(yaml.safe_dump_all([_probe(kind, f"probe-{kind.lower()}") for kind in KINDS]))
    # The admission plugin learns of new policies and bindings through an informer: ask until all three
    # policies answer the probes with the action just applied.
    for _ in range(240):
        answer = kubectl(cluster, "apply", "--dry-run=server", "-f", str(probes), check=False, merged=True).stdout
        if deny and answer.count("denied request") == len(KINDS):
            break
        if not deny and len(set(re.findall(r"binding '(kubectl-win-fields-\w+)': .*privileged", answer))) == 3:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the policies never took effect: {answer}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def remove_policies(cluster: RealCluster, tmp: Path) -> None:
    """Delete every policy `scaffold policy` wrote, and wait until the admission plugin has dropped them too:
    its informer learns of the deletion a moment later, and a Deny left in force would refuse the Windows
    workloads the session cluster's other tests create."""
    kubectl(cluster, "delete", "validatingadmissionpolicybindings,validatingadmissionpolicies",
            "-l", "app.kubernetes.io/component=admission-policy", "--ignore-not-found", check=False)
    probes = tmp / "removal-probes.yaml"
    probes.write_text(yaml.safe_dump_all([_probe(kind, f"probe-{kind.lower()}") for kind in KINDS]))
    for _ in range(240):
        answer = kubectl(cluster, "apply", "--dry-run=server", "-f", str(probes), check=False, merged=True).stdout
        if "ValidatingAdmissionPolicy" not in answer:
            return
        time.sleep(0.5)
    raise AssertionError(f"the policies stayed in force after their deletion: {answer}")


def _probe(kind: str, name: str) -> dict[str, Any]:
    spec = {"nodeSelector": {"kubernetes.io/os": "windows"}, "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                            "securityContext": {"privileged": False}}]}
    obj = wrap(kind, spec, {}, name)
    obj["metadata"]["namespace"] = "default"
    return obj


def manifests(minor: str) -> list[tuple[str, dict[str, Any]]]:
    """(where it comes from, object) for every pod-bearing object of a kind the server serves, and the
    knowledge cases of every field the server's minor has (it refuses fields it does not know)."""
    found = []
    files = sorted(p for p in require_corpus().iterdir() if p.suffix in (".yaml", ".yml"))
    files += sorted(EXAMPLE_MANIFESTS.glob("*.y*ml"))
    for path in files:
        for index, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(doc, dict) and pod_templates(doc) and \
                    for_kind(str(doc.get("apiVersion")), str(doc.get("kind"))) is not None:
                found.append((f"{path.name}#{index}", doc))
    for rule in checked_rules():
        if rule.field_since and parse_version(rule.field_since) > parse_version(minor):
            continue
        for label, spec, meta in cases(rule):
            for os_name in OS_VARIANTS:
                for kind in KINDS:
                    found.append((f"{rule.id}: {label} ({kind}, os {os_name})",
                                  wrap(kind, with_os(spec, os_name), meta)))
    return found


def _named(objects: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for index, (_, obj) in enumerate(objects):
        obj = copy.deepcopy(obj)
        obj.pop("status", None)
        meta = obj.setdefault("metadata", {})
        for key in ("namespace", "resourceVersion", "uid", "creationTimestamp", "generateName"):
            meta.pop(key, None)
        meta["name"] = f"obj-{index}"
        meta["namespace"] = NAMESPACE
        out.append(obj)
    return out


def server_verdicts(cluster: RealCluster, tmp: Path, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """name -> ("warned", {rule ids}) or ("rejected", message), from one batched `kubectl apply
    --dry-run=server` whose warnings precede each object's line (stdout and stderr are one pipe)."""
    path = tmp / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    result = kubectl(cluster, "apply", "--dry-run=server", "-f", str(path), check=False, merged=True)
    verdicts: dict[str, Any] = {}
    pending: set[str] = set()
    for line in result.stdout.splitlines():
        warning = WARNING.match(line)
        if warning:
            rule = RULE_ID.search(warning.group(2))
            assert rule, line  # every message ends with its rule id
            pending.add(rule.group(1))
            continue
        done = DONE.match(line)
        if done:
            verdicts[done.group(1)] = ("warned", pending)
            pending = set()
            continue
        rejected = REJECTED.search(line)
        if rejected:
            verdicts[rejected.group(1)] = ("rejected", rejected.group(2))
    missing = [obj["metadata"]["name"] for obj in objects if obj["metadata"]["name"] not in verdicts]
    # The server cannot decode some published manifests (a string where a list belongs): its error has no name.
    assert len(missing) == result.stdout.count("cannot be handled as a"), (missing[:5], result.stdout[-3000:])
    for name in missing:
        verdicts[name] = ("rejected", "the server cannot decode it")
    return verdicts


# Where the server changes the object before admission policies see it, in ways explain does not model.
# Each entry names the knowledge case and why; the test fails when one no longer happens, so the list
# cannot outlive the difference.
KNOWN_DIFFERENCES = {
    "windows-apparmor-annotation: metadata:annotations[container.apparmor.security.beta.kubernetes.io/c] "
    "(Pod, os unset)": "the API server copies the deprecated AppArmor annotation into "
                       "securityContext.appArmorProfile of a Pod that does not say spec.os.name=windows, so the "
                       "policy also reports windows-apparmor-profile",
}


def explain_verdict(obj: dict[str, Any], minor: str, rules: tuple) -> tuple[str, Any]:
    """explain's verdict: rejected when it predicts the API server's own rejection, else the ids of the
    findings of the rules the policy carries (as the policy checks them)."""
    version = parse_version(minor)
    if any(f.enforced_by == "api-server" and f.severity == "error" for f in lint_object(obj, k8s_version=version)):
        return "rejected", None
    return "warned", {f.id for f in lint_object_detailed(obj, k8s_version=version, rules=rules)[0]}


@pytest.fixture(scope="module")
def verdicts(real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp(f"policy-{real_cluster.minor}")
    kubectl(real_cluster, "create", "namespace", NAMESPACE)
    policy = apply_policy(real_cluster, tmp, ["--action", "Warn", "--min-severity", "info",
                                              "--k8s-version", real_cluster.minor])
    objects = manifests(real_cluster.minor)
    named = _named(objects)
    try:
        yield {"policy": policy, "objects": objects, "named": named,
               "server": server_verdicts(real_cluster, tmp, named)}
    finally:
        remove_policies(real_cluster, tmp)


def test_every_policy_and_binding_is_accepted(verdicts: dict[str, Any]) -> None:
    kinds = [obj["kind"] for obj in verdicts["policy"]]
    assert kinds.count("ValidatingAdmissionPolicy") == kinds.count("ValidatingAdmissionPolicyBinding") == 3


@pytest.mark.parametrize("minor_offset", [0, 1], ids=["its-minor", "a-newer-minor"])
def test_the_policies_type_check_without_warnings(real_cluster: RealCluster, tmp_path: Path,
                                                  minor_offset: int) -> None:
    """The server type-checks each expression against the schemas of the kinds the policy matches
    (status.typeChecking, by the ValidatingAdmissionPolicy status controller of kube-controller-manager),
    for the policy of the server's own minor and for one generated for the next minor."""
    try:
        real_cluster.start_controllers("validatingadmissionpolicy-status-controller")
    except StartError as exc:
        missing_tool(str(exc))
    major, minor = real_cluster.minor.split(".")
    policy = apply_policy(real_cluster, tmp_path, [
        "--min-severity", "info", "--k8s-version", f"{major}.{int(minor) + minor_offset}",
        "--windows-taint", "os=windows:NoSchedule", "--hostprocess-namespace", "kube-system"])
    names = [obj["metadata"]["name"] for obj in policy if obj["kind"] == "ValidatingAdmissionPolicy"]
    warnings: dict[str, Any] = {}
    for _ in range(240):
        stored = {item["metadata"]["name"]: item for item in json.loads(
            kubectl(real_cluster, "get", "validatingadmissionpolicies", "-o", "json").stdout)["items"]}
        checked = [n for n in names if (stored[n].get("status") or {}).get("observedGeneration")
                   == stored[n]["metadata"]["generation"]]
        if len(checked) == len(names):
            warnings = {n: (stored[n]["status"].get("typeChecking") or {}).get("expressionWarnings") for n in names}
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the status controller never checked {sorted(set(names) - set(checked))}")
    assert {n: w for n, w in warnings.items() if w} == {}
    remove_policies(real_cluster, tmp_path)


def test_the_servers_verdict_agrees_with_explain_object_by_object(real_cluster: RealCluster,
                                                                   verdicts: dict[str, Any]) -> None:
    """Runs on both real servers. Objects the server rejects for a reason no rule names (the corpus has
    a few that do not validate as published) are left out and counted."""
    rules = policy_rules(parse_version(real_cluster.minor), "info")
    carried = {rule.id for rule in rules}
    disagreements, compared, outside, known = [], 0, [], set()
    warned_ids: set[str] = set()
    for (where, obj), named in zip(verdicts["objects"], verdicts["named"], strict=True):
        server = verdicts["server"][named["metadata"]["name"]]
        predicted = explain_verdict(obj, real_cluster.minor, rules)
        if server[0] == "rejected" and predicted[0] != "rejected":
            outside.append(f"{where}: {server[1][:200]}")
            continue
        compared += 1
        if server[0] == "warned":
            warned_ids |= server[1]
        if server[0] != predicted[0] or (server[0] == "warned" and server[1] != predicted[1]):
            if where in KNOWN_DIFFERENCES:
                known.add(where)
                continue
            disagreements.append(f"{where}: server {server}, explain {predicted}")
    assert disagreements == [], "\n".join(disagreements)
    assert known == set(KNOWN_DIFFERENCES)
    # Every rule the policy carries warned at least once: the comparison covers each of them.
    assert sorted(carried - warned_ids) == []
    assert compared >= 800, (compared, outside)
    assert len(outside) <= 10, outside


def test_deny_rejects_and_names_the_field(real_cluster: RealCluster, tmp_path: Path) -> None:
    """Deny, the tolerations check and the HostProcess namespaces check, on one small policy set."""
    apply_policy(real_cluster, tmp_path, ["--action", "Deny", "--k8s-version", real_cluster.minor,
                                          "--windows-taint", "os=windows:NoSchedule",
                                          "--hostprocess-namespace", "kube-system"])
    try:
        # One thing wrong at a time: with Deny the first policy that fails the request answers it.
        toleration = Taint("os", "windows", "NoSchedule").toleration()
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "deny-me", "namespace": "default"},
               "spec": {"nodeSelector": {"kubernetes.io/os": "windows"}, "tolerations": [toleration],
                        "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                                        "resources": {"limits": {"memory": "1Gi"}},
                                        "securityContext": {"privileged": False}}]}}
        answer(real_cluster, tmp_path, pod,
               "Pod/deny-me: spec.containers[0].securityContext.privileged: ignored on Windows nodes")
        spec = pod["spec"]
        del spec["containers"][0]["securityContext"]
        answer(real_cluster, tmp_path, pod, None)
        del spec["tolerations"]
        answer(real_cluster, tmp_path, pod, "[windows-toleration-missing]")
        spec["tolerations"] = [{"key": "os", "operator": "Exists"}]  # any value of the key tolerates it
        answer(real_cluster, tmp_path, pod, None)
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
        spec["hostNetwork"] = True
        answer(real_cluster, tmp_path, pod, "[windows-hostprocess-namespace]")
        pod["metadata"]["namespace"] = "kube-system"
        answer(real_cluster, tmp_path, pod, None)
    finally:
        remove_policies(real_cluster, tmp_path)


def test_deny_spares_a_label_update_of_an_existing_pod_and_the_system_namespaces(real_cluster: RealCluster,
                                                                                 tmp_path: Path) -> None:
    """A Deny binding switched on over a running cluster: a pod that predates it still takes a label (its spec
    did not change), kube-system's workloads are not judged, and a new non-compliant pod or Deployment is still
    refused, as is a change to the old pod's spec."""
    legacy = _probe("Pod", "legacy-agent")  # privileged: ignored on Windows, an error under Deny
    kubectl(real_cluster, "create", "-f", _write(tmp_path, legacy))
    apply_policy(real_cluster, tmp_path, ["--action", "Deny", "--k8s-version", real_cluster.minor])
    try:
        labelled = kubectl(real_cluster, "label", "pod", "legacy-agent", "-n", "default", "team=web", check=False)
        assert labelled.returncode == 0, labelled.stderr
        annotated = kubectl(real_cluster, "annotate", "pod", "legacy-agent", "-n", "default", "owner=platform",
                            check=False)
        assert annotated.returncode == 0, annotated.stderr
        changed = kubectl(real_cluster, "set", "image", "pod/legacy-agent", "-n", "default",
                          "c=mcr.microsoft.com/windows/nanoserver:ltsc2025", check=False)
        assert changed.returncode != 0 and "denied request" in changed.stderr, changed.stderr

        for kind in ("Pod", "Deployment"):
            new = _probe(kind, f"new-{kind.lower()}")
            answer(real_cluster, tmp_path, new, "denied request")
            new["metadata"]["namespace"] = "kube-system"
            answer(real_cluster, tmp_path, new, None)
        agent = _probe("Deployment", "hostprocess-agent")  # a platform agent with no memory limit
        agent["metadata"]["namespace"] = "kube-system"
        agent["spec"]["template"]["spec"]["containers"][0].pop("securityContext")
        agent["spec"]["template"]["spec"].update(hostNetwork=True, securityContext={"windowsOptions": {
            "hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}})
        answer(real_cluster, tmp_path, agent, None)
    finally:
        remove_policies(real_cluster, tmp_path)
        kubectl(real_cluster, "delete", "pod", "legacy-agent", "-n", "default", "--wait=false", check=False)


def answer(cluster: RealCluster, folder: Path, obj: dict[str, Any], refused: str | None) -> None:
    """Dry-run obj until the server refuses it naming `refused` (or, with None, accepts it): a policy applied
    a moment ago reaches the admission plugin through an informer."""
    path = _write(folder, obj)
    for _ in range(240):
        result = kubectl(cluster, "apply", "--dry-run=server", "-f", path, check=False)
        if (result.returncode == 0) if refused is None else (result.returncode != 0 and refused in result.stderr):
            return
        time.sleep(0.5)
    raise AssertionError(f"expected {'acceptance' if refused is None else refused!r}: {result.stderr}")


def _write(folder: Path, obj: dict[str, Any]) -> str:
    path = folder / f"{obj['metadata']['name']}-{len(list(folder.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_the_docs_show_what_kubectl_prints_in_the_rollout(real_cluster: RealCluster, tmp_path: Path) -> None:
    """docs/scaffold.md's Warn and Deny examples, run with the real kubectl on the bundled example."""
    from tests.support.readme_examples import console_examples, differences

    shown = [e for e in console_examples((ROOT / "docs" / "scaffold.md").read_text())
             if e.command.startswith("kubectl apply --dry-run=server")]
    assert len(shown) == 2
    kubectl(real_cluster, "create", "namespace", "web", check=False)
    try:
        for example, action in zip(shown, ("Warn", "Deny"), strict=True):
            apply_policy(real_cluster, tmp_path, ["--action", action])
            path = EXAMPLE_MANIFESTS / "iis-hardened-for-linux.yaml"
            printed = kubectl(real_cluster, "apply", "--dry-run=server", "-f", str(path), check=False,
                              merged=True, cwd=ROOT).stdout.replace(str(ROOT) + "/", "")
            assert differences(example.output, printed.splitlines()) == [], printed
    finally:
        remove_policies(real_cluster, tmp_path)
