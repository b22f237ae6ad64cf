"""scaffold's output is accepted by a real kube-apiserver (each supported minor): server-side dry run,
then a real create, for every kind and option combination and for `scaffold patch` on the published
corpus."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import yaml

from kubectl_win.explain.hostprocess_users import service_accounts
from kubectl_win.kube.resources import for_kind
from kubectl_win.manifests.objects import pod_templates
from kubectl_win.scaffold.generate import scaffold_workload
from kubectl_win.scaffold.options import PlacementOptions, Taint, WorkloadOptions, build_name
from tests.realcluster.cluster import RealCluster, RestClient
from tests.realcluster.seed import path_for
from tests.support.cli import run_cli
from tests.support.tools import require_corpus
from tests.test_scaffold_templates import BUILDS, CASES, KIND_MATRIX


def ensure_namespace(client: RestClient, name: str) -> None:
    status, body = client.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                                 "metadata": {"name": name}})
    assert status in (201, 409), body


def accepted(client: RestClient, obj: dict[str, Any], namespace: str) -> list[str]:
    """Problems the server has with obj (dry run, then a real create); [] when both succeed."""
    obj = json.loads(json.dumps(obj))
    meta = obj.setdefault("metadata", {})
    if obj["kind"] not in ("RuntimeClass", "Namespace", "Node"):
        meta["namespace"] = namespace
    path = path_for(obj)
    problems = []
    for query in ("?dryRun=All", ""):
        status, body = client.request("POST", path + query, obj)
        if status != 201:
            message = body.get("message") if isinstance(body, dict) else body
            problems.append(f"{obj['kind']}/{meta.get('name')} {'dry run' if query else 'create'}: {status} {message}")
    return problems


def _options() -> list[tuple[str, WorkloadOptions]]:
    combos = []
    for index, (kind, build, hostprocess, ports, gmsa, taints) in enumerate(itertools.product(
            KIND_MATRIX, BUILDS, (False, True), ((), (80, 8080)), (None, "gmsa-spec"), (False, True))):
        placement = PlacementOptions(
            build=build_name(build) if build else None,
            taints=(Taint("os", "windows", "NoSchedule"), Taint("dedicated", None, "NoExecute")) if taints else (),
        )
        combos.append((kind, WorkloadOptions(
            kind=kind, name=f"app-{index}", image="example.com/app:ltsc2019", namespace="team", ports=ports,
            placement=placement, gmsa=gmsa, hostprocess=hostprocess,
            run_as_user_name=service_accounts()[1] if hostprocess else "ContainerUser",
            service="NodePort" if ports and kind in ("deployment", "statefulset", "daemonset") else None,
            runtime_class="windows-rc" if build else None,
        )))
    return combos


def test_every_scaffold_combination_is_accepted_by_the_real_api_server(real_cluster: RealCluster) -> None:
    """Runs on both real servers: 240 workloads (every kind x build x HostProcess x ports x gMSA x taints)
    and their Services, each by dry run and then created for real."""
    client = real_cluster.client()
    ensure_namespace(client, "scaffold-matrix")
    problems, created = [], 0
    for _kind, options in _options():
        for obj in scaffold_workload(options).objects:
            problems += accepted(client, obj, "scaffold-matrix")
            created += 1
    assert problems == []
    assert created >= 240


@pytest.mark.parametrize("case", sorted(CASES))
def test_scaffold_cli_output_is_accepted_by_the_real_api_server(real_cluster: RealCluster, case: str) -> None:
    """The documented command lines (the golden cases), on both real servers."""
    argv = CASES[case]
    result = run_cli("scaffold", *argv)
    assert result.exit_code == 0, result.stderr
    if "json" in argv:
        data = json.loads(result.stdout)
        objects = data["items"] if data.get("kind") == "List" else [data]
    else:
        objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    client = real_cluster.client()
    namespace = f"scaffold-{case}"
    ensure_namespace(client, namespace)
    problems = []
    for obj in objects:
        if obj["kind"] == "RuntimeClass":
            obj["metadata"]["name"] = f"{obj['metadata']['name']}-{case}"[:63]
        problems += accepted(client, obj, namespace)
    assert problems == []


def test_scaffold_patch_of_the_corpus_is_accepted_by_the_real_api_server(real_cluster: RealCluster) -> None:
    """Every pod-bearing object of the published corpus that the server accepts as published is still
    accepted, by dry run and a real create, as `scaffold patch` rewrites it (with and without a build and
    taint). Runs on both real servers."""
    client = real_cluster.client()
    files = sorted(p for p in require_corpus().iterdir() if p.suffix in (".yaml", ".yml"))
    problems, checked, not_accepted_as_published = [], 0, set()
    for options_index, options in enumerate(([], ["--windows-build", "ltsc2022", "--taint", "os=Win2022:NoSchedule"])):
        for file_index, path in enumerate(files):
            result = run_cli("scaffold", "patch", "-f", str(path), *options)
            assert result.exit_code == 0, (path, result.stderr)
            namespace = f"corpus-{options_index}-{file_index}"
            ensure_namespace(client, namespace)
            published = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
            patched = list(yaml.safe_load_all(result.stdout))
            assert len(published) == len(patched), path
            for before, after in zip(published, patched, strict=True):
                if not isinstance(after, dict) or not pod_templates(after):
                    continue
                if for_kind(str(after.get("apiVersion")), str(after.get("kind"))) is None or \
                        dry_run_problem(client, before, namespace):
                    # e.g. apps/v1beta1, or `command: "x.exe"` (a string): rejected before any patch.
                    not_accepted_as_published.add(f"{path.name}: {after.get('kind')}/{after['metadata']['name']}")
                    continue
                problems += [f"{path.name}: {p}" for p in accepted(client, after, namespace)]
                checked += 1
    assert problems == []
    assert checked >= len(files), sorted(not_accepted_as_published)


def dry_run_problem(client: RestClient, obj: dict[str, Any], namespace: str) -> str | None:
    obj = json.loads(json.dumps(obj))
    obj.setdefault("metadata", {})["namespace"] = namespace
    status, body = client.request("POST", path_for(obj) + "?dryRun=All", obj)
    return None if status == 201 else f"{status} {body.get('message') if isinstance(body, dict) else body}"
