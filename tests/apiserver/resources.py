"""The resource table the test server serves: one row per resource, as kube-apiserver describes it."""

from __future__ import annotations

from dataclasses import dataclass, field

READ_VERBS = ["get", "list"]
WRITE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Resource:
    group: str  # "" for the core group
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # Field selectors the real server accepts for this resource, beyond metadata.name/namespace.
    field_labels: tuple[str, ...] = ()
    verbs: list[str] = field(default_factory=lambda: list(WRITE_VERBS))

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.group, self.version, self.plural)


_EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
    "reason", "reportingComponent", "source", "type",
)

RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "namespace", "Namespace", False, ("ns",), field_labels=("status.phase",)),
    Resource("", "v1", "nodes", "node", "Node", False, ("no",), field_labels=("spec.unschedulable",)),
    Resource("", "v1", "pods", "pod", "Pod", True, ("po",), ("all",),
             field_labels=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                           "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                           "status.podIP", "status.nominatedNodeName")),
    Resource("", "v1", "events", "event", "Event", True, ("ev",), field_labels=_EVENT_FIELDS),
    Resource("", "v1", "services", "service", "Service", True, ("svc",), ("all",)),
    Resource("", "v1", "endpoints", "endpoints", "Endpoints", True, ("ep",)),
    Resource("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",)),
    Resource("", "v1", "secrets", "secret", "Secret", True),
    Resource("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", True, ("sa",)),
    Resource("", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", True,
             ("rc",), ("all",), field_labels=("status.replicas",)),
    Resource("discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", True),
    Resource("apps", "v1", "deployments", "deployment", "Deployment", True, ("deploy",), ("all",)),
    Resource("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True, ("rs",), ("all",)),
    Resource("apps", "v1", "statefulsets", "statefulset", "StatefulSet", True, ("sts",), ("all",)),
    Resource("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True, ("ds",), ("all",)),
    Resource("batch", "v1", "jobs", "job", "Job", True, (), ("all",), field_labels=("status.successful",)),
    Resource("batch", "v1", "cronjobs", "cronjob", "CronJob", True, ("cj",), ("all",)),
    Resource("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", False),
    Resource("windows.k8s.io", "v1", "gmsacredentialspecs", "gmsacredentialspec", "GMSACredentialSpec", False),
)

BY_KEY: dict[tuple[str, str, str], Resource] = {r.key: r for r in RESOURCES}
BY_KIND: dict[tuple[str, str], Resource] = {(r.group_version, r.kind): r for r in RESOURCES}


def groups() -> dict[str, list[Resource]]:
    """Resources per API group (non-core), in table order."""
    out: dict[str, list[Resource]] = {}
    for r in RESOURCES:
        if r.group:
            out.setdefault(r.group, []).append(r)
    return out


def core() -> list[Resource]:
    return [r for r in RESOURCES if not r.group]


def resource_for_kind(api_version: str, kind: str) -> Resource | None:
    return BY_KIND.get((api_version, kind))
