"""Builders for the Kubernetes objects the doctor, images and symptom tests feed the tool (nodes, pods, workloads,
events, a Snapshot of them)."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_win.doctor.build import SnapshotBuilder
from kubectl_win.doctor.read.plan import KIND_ORDER, RESOURCE_OF_KIND
from kubectl_win.doctor.records import Snapshot


def _current(build: int) -> str:
    """The newest monthly revision the update history knows for the build: helper nodes are up to date, so
    only the tests about patch level see a node behind."""
    from kubectl_win import updates

    row = updates.newest_monthly(build)
    assert row is not None, build
    return str(row.revision)


BUILDS = {17763: ("Windows Server 2019 Datacenter", _current(17763)),
          20348: ("Windows Server 2022 Datacenter", _current(20348)),
          26100: ("Windows Server 2025 Datacenter", _current(26100)), 19042: ("Windows Server Datacenter", "1052")}


def at_revision(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    """The Node object `obj` with its kernelVersion on another revision of its build."""
    info = obj["status"]["nodeInfo"]
    info["kernelVersion"] = info["kernelVersion"].rsplit(".", 1)[0] + f".{revision}"
    return obj


def node(name: str, *, os: str = "windows", build: int = 20348, runtime: str = "containerd://1.7.22",
         kubelet: str = "v1.31.4", taints: list[dict[str, str]] | None = None, ready: bool = True,
         label: str | None | bool = True, unschedulable: bool = False, capacity: str = "16Gi",
         allocatable: str = "13Gi", network_unavailable: bool = False, labels: dict[str, str] | None = None,
         annotations: dict[str, str] | None = None) -> dict[str, Any]:
    node_labels = {"kubernetes.io/os": os, "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name}
    if os == "windows":
        image, patch = BUILDS.get(build, ("Windows Server", "1"))
        kernel = f"10.0.{build}.{patch}"
        if label is True:
            node_labels["node.kubernetes.io/windows-build"] = f"10.0.{build}"
        elif isinstance(label, str):
            node_labels["node.kubernetes.io/windows-build"] = label
        if taints is None:
            taints = [{"key": "os", "value": "windows", "effect": "NoSchedule"}]
    else:
        image, kernel = "Ubuntu 22.04.4 LTS", "5.15.0-1071-azure"
        taints = taints or []
    node_labels.update(labels or {})
    conditions = [{"type": "Ready", "status": "True" if ready else "False",
                   "reason": "KubeletReady" if ready else "KubeletNotReady",
                   "message": "kubelet is posting ready status" if ready else "container runtime is down"}]
    if network_unavailable:
        conditions.append({"type": "NetworkUnavailable", "status": "True", "reason": "NoRouteCreated",
                           "message": "Node created without a route"})
    meta: dict[str, Any] = {"name": name, "labels": node_labels}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1", "kind": "Node", "metadata": meta,
        "spec": {"taints": taints, **({"unschedulable": True} if unschedulable else {})},
        "status": {
            "conditions": conditions,
            "capacity": {"cpu": "4", "memory": capacity},
            "allocatable": {"cpu": "4", "memory": allocatable},
            "nodeInfo": {"osImage": image, "kernelVersion": kernel, "operatingSystem": os,
                         "architecture": "amd64", "containerRuntimeVersion": runtime, "kubeletVersion": kubelet},
        },
    }


def windows_spec(image: str = "mcr.microsoft.com/windows/servercore:ltsc2022", *, selector: bool = True,
                 toleration: bool = True, memory: str | None = "1Gi", name: str = "app",
                 **extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image}
    if memory:
        container["resources"] = {"limits": {"memory": memory, "cpu": "1"}, "requests": {"memory": memory}}
    spec: dict[str, Any] = {"containers": [container]}
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/os": "windows"}
    if toleration:
        spec["tolerations"] = [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]
    spec.update(extra)
    return spec


def linux_spec(image: str = "registry.example.com/shop/api:2.4.1", *, selector: bool = True,
               **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": image,
                                            "resources": {"limits": {"memory": "256Mi"}}}]}
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    spec.update(extra)
    return spec


def workload(kind: str, name: str, spec: dict[str, Any], *, namespace: str = "shop",
             annotations: dict[str, str] | None = None, template_annotations: dict[str, str] | None = None
             ) -> dict[str, Any]:
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    template: dict[str, Any] = {"metadata": {"labels": {"app": name}}, "spec": copy.deepcopy(spec)}
    if template_annotations:
        template["metadata"]["annotations"] = template_annotations
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": template}
    if kind == "CronJob":
        body = {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": template}}}
    elif kind == "Job":
        body = {"template": template}
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": body}


def pod(name: str, spec: dict[str, Any], *, namespace: str = "shop", node: str | None = None,
        owner: tuple[str, str] | None = None, template_hash: str | None = None, phase: str = "Running",
        statuses: list[dict[str, Any]] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {}}
    if owner:
        api = "apps/v1"
        meta["ownerReferences"] = [{"apiVersion": api, "kind": owner[0], "name": owner[1], "controller": True,
                                    "uid": f"uid-{owner[1]}"}]
    if template_hash:
        meta["labels"]["pod-template-hash"] = template_hash
    if annotations:
        meta["annotations"] = annotations
    body = copy.deepcopy(spec)
    if node:
        body["nodeName"] = node
    status: dict[str, Any] = {"phase": phase}
    if statuses is not None:
        status["containerStatuses"] = statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body, "status": status}


def deployment_pod(deploy: str, suffix: str, spec: dict[str, Any], *, namespace: str = "shop",
                   node: str | None = None, **kw: Any) -> dict[str, Any]:
    template_hash = "5d8f7c9b6"
    return pod(f"{deploy}-{template_hash}-{suffix}", spec, namespace=namespace, node=node,
               owner=("ReplicaSet", f"{deploy}-{template_hash}"), template_hash=template_hash, **kw)


def daemonset_pod(ds: str, node_name: str, spec: dict[str, Any], *, namespace: str = "kube-system",
                  **kw: Any) -> dict[str, Any]:
    return pod(f"{ds}-{node_name[-5:]}", spec, namespace=namespace, node=node_name, owner=("DaemonSet", ds),
               template_hash=None, **kw)


def waiting(name: str, image: str, reason: str, message: str, *, exit_code: int | None = None,
            restarts: int = 0) -> dict[str, Any]:
    status: dict[str, Any] = {"name": name, "image": image, "ready": False, "restartCount": restarts,
                              "state": {"waiting": {"reason": reason, "message": message}}}
    if exit_code is not None:
        status["lastState"] = {"terminated": {"exitCode": exit_code, "reason": "Error"}}
    return status


def event(involved: tuple[str, str, str], reason: str, message: str, *, host: str | None = None,
          count: int = 1, kind_api: str = "v1") -> dict[str, Any]:
    kind, namespace, name = involved
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.17f3a", "namespace": namespace},
            "involvedObject": {"apiVersion": kind_api, "kind": kind, "namespace": namespace, "name": name},
            "reason": reason, "message": message, "type": "Warning", "count": count,
            "source": {"component": "kubelet", **({"host": host} if host else {})}}


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


def service(name: str, ports: int = 1, *, namespace: str = "shop", headless: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"type": "ClusterIP", "clusterIP": "None" if headless else "10.0.0.10",
                     "ports": [{"port": 80 + i} for i in range(ports)]}}


def gmsa(name: str) -> dict[str, Any]:
    return {"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec", "metadata": {"name": name},
            "credspec": {}}


def runtime_class(name: str, handler: str = "runhcs-wcow-process", **scheduling: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                           "handler": handler}
    if scheduling:
        obj["scheduling"] = scheduling
    return obj


def snapshot_of(*objs: dict[str, Any], server: str | None = "v1.31.4", gmsa_served: bool = True,
                namespace: str | None = None, images: dict[str, Any] | None = None) -> Snapshot:
    """A snapshot of these objects, as if every resource doctor reads had been listed (`images`: what
    registries said about image references, as doctor --check-images records it)."""
    builder = SnapshotBuilder(server_version=server, namespace=namespace, images=dict(images or {}))
    order = {kind: i for i, kind in enumerate(KIND_ORDER)}
    for obj in sorted(objs, key=lambda o: order.get(o["kind"], 99)):
        builder.add(copy.deepcopy(obj))
    for resource in RESOURCE_OF_KIND.values():
        builder.mark_read(resource)
    if not gmsa_served:
        builder.gmsa_not_served()
    return builder.build()
