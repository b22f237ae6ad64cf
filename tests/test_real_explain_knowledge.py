"""explain's knowledge against a real kube-apiserver (each supported minor), by server-side dry run.

For every checked field rule, each case's pod spec goes to the server as a Pod, a Deployment and a CronJob,
with spec.os.name windows, linux and unset, as `POST ...?dryRun=All`. explain, run for the server's
minor, must give the same verdict (rejected or not: it predicts a rejection with an `enforcedBy:
api-server` finding) and name the same field paths as the server's causes. A disagreement is fixed in
the rules data or in explain, never here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_win.explain.lint import lint_object
from kubectl_win.versions import parse_version
from tests.realcluster.cluster import RealCluster
from tests.realcluster.knowledge_cases import COLLECTIONS, KINDS, OS_VARIANTS, cases, checked_rules, with_os, wrap

RULES = checked_rules()


def server_verdict(cluster: RealCluster, obj: dict[str, Any]) -> tuple[bool, set[str], str]:
    """(rejected, the fields the server names, its message) for a dry-run create."""
    status, body = cluster.client().request(
        "POST", COLLECTIONS[obj["kind"]].format(ns="default") + "?dryRun=All", obj)
    if status < 300:
        return False, set(), ""
    assert status == 422, f"unexpected {status} for {obj['kind']}: {body}"
    causes = (body.get("details") or {}).get("causes") or []
    return True, {cause.get("field", "") for cause in causes}, body.get("message", "")


def explain_verdict(obj: dict[str, Any], minor: str) -> tuple[bool, set[str]]:
    findings = lint_object(obj, k8s_version=parse_version(minor))
    rejected = [f for f in findings if f.enforced_by == "api-server"]
    return bool(rejected), {f.path for f in rejected}


@pytest.fixture(scope="session")
def knowledge_counts() -> dict[str, int]:
    """Dry-run comparisons made per server minor (printed by -s; the docs quote them)."""
    return {}


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_explain_agrees_with_the_real_api_server(real_cluster: RealCluster, rule, knowledge_counts) -> None:
    """Runs on both real servers (k8s-1.34 and k8s-1.37 parameters)."""
    disagreements = []
    for label, spec, meta in cases(rule):
        for os_name in OS_VARIANTS:
            for kind in KINDS:
                obj = wrap(kind, with_os(spec, os_name), meta)
                server = server_verdict(real_cluster, obj)
                predicted = explain_verdict(obj, real_cluster.minor)
                knowledge_counts[real_cluster.minor] = knowledge_counts.get(real_cluster.minor, 0) + 1
                if predicted != server[:2]:
                    disagreements.append(
                        f"{label} | os={os_name} | {kind}: server rejected={server[0]} fields={sorted(server[1])} "
                        f"({server[2][:300]}); explain rejected={predicted[0]} paths={sorted(predicted[1])}")
    print(f"\n{rule.id}: k8s {real_cluster.minor}, {knowledge_counts[real_cluster.minor]} checks so far")
    assert not disagreements, f"{rule.id} on {real_cluster.version}:\n" + "\n".join(disagreements)


def test_the_cases_cover_every_checked_rule() -> None:
    """Every checked rule has at least one case, so a rule added without a case fails here."""
    for rule in RULES:
        assert cases(rule), rule.id
    assert json.dumps([cases(rule) for rule in RULES])  # the cases are plain JSON
