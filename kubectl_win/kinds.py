"""The one table of the Kubernetes kinds the tool knows: API group and version, plural, scope, kubectl's
short names, and where a pod-bearing kind keeps its pod spec. kube/resources.py serves it to the API
paths and kubectl-style names, manifests/ to the pod spec walk, doctor to its reads and fixes.

A plain tuple table with no imports: offline commands read it on their start-up path.
"""

from __future__ import annotations

from collections import namedtuple

Kind = namedtuple("Kind", "kind group version plural namespaced short_names pod_spec read")
Kind.__doc__ = """`pod_spec`: the path of the pod spec in the object (() when the kind bears none); `read`: the
tool reads the kind from clusters (kubectl win's resource names), False for a kind met only in files."""

_TEMPLATE_SPEC = ("spec", "template", "spec")

KINDS: tuple[Kind, ...] = (
    Kind("Node", "", "v1", "nodes", False, ("no",), (), True),
    Kind("Namespace", "", "v1", "namespaces", False, ("ns",), (), True),
    Kind("Pod", "", "v1", "pods", True, ("po",), ("spec",), True),
    Kind("Event", "", "v1", "events", True, ("ev",), (), True),
    Kind("Service", "", "v1", "services", True, ("svc",), (), True),
    Kind("Endpoints", "", "v1", "endpoints", True, ("ep",), (), True),
    Kind("ConfigMap", "", "v1", "configmaps", True, ("cm",), (), True),
    Kind("Secret", "", "v1", "secrets", True, (), (), True),
    Kind("ServiceAccount", "", "v1", "serviceaccounts", True, ("sa",), (), True),
    Kind("ReplicationController", "", "v1", "replicationcontrollers", True, ("rc",), _TEMPLATE_SPEC, True),
    Kind("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", True, (), (), True),
    Kind("Deployment", "apps", "v1", "deployments", True, ("deploy",), _TEMPLATE_SPEC, True),
    Kind("ReplicaSet", "apps", "v1", "replicasets", True, ("rs",), _TEMPLATE_SPEC, True),
    Kind("StatefulSet", "apps", "v1", "statefulsets", True, ("sts",), _TEMPLATE_SPEC, True),
    Kind("DaemonSet", "apps", "v1", "daemonsets", True, ("ds",), _TEMPLATE_SPEC, True),
    Kind("Job", "batch", "v1", "jobs", True, (), _TEMPLATE_SPEC, True),
    Kind("CronJob", "batch", "v1", "cronjobs", True, ("cj",), ("spec", "jobTemplate", "spec", "template", "spec"),
         True),
    Kind("RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False, ("runtimeclass",), (), True),
    Kind("GMSACredentialSpec", "windows.k8s.io", "v1", "gmsacredentialspecs", False, ("gmsa",), (), True),
    Kind("PodTemplate", "", "v1", "podtemplates", True, (), ("template", "spec"), False),
)

# kind -> where its pod spec sits, for every pod-bearing kind.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {k.kind: k.pod_spec for k in KINDS if k.pod_spec}
# The controllers that stamp pods from a template (every pod-bearing kind read from clusters but Pod).
WORKLOAD_KINDS = frozenset(k.kind for k in KINDS if k.pod_spec and k.read and k.kind != "Pod")
PLURAL_OF_KIND: dict[str, str] = {k.kind: k.plural for k in KINDS}
