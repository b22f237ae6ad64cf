"""The synthetic cluster's pods are shaped as a real kube-apiserver returns a running controller's pod.

The bare pod the generator builds (the small shape, what a ReplicaSet controller sends, bound to its node)
is created on the real server by the controller's field manager, given what the ServiceAccount admission
plugin adds (the rig runs without it), and its status is applied as a kubelet reports it. The pod read back
must have the top-level and metadata keys of the synthetic (realistic) pod of the same name, and a size
within 25% of it: the benches measure doctor on objects the size real clusters serve.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tests.apiserver.resources import BY_KEY
from tests.apiserver.store import Store
from tests.apiserver.synthetic import SyntheticSpec, generate
from tests.realcluster.cluster import RealCluster

SPEC = SyntheticSpec(nodes=12, windows_share=0.25, pods=120, seed=5)
SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def synthetic_pods(realistic: bool) -> dict[str, dict[str, Any]]:
    store = Store()
    generate(store, replace(SPEC, realistic=realistic))
    pods = BY_KEY[("", "v1", "pods")]
    return {entry.name: entry.obj(pods) for entry in store.list(pods).entries}


def kubelet_status(pod: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """The status a kubelet reports for a running pod: every condition, the IP lists, and per container its
    state, image ID, resources, mounts and user (a Linux node)."""
    status = bare["status"]
    started = status["startTime"]
    conditions = [{"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": started,
                   "observedGeneration": 1}
                  for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    statuses = []
    for item in status["containerStatuses"]:
        container = containers[item["name"]]
        statuses.append({
            **item, "lastState": {}, "allocatedResources": container["resources"].get("requests", {}),
            "resources": container["resources"],
            "volumeMounts": [{**m, "recursiveReadOnly": "Disabled"} for m in container["volumeMounts"]],
            "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0]}}})
    return {"observedGeneration": 1, "phase": status["phase"], "conditions": conditions,
            "hostIP": status["hostIP"], "hostIPs": [{"ip": status["hostIP"]}], "podIP": status["podIP"],
            "podIPs": [{"ip": status["podIP"]}], "startTime": started, "qosClass": status["qosClass"],
            "containerStatuses": statuses}


def real_pod(cluster: RealCluster, bare: dict[str, Any]) -> dict[str, Any]:
    client = cluster.client()
    namespace = bare["metadata"]["namespace"]
    status, body = client.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    assert status in (201, 409), body
    owner = bare["metadata"]["ownerReferences"][0]
    volume = "kube-api-access-x7k2p"
    mount = {"name": volume, "readOnly": True, "mountPath": SA_MOUNT}
    spec = {**bare["spec"], "volumes": [{"name": volume, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}}],
        "containers": [{**c, "volumeMounts": [mount]} for c in bare["spec"]["containers"]]}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"generateName": owner["name"] + "-", "labels": bare["metadata"]["labels"],
                        "ownerReferences": [owner]},
           "spec": spec}
    created = client.ok("POST", f"/api/v1/namespaces/{namespace}/pods?fieldManager=kube-controller-manager", pod)
    name = created["metadata"]["name"]
    apply = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
             "status": kubelet_status(created, bare)}
    client.ok("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status?fieldManager=kubelet&force=true",
              json.dumps(apply).encode(), "application/apply-patch+yaml")
    return client.ok("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")


def size(obj: dict[str, Any]) -> int:
    return len(json.dumps(obj, separators=(",", ":")))


def test_synthetic_pods_have_the_keys_and_size_of_a_real_servers_pod(real_cluster: RealCluster) -> None:
    bare_pods = synthetic_pods(realistic=False)
    dressed_pods = synthetic_pods(realistic=True)
    name = next(n for n, p in bare_pods.items()
                if p["status"]["phase"] == "Running" and p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
                and p["status"]["containerStatuses"][0]["ready"] and not p["spec"]["nodeName"].startswith("akswin"))
    bare, synthetic = bare_pods[name], dressed_pods[name]
    real = real_pod(real_cluster, bare)
    assert set(synthetic) == set(real)
    assert set(synthetic["metadata"]) == set(real["metadata"]), \
        (sorted(synthetic["metadata"]), sorted(real["metadata"]))
    assert {e["manager"] for e in synthetic["metadata"]["managedFields"]} == \
        {e["manager"] for e in real["metadata"]["managedFields"]}
    assert set(synthetic["spec"]) == set(real["spec"]), (sorted(synthetic["spec"]), sorted(real["spec"]))
    assert set(synthetic["status"]) == set(real["status"]), (sorted(synthetic["status"]), sorted(real["status"]))
    ratio = size(synthetic) / size(real)
    assert 0.75 <= ratio <= 1.25, f"synthetic pod {size(synthetic)} bytes, real {size(real)} bytes"
    # The small shape is what the benches ran on before: a fraction of the real size.
    assert size(bare) < 0.5 * size(real)
