"""Objects cut down to the fields doctor reads: what --save-dump writes and what explain is given.

Dropping managedFields, node image lists and last-applied annotations keeps a saved dump (and the
representative pods held for explain's rules) a fraction of the API's size.
"""

from __future__ import annotations

from typing import Any

from kubectl_win.doctor.read.fields import as_dict

_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def _metadata(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    meta = as_dict(obj.get("metadata"))
    out: dict[str, Any] = {}
    for key in ("name", "namespace", *keys):
        value = meta.get(key)
        if value in (None, {}, []):
            continue
        if key == "annotations" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in _DROP_ANNOTATIONS}
            if not value:
                continue
        out[key] = value
    return out


def _base(obj: dict[str, Any], api_version: str, kind: str, *meta_keys: str) -> dict[str, Any]:
    return {"apiVersion": obj.get("apiVersion") or api_version, "kind": obj.get("kind") or kind,
            "metadata": _metadata(obj, *meta_keys)}


def node(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "v1", "Node", "labels", "annotations")
    spec = as_dict(obj.get("spec"))
    out["spec"] = {k: spec[k] for k in ("taints", "unschedulable", "podCIDR", "podCIDRs", "providerID") if k in spec}
    status = as_dict(obj.get("status"))
    out["status"] = {
        "conditions": [{k: c.get(k) for k in ("type", "status", "reason", "message") if k in c}
                       for c in status.get("conditions") or () if isinstance(c, dict)],
        "nodeInfo": status.get("nodeInfo") or {},
        "addresses": [a for a in status.get("addresses") or () if isinstance(a, dict) and a.get("type") != "Hostname"],
        "capacity": {k: v for k, v in (status.get("capacity") or {}).items() if k in ("memory", "cpu")},
        "allocatable": {k: v for k, v in (status.get("allocatable") or {}).items() if k in ("memory", "cpu")},
    }
    return out


def namespace(obj: dict[str, Any]) -> dict[str, Any]:
    return _base(obj, "v1", "Namespace", "labels")


def runtime_class(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "node.k8s.io/v1", "RuntimeClass")
    out["handler"] = obj.get("handler")
    if obj.get("scheduling"):
        out["scheduling"] = obj["scheduling"]
    return out


def gmsa(obj: dict[str, Any]) -> dict[str, Any]:
    return _base(obj, "windows.k8s.io/v1", "GMSACredentialSpec")


def service(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "v1", "Service")
    spec = as_dict(obj.get("spec"))
    # hns compares the ports, IPs and traffic policies with a node's HNS load balancers.
    out["spec"] = {"type": spec.get("type"), "clusterIP": spec.get("clusterIP"),
                   "ports": [{k: p[k] for k in ("name", "port", "protocol", "nodePort", "targetPort") if k in p}
                             for p in spec.get("ports") or () if isinstance(p, dict)]}
    for key in ("clusterIPs", "externalIPs", "externalTrafficPolicy", "internalTrafficPolicy"):
        if spec.get(key):
            out["spec"][key] = spec[key]
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") if isinstance(
        obj.get("status"), dict) else None
    if ingress:
        out["status"] = {"loadBalancer": {"ingress": ingress}}
    return out


def endpoint_slice(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "discovery.k8s.io/v1", "EndpointSlice", "labels")
    out["addressType"] = obj.get("addressType")
    out["ports"] = obj.get("ports") or []
    out["endpoints"] = [{k: e[k] for k in ("addresses", "conditions", "nodeName") if k in e}
                        for e in obj.get("endpoints") or () if isinstance(e, dict)]
    return out


def event(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "v1", "Event")
    for key in ("involvedObject", "regarding", "reason", "message", "note", "type", "count", "source",
                "reportingInstance"):
        if key in obj:
            out[key] = obj[key]
    return out


def pod(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "v1", "Pod", "labels", "annotations", "ownerReferences")
    out["spec"] = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    out["status"] = {k: status[k] for k in ("phase", "podIP", "podIPs", "initContainerStatuses", "containerStatuses")
                     if k in status}
    return out


def pod_template(obj: dict[str, Any]) -> dict[str, Any]:
    """A pod as its template: metadata and spec, no status (what explain's rules read of a group's pod)."""
    out = _base(obj, "v1", "Pod", "labels", "annotations", "ownerReferences")
    out["spec"] = as_dict(obj.get("spec"))
    return out


def workload(obj: dict[str, Any]) -> dict[str, Any]:
    out = _base(obj, "", "", "labels", "annotations", "ownerReferences")
    out["spec"] = as_dict(obj.get("spec"))
    return out
