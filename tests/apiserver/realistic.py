"""The synthetic cluster's objects dressed as a running cluster's kube-apiserver returns them.

The generator (synthetic.py) builds each object with the fields doctor's checks are about; a real server
returns a good deal more, and a pod from a running cluster is about 5 KB where the bare one is under 1 KB:

- `metadata.managedFields`: the controller's entry (an Update of everything it sent, defaults included) and
  the kubelet's status entry, as FieldsV1 trees (fields_v1 writes them the way the server's structured
  merge diff does: `f:` fields, `k:{...}` list-map keys, `.` for a map that is itself set);
- what admission and defaulting add to a pod: the service-account token's projected volume and its mounts
  (the ServiceAccount plugin), the not-ready/unreachable tolerations (DefaultTolerationSeconds), the
  defaulted fields (imagePullPolicy, terminationMessagePath, enableServiceLinks, priority, ...);
- the kubelet's full status: five conditions with transition times, host and pod IP lists, and for each
  container its allocated resources, resources, volume mounts and (on Linux) the user it runs as;
- for nodes: the cloud's labels and annotations, the kubelet's image list, runtime handlers, every
  resource of capacity, conditions with heartbeats; for controllers: defaulted specs and status conditions.

tests/test_synthetic_shape.py checks a pod of this shape against one a real kube-apiserver returns (the
same top-level and metadata keys, a size within 25%). Decoration draws from its own random stream, so a seed
gives the same cluster in both shapes, only dressed differently.
"""

from __future__ import annotations

import json
import random
from typing import Any

# List fields merged by key (the +listMapKey of the Kubernetes API), the others are atomic in FieldsV1.
_LIST_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",), "initContainers": ("name",), "volumes": ("name",), "env": ("name",),
    "ports": ("containerPort", "protocol"), "volumeMounts": ("mountPath",), "conditions": ("type",),
    "podIPs": ("ip",), "ownerReferences": ("uid",), "addresses": ("type",), "taints": ("key", "effect"),
}
SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


_ATOMIC = frozenset({"nodeSelector", "tolerations", "sources", "containerStatuses", "hostIPs", "images"})
_UNMARKED_LISTS = frozenset({"containers", "conditions", "podIPs"})  # list-maps the server writes without "."


def fields_v1(obj: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The FieldsV1 set of an object's fields, keys sorted, as the server's structured merge diff writes it:
    `f:` fields, `k:{...}` for an entry of a list merged by key, `.` for a map (below metadata, spec and
    status) or list that is itself set, `{}` for a leaf or an atomic field."""
    out: dict[str, Any] = {".": {}} if depth >= 2 else {}
    for key in sorted(obj):
        value = obj[key]
        name = "f:" + key
        if key in _ATOMIC:
            out[name] = {}
        elif isinstance(value, dict) and value:
            out[name] = fields_v1(value, depth + 1)
        elif isinstance(value, list) and value and key in _LIST_KEYS and all(isinstance(v, dict) for v in value):
            keys = _LIST_KEYS[key]
            entries: dict[str, Any] = {} if key in _UNMARKED_LISTS else {".": {}}
            for item in value:
                ident = json.dumps({k: item[k] for k in keys if k in item}, separators=(",", ":"))
                entries["k:" + ident] = {} if key == "ownerReferences" else fields_v1(item, 2)
            out[name] = entries
        else:
            out[name] = {}
    return out


def managed(manager: str, time: str, fields: dict[str, Any], subresource: str | None = None) -> dict[str, Any]:
    entry = {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": time,
             "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _token(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice(_NAME_CHARS) for _ in range(length))


def container_defaults(container: dict[str, Any], mount: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(container)
    if mount is not None:
        out["volumeMounts"] = [*out.get("volumeMounts", ()), mount]
    out.setdefault("resources", {})
    out.setdefault("terminationMessagePath", "/dev/termination-log")
    out.setdefault("terminationMessagePolicy", "File")
    image = str(out.get("image") or "")
    out.setdefault("imagePullPolicy", "Always" if image.endswith(":latest") or ":" not in image else "IfNotPresent")
    return out


def template_spec_defaults(spec: dict[str, Any]) -> dict[str, Any]:
    """A pod template's spec as the server stores a controller's template (defaults filled in)."""
    out = dict(spec)
    out["containers"] = [container_defaults(c, None) for c in spec.get("containers") or ()]
    for key, value in (("restartPolicy", "Always"), ("terminationGracePeriodSeconds", 30),
                       ("dnsPolicy", "ClusterFirst"), ("securityContext", {}),
                       ("schedulerName", "default-scheduler")):
        out.setdefault(key, value)
    return out


def pod(obj: dict[str, Any], rng: random.Random, windows: bool) -> dict[str, Any]:
    meta, spec, status = dict(obj["metadata"]), dict(obj["spec"]), dict(obj["status"])
    created = meta["creationTimestamp"]
    started = status.get("startTime", created)
    volume = f"kube-api-access-{_token(rng)}"
    mount = {"name": volume, "readOnly": True, "mountPath": SA_MOUNT}
    spec["volumes"] = [*spec.get("volumes", ()), {"name": volume, "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}}]
    spec["containers"] = [container_defaults(c, mount) for c in spec.get("containers") or ()]
    spec["serviceAccount"] = spec.get("serviceAccountName", "default")
    spec.setdefault("securityContext", {})
    spec["tolerations"] = [*spec.get("tolerations", ()), *DEFAULT_TOLERATIONS]
    spec.update({"priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"})
    owner = meta["ownerReferences"][0] if meta.get("ownerReferences") else None
    if owner:
        meta["generateName"] = owner["name"] + "-"
    meta["generation"] = 1
    order = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
             "labels", "annotations", "ownerReferences")
    meta = {**{k: meta[k] for k in order if k in meta}, **meta}  # the order the server writes
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
    running = status.get("phase") == "Running"
    conditions = []
    for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
        ok = kind in ("Initialized", "PodScheduled") or (kind == "PodReadyToStartContainers" and running) or ready
        condition: dict[str, Any] = {"observedGeneration": 1, "type": kind, "status": "True" if ok else "False",
                                     "lastProbeTime": None, "lastTransitionTime": started}
        if not ok and kind in ("Ready", "ContainersReady"):
            names = ",".join(c["name"] for c in spec["containers"])
            condition.update({"reason": "ContainersNotReady", "message": f"containers with unready status: [{names}]"})
        conditions.append(condition)
    status["conditions"] = conditions
    status["observedGeneration"] = 1
    status["hostIPs"] = [{"ip": status.get("hostIP", "")}]
    if status.get("podIP"):
        status["podIPs"] = [{"ip": status["podIP"]}]
    by_name = {c["name"]: c for c in spec["containers"]}
    statuses = []
    for item in status.get("containerStatuses") or ():
        item = dict(item)
        container = by_name.get(item["name"], {})
        resources = container.get("resources") or {}
        item.setdefault("lastState", {})
        item["allocatedResources"] = dict(resources.get("requests") or {})
        item["resources"] = resources
        item["volumeMounts"] = [{**mount, "recursiveReadOnly": "Disabled"}]
        if not windows:
            item["user"] = {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0]}}
        statuses.append(item)
    status["containerStatuses"] = statuses
    controller_fields = fields_v1({"metadata": {k: meta[k] for k in ("generateName", "labels", "ownerReferences")
                                                if k in meta},
                                   "spec": {k: v for k, v in spec.items()
                                            if k not in ("priority", "preemptionPolicy")}})
    kubelet_fields = fields_v1({"status": {k: v for k, v in status.items() if k != "qosClass"}})
    meta["managedFields"] = [managed("kube-controller-manager", created, controller_fields),
                             managed("kubelet", started, kubelet_fields, "status")]
    return {**obj, "metadata": meta, "spec": spec, "status": status}


def _image_list(rng: random.Random, windows: bool) -> list[dict[str, Any]]:
    names = (["mcr.microsoft.com/windows/nanoserver", "mcr.microsoft.com/windows/servercore",
              "mcr.microsoft.com/oss/kubernetes/pause", "mcr.microsoft.com/azuremonitor/containerinsights/ciprod",
              "mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi",
              "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe",
              "mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar", "docker.io/calico/node-windows",
              "sigwindowstools/kube-proxy", "mcr.microsoft.com/dotnet/framework/aspnet"] if windows else
             ["mcr.microsoft.com/oss/kubernetes/pause", "mcr.microsoft.com/oss/kubernetes/kube-proxy",
              "mcr.microsoft.com/azuremonitor/containerinsights/ciprod", "mcr.microsoft.com/oss/calico/node",
              "mcr.microsoft.com/oss/calico/cni", "mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi",
              "mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi", "mcr.microsoft.com/oss/kubernetes/coredns",
              "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe", "docker.io/library/nginx",
              "docker.io/library/redis", "docker.io/library/postgres", "ghcr.io/example/api",
              "mcr.microsoft.com/oss/kubernetes/metrics-server", "mcr.microsoft.com/aks/ip-masq-agent-v2"])
    out = []
    for name in names:
        digest = f"{rng.getrandbits(256):064x}"
        tag = f"v{rng.randint(1, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        out.append({"names": [f"{name}@sha256:{digest}", f"{name}:{tag}"],
                    "sizeBytes": rng.randint(20_000_000, 5_000_000_000 if windows else 900_000_000)})
    return out


def node(obj: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    meta, spec, status = dict(obj["metadata"]), dict(obj["spec"]), dict(obj["status"])
    windows = meta["labels"].get("kubernetes.io/os") == "windows"
    name, created = meta["name"], meta["creationTimestamp"]
    zone = meta["labels"].get("topology.kubernetes.io/zone", "eastus-1")
    pool = meta["labels"].get("agentpool", "pool")
    meta["labels"] = {**meta["labels"],
                      "beta.kubernetes.io/instance-type": meta["labels"].get("node.kubernetes.io/instance-type", ""),
                      "failure-domain.beta.kubernetes.io/region": "eastus",
                      "failure-domain.beta.kubernetes.io/zone": zone,
                      "kubernetes.azure.com/agentpool": pool, "kubernetes.azure.com/cluster": "MC_rg_cluster_eastus",
                      "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
                      "kubernetes.azure.com/node-image-version": "AKSWindows-2022-containerd-20348.2655.240912"
                      if windows else "AKSUbuntu-2204gen2containerd-202409.23.0",
                      "kubernetes.azure.com/os-sku": "Windows2022" if windows else "Ubuntu",
                      "topology.disk.csi.azure.com/zone": zone, "topology.kubernetes.io/region": "eastus"}
    meta["annotations"] = {**meta.get("annotations", {}),
                           "csi.volume.kubernetes.io/nodeid": json.dumps({"disk.csi.azure.com": name,
                                                                          "file.csi.azure.com": name})}
    capacity = {"cpu": status["capacity"]["cpu"], "ephemeral-storage": "129886128Ki", "hugepages-1Gi": "0",
                "hugepages-2Mi": "0", "memory": status["capacity"]["memory"], "pods": status["capacity"]["pods"]}
    allocatable = {**capacity, "cpu": status["allocatable"]["cpu"], "ephemeral-storage": "119703055367",
                   "memory": status["allocatable"]["memory"]}
    heartbeat = created
    conditions = []
    for condition in status["conditions"]:
        message = {"MemoryPressure": "kubelet has sufficient memory available",
                   "DiskPressure": "kubelet has no disk pressure",
                   "PIDPressure": "kubelet has sufficient PID available",
                   "Ready": "kubelet is posting ready status"}.get(condition["type"], "")
        conditions.append({"lastHeartbeatTime": heartbeat, "lastTransitionTime": condition.get("lastTransitionTime",
                                                                                                created),
                           "message": message, **condition})
    status.update({"capacity": capacity, "allocatable": allocatable, "conditions": conditions,
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "images": _image_list(rng, windows),
                   "runtimeHandlers": [{"name": "", "features": {"recursiveReadOnlyMounts": not windows,
                                                                 "userNamespaces": False}},
                                       *([] if windows else [{"name": "runc", "features": {
                                           "recursiveReadOnlyMounts": True, "userNamespaces": False}}])],
                   "features": {"supplementalGroupsPolicy": not windows}, "config": {}})
    meta["managedFields"] = [
        managed("kubelet", created, fields_v1({"metadata": {"annotations": {
            k: v for k, v in meta["annotations"].items() if k != "csi.volume.kubernetes.io/nodeid"},
            "labels": meta["labels"]}})),
        managed("kube-controller-manager", created, fields_v1({"metadata": {"annotations": {
            "node.alpha.kubernetes.io/ttl": "0"}}, "spec": {k: v for k, v in spec.items() if k == "podCIDR"}})),
        managed("kubelet", heartbeat, fields_v1({"status": {k: v for k, v in status.items() if k != "images"}}),
                "status"),
    ]
    return {**obj, "metadata": meta, "spec": spec, "status": status}


def workload(obj: dict[str, Any]) -> dict[str, Any]:
    """A Deployment, ReplicaSet or DaemonSet as the server returns a controller's object."""
    meta, spec, status = dict(obj["metadata"]), dict(obj["spec"]), dict(obj.get("status") or {})
    created = meta["creationTimestamp"]
    template = dict(spec["template"])
    template["metadata"] = {"creationTimestamp": None, **template.get("metadata", {})}
    template["spec"] = template_spec_defaults(template.get("spec") or {})
    spec["template"] = template
    kind = obj["kind"]
    meta["generation"] = 1
    manager = "kube-controller-manager" if kind == "ReplicaSet" else "kubectl-client-side-apply"
    if kind == "Deployment":
        meta["annotations"] = {**meta.get("annotations", {}), "deployment.kubernetes.io/revision": "1"}
        spec.update({"progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%",
                                                                             "maxSurge": "25%"}}})
        status["conditions"] = [
            {"type": "Available", "status": "True", "lastUpdateTime": created, "lastTransitionTime": created,
             "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": created, "lastTransitionTime": created,
             "reason": "NewReplicaSetAvailable",
             "message": f'ReplicaSet "{meta["name"]}" has successfully progressed.'}]
    elif kind == "DaemonSet":
        spec.update({"revisionHistoryLimit": 10, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
            "maxUnavailable": 1, "maxSurge": 0}}})
    status["observedGeneration"] = 1
    meta["managedFields"] = [managed(manager, created, fields_v1({"metadata": {
        k: meta[k] for k in ("labels", "annotations", "ownerReferences") if k in meta}, "spec": spec})),
        managed("kube-controller-manager", created, fields_v1({"status": status}), "status")]
    return {**obj, "metadata": meta, "spec": spec, "status": status}


def event(obj: dict[str, Any]) -> dict[str, Any]:
    source = obj.get("source") or {}
    meta = dict(obj["metadata"])
    return {**obj, "metadata": meta, "eventTime": None, "reportingComponent": source.get("component", ""),
            "reportingInstance": source.get("host", "")}
