"""Put a scenario (a list of objects, e.g. a doctor dump) into a real API server as a cluster would have it.

No kubelet, scheduler or controller runs, so: Nodes are created with their status (the node strategy
keeps status on create) and lose the not-ready taint admission adds; pods are created bound to their
node (spec.nodeName) and then get their status through the status subresource, the way a kubelet
reports it; Services lose the cluster IPs another cluster allocated; events keep their counts and
reasons. The GMSACredentialSpec CRD is installed first when the scenario has credential specs.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from kubectl_win.kube.resources import for_kind
from tests.realcluster.cluster import RestClient

# Written from the definition kubernetes-sigs/windows-gmsa publishes (admission-webhook/deploy/gmsa-crd.yml):
# cluster-scoped windows.k8s.io GMSACredentialSpec, v1 stored and v1alpha1 deprecated, `credspec` an object.
GMSA_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "gmsacredentialspecs.windows.k8s.io",
        "annotations": {"api-approved.kubernetes.io":
                        "https://github.com/kubernetes/enhancements/tree/master/keps/sig-windows/689-windows-gmsa"},
    },
    "spec": {
        "group": "windows.k8s.io",
        "scope": "Cluster",
        "names": {"plural": "gmsacredentialspecs", "singular": "gmsacredentialspec", "kind": "GMSACredentialSpec",
                  "listKind": "GMSACredentialSpecList"},
        "versions": [
            {"name": name, "served": True, "storage": name == "v1", **({"deprecated": True} if name != "v1" else {}),
             "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                 "credspec": {"description": "GMSA Credential Spec", "type": "object",
                              "x-kubernetes-preserve-unknown-fields": True}}}}}
            for name in ("v1alpha1", "v1")
        ],
    },
}

SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
ORDER = ("Namespace", "Node", "GMSACredentialSpec", "RuntimeClass")  # before everything that refers to them


def path_for(obj: dict[str, Any], with_name: bool = False) -> str:
    info = for_kind(obj["apiVersion"], obj["kind"])
    if info is None:
        raise ValueError(f"no API path known for {obj['apiVersion']} {obj['kind']}")
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") if info.namespaced else None
    if with_name:
        return info.object_path(meta["name"], namespace)
    return info.collection_path(namespace)


def clean(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy without the fields the server sets (and without status, which goes in separately)."""
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    for ref in meta.get("ownerReferences") or ():
        ref["uid"] = ref.get("uid") or "00000000-0000-0000-0000-000000000000"
    if obj["kind"] == "Service":
        spec = obj.get("spec") or {}
        for key in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
            spec.pop(key, None)
        for port in spec.get("ports") or ():
            port.pop("nodePort", None)
        obj.pop("status", None)
    return obj


def install_gmsa_crd(client: RestClient, timeout: float = 60) -> None:
    status, body = client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", GMSA_CRD)
    if status not in (201, 409):
        raise AssertionError(f"creating the GMSACredentialSpec CRD failed: {status} {body}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _ = client.request("GET", "/apis/windows.k8s.io/v1/gmsacredentialspecs")
        if status == 200:
            return
        time.sleep(0.2)
    raise AssertionError("the GMSACredentialSpec CRD was not served in time")


def apply_items(client: RestClient, items: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """Create every object (in dependency order), then give Nodes and Pods their status. Returns the
    objects the server refused as invalid (422) with its message: a dump can hold what no server accepts."""
    refused = []
    items = sorted(items, key=lambda o: ORDER.index(o["kind"]) if o["kind"] in ORDER else len(ORDER))
    if any(o["kind"] == "GMSACredentialSpec" for o in items):
        install_gmsa_crd(client)
    for obj in items:
        body = clean(obj)
        if obj["kind"] == "Namespace":
            status, data = client.request("POST", "/api/v1/namespaces", body)
            if status not in (201, 409):  # default and kube-system exist already
                raise AssertionError(f"namespace {body['metadata']['name']}: {status} {data}")
            continue
        status_part = body.pop("status", None) if obj["kind"] == "Pod" else None
        status, created = client.request("POST", path_for(body), body)
        if status == 422:
            refused.append((obj, created.get("message", "")))
            continue
        if status == 409 and obj["kind"] == "Service":
            continue  # the apiserver's own `kubernetes` Service
        if status != 201:
            raise AssertionError(f"creating {obj['kind']} {body['metadata'].get('name')}: {status} {created}")
        if obj["kind"] == "Node":
            # TaintNodesByCondition adds node.kubernetes.io/not-ready; no node controller removes it here.
            wanted = (obj.get("spec") or {}).get("taints") or []
            if (created.get("spec") or {}).get("taints") != wanted:
                client.ok("PATCH", path_for(body, True), {"spec": {"taints": wanted or None}},
                          "application/merge-patch+json")
        if status_part:
            client.ok("PATCH", path_for(body, True) + "/status", {"status": status_part},
                      "application/merge-patch+json")
    return refused
