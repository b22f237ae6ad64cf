"""`kubectl win scaffold monitor`: the manifests that run `kubectl win serve` inside the cluster.

A Namespace (Pod Security `restricted` enforced), a ServiceAccount, a read-only ClusterRole and its
binding, a Deployment pinned to Linux nodes that runs as a non-root user on a read-only root file
system, a Service for the metrics port, a NetworkPolicy that admits scrapes only from the namespaces
given (the pod listens on every address of its own network namespace, as it must for the kubelet's probes
and Prometheus), and, when asked, a prometheus-operator ServiceMonitor.

The ClusterRole is derived from doctor's own list of what it reads (kubectl_win.doctor.read.plan) with
the API groups of kubectl_win.kube.resources, so it can never lag behind doctor: `get` and `list` on
exactly those resources. The server version doctor also reads is `/version`, which the default
`system:public-info-viewer` role lets every client read, so the role needs no nonResourceURLs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NAME = "kubectl-win"
DEFAULT_NAMESPACE = "kubectl-win"
DEFAULT_INTERVAL = "5m"
# Where kube-prometheus and most Prometheus installations run; --allow-from-namespace names others.
DEFAULT_SCRAPERS = ("monitoring",)
PORT = 9108
PORT_NAME = "metrics"
# A numeric user (runAsNonRoot can only be verified for numeric users); 65532 is the conventional
# "nonroot" of distroless images, and the docs' Dockerfile creates it.
RUN_AS = 65532
VERBS = ("get", "list")
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "monitor"}
# One doctor scan of 150,000 pods peaks under 300 MiB (docs/doctor.md, Performance): the limit leaves room.
RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}



@dataclass(frozen=True)
class MonitorOptions:
    image: str
    namespace: str = DEFAULT_NAMESPACE
    interval: str = DEFAULT_INTERVAL
    service_monitor: bool = False
    allow_from: tuple[str, ...] = DEFAULT_SCRAPERS  # namespaces whose pods may scrape the metrics port
    prometheus_rule: bool = False
    grafana_dashboard: bool = False
    serve_cluster_label: str | None = None  # serve --cluster-label; None: serve adds none in the cluster
    # --label: on the ServiceMonitor and PrometheusRule, which Prometheus selects by label (kube-prometheus-stack
    # by its `release` label)
    selection_labels: tuple[tuple[str, str], ...] = ()

    @property
    def cluster_label(self) -> str:
        """The label the alerts and the dashboard group clusters by: serve's, else the `cluster` label
        multi-cluster Prometheus setups add as an external or target label."""
        return self.serve_cluster_label or "cluster"


def interval(value: str, what: str = "interval") -> str:
    """serve's interval, checked by the parser serve itself uses (5m, 90s, 1h30m; more than zero)."""
    from kubectl_win.fleet.serve_options import parse_interval

    parse_interval(value, what)
    return value.strip()


def role_name(namespace: str) -> str:
    """The ClusterRole and binding are cluster-wide: one per namespace the monitor is installed in."""
    return f"{NAME}-monitor" if namespace == DEFAULT_NAMESPACE else f"{NAME}-monitor-{namespace}"


def role_rules() -> list[dict[str, Any]]:
    """`get` and `list` on every resource doctor reads, one rule per API group (core first)."""
    from kubectl_win.doctor.read import plan
    from kubectl_win.kube.resources import resolve

    by_group: dict[str, list[str]] = {}
    for resource in (*plan.CLUSTER_RESOURCES, *plan.NAMESPACED_RESOURCES):
        info = resolve(resource)
        by_group.setdefault(info.group, []).append(info.plural)
    return [{"apiGroups": [group], "resources": sorted(set(plurals)), "verbs": list(VERBS)}
            for group, plurals in sorted(by_group.items())]


def monitor_objects(opts: MonitorOptions) -> list[dict[str, Any]]:
    ns = opts.namespace
    objects = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": {**LABELS, "pod-security.kubernetes.io/enforce": "restricted"}}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, ns)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta(role_name(ns)), "rules": role_rules()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(role_name(ns)),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name(ns)},
         "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]},
        deployment(opts),
        {"apiVersion": "v1", "kind": "Service", "metadata": _meta(NAME, ns),
         "spec": {"type": "ClusterIP", "selector": dict(LABELS),
                  "ports": [{"name": PORT_NAME, "port": PORT, "targetPort": PORT_NAME, "protocol": "TCP"}]}},
        network_policy(opts),
    ]
    selected = {**LABELS, **dict(opts.selection_labels)}
    if opts.service_monitor:
        objects.append({
            "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {**_meta(NAME, ns), "labels": selected},
            "spec": {"selector": {"matchLabels": dict(LABELS)}, "namespaceSelector": {"matchNames": [ns]},
                     "endpoints": [{"port": PORT_NAME, "path": "/metrics", "interval": "1m",
                                    "scrapeTimeout": "30s"}]},
        })
    if opts.prometheus_rule:
        from kubectl_win.scaffold.alerts import prometheus_rule

        objects.append(prometheus_rule(ns, selected, opts.cluster_label))
    if opts.grafana_dashboard:
        from kubectl_win.scaffold.dashboard import dashboard_config_map

        objects.append(dashboard_config_map(ns, LABELS, opts.cluster_label))
    return objects


def network_policy(opts: MonitorOptions) -> dict[str, Any]:
    """Ingress to the metrics port from the scrapers' namespaces only (matched by the name label the API server
    sets on every namespace); nothing else may connect. Egress is left open: the pod reads the API server."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta(NAME, opts.namespace),
            "spec": {"podSelector": {"matchLabels": dict(LABELS)}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [
                         {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(opts.allow_from)}]}}],
                         "ports": [{"port": PORT_NAME, "protocol": "TCP"}]}]}}


def deployment(opts: MonitorOptions) -> dict[str, Any]:
    probe_get = {"port": PORT_NAME}
    container = {
        "name": NAME,
        "image": opts.image,
        "imagePullPolicy": "IfNotPresent",  # said, not defaulted (a :latest tag would default to Always)
        # Inside a pod the listener binds every interface: the kubelet's probes and Prometheus reach the
        # pod on its IP, never on its loopback. Only the Service and the pod network expose it.
        "args": ["serve", "--listen", f"0.0.0.0:{PORT}", "--interval", opts.interval,
                 *(("--cluster-label", opts.serve_cluster_label) if opts.serve_cluster_label else ())],
        "ports": [{"name": PORT_NAME, "containerPort": PORT, "protocol": "TCP"}],
        "resources": {key: dict(value) for key, value in RESOURCES.items()},
        "livenessProbe": {"httpGet": {"path": "/healthz", **probe_get}, "periodSeconds": 20, "timeoutSeconds": 5,
                          "failureThreshold": 3},
        # Ready once the first scan is done: a large cluster takes a while to read.
        "readinessProbe": {"httpGet": {"path": "/readyz", **probe_get}, "periodSeconds": 10, "timeoutSeconds": 5,
                           "failureThreshold": 3},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
                            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    pod_spec = {
        "os": {"name": "linux"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "serviceAccountName": NAME,
        "automountServiceAccountToken": True,  # serve reads the cluster with this account's token
        "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        # The root file system is read-only; Python's tempfile still needs a writable /tmp.
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME, opts.namespace),
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec}}}


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(LABELS)
    return meta
