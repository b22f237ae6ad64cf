"""What doctor reads: the resources per scope and the order objects reach the builder in.

The one list of doctor's reads: the live reader pages through it, the dump reader sorts by it, and the
in-cluster role (`kubectl win scaffold monitor`) is derived from it.
"""

from __future__ import annotations

from kubectl_win.kinds import PLURAL_OF_KIND

CLUSTER_RESOURCES = ("nodes", "namespaces", "runtimeclasses", "gmsacredentialspecs")
NAMESPACED_RESOURCES = ("pods", "deployments", "statefulsets", "daemonsets", "jobs", "cronjobs",
                        "replicationcontrollers", "services", "endpointslices", "events")

# The order objects must reach the builder in: nodes first, then what pods are judged against.
KIND_ORDER = ("Node", "Namespace", "RuntimeClass", "GMSACredentialSpec", "Pod", "Deployment", "StatefulSet",
              "DaemonSet", "Job", "CronJob", "ReplicaSet", "ReplicationController", "Service", "EndpointSlice", "Event")
RESOURCE_OF_KIND = {kind: PLURAL_OF_KIND[kind] for kind in KIND_ORDER}


def plan(scope: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cluster-scoped, namespaced) resources to read for a scope."""
    if scope == "nodes":
        return ("nodes",), ()
    return CLUSTER_RESOURCES, NAMESPACED_RESOURCES
