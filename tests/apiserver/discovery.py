"""Discovery documents: /version, /api, /apis, group-version resource lists, aggregated discovery (v2)."""

from __future__ import annotations

from tests.apiserver.resources import Resource, core, groups

# Subresources kubectl and the plugin use; pods/exec is served by tests/apiserver/exec.py when present.
SUBRESOURCES: dict[str, list[tuple[str, str, list[str]]]] = {
    "pods": [("exec", "PodExecOptions", ["create", "get"]), ("log", "Pod", ["get"]),
             ("portforward", "PodPortForwardOptions", ["create", "get"]), ("status", "Pod", ["get"])],
    "nodes": [("status", "Node", ["get"])],
    "deployments": [("scale", "Scale", ["get"]), ("status", "Deployment", ["get"])],
}

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def version_info(git_version: str) -> dict:
    major, minor = git_version.lstrip("v").split(".")[:2]
    return {
        "major": major, "minor": minor, "gitVersion": git_version,
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2024-12-11T00:00:00Z", "goVersion": "go1.23.4", "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list() -> dict:
    out = []
    for name, resources in groups().items():
        gv = {"groupVersion": resources[0].group_version, "version": resources[0].version}
        out.append({"name": name, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}


def api_group(name: str) -> dict | None:
    resources = groups().get(name)
    if not resources:
        return None
    gv = {"groupVersion": resources[0].group_version, "version": resources[0].version}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": [gv], "preferredVersion": gv}


def _resource_doc(r: Resource) -> dict:
    doc = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
           "verbs": r.verbs}
    if r.short_names:
        doc["shortNames"] = list(r.short_names)
    if r.categories:
        doc["categories"] = list(r.categories)
    return doc


def resource_list(group: str, version: str) -> dict | None:
    members = core() if group == "" else groups().get(group, [])
    members = [r for r in members if r.version == version]
    if not members:
        return None
    docs = []
    for r in members:
        docs.append(_resource_doc(r))
        for sub, kind, verbs in SUBRESOURCES.get(r.plural, []):
            docs.append({"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                         "kind": kind, "verbs": verbs})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": members[0].group_version,
            "resources": docs}


def _aggregated_resource(r: Resource) -> dict:
    doc = {
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": r.verbs,
    }
    if r.short_names:
        doc["shortNames"] = list(r.short_names)
    if r.categories:
        doc["categories"] = list(r.categories)
    subs = SUBRESOURCES.get(r.plural)
    if subs:
        doc["subresources"] = [{"subresource": s, "responseKind": {"group": "", "version": "v1", "kind": k},
                                "verbs": v} for s, k, v in subs]
    return doc


def aggregated(legacy: bool) -> dict:
    """APIGroupDiscoveryList for /api (legacy=True) or /apis."""
    if legacy:
        items = [{"metadata": {"name": ""}, "versions": [
            {"version": "v1", "resources": [_aggregated_resource(r) for r in core()], "freshness": "Current"}]}]
    else:
        items = [{"metadata": {"name": name}, "versions": [
            {"version": rs[0].version, "resources": [_aggregated_resource(r) for r in rs], "freshness": "Current"}]}
            for name, rs in groups().items()]
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}
