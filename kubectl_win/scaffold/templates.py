"""The objects scaffold writes, as plain dicts: workloads, their pod template, a Service and a RuntimeClass."""

from __future__ import annotations

from typing import Any

from kubectl_win.scaffold.options import WorkloadOptions
from kubectl_win.scaffold.placement import Placement

NAME_LABEL = "app.kubernetes.io/name"
DEFAULT_HANDLER = "runhcs-wcow-process"  # containerd's process-isolated Windows runtime handler

_API = {
    "deployment": ("apps/v1", "Deployment"),
    "statefulset": ("apps/v1", "StatefulSet"),
    "daemonset": ("apps/v1", "DaemonSet"),
    "job": ("batch/v1", "Job"),
    "cronjob": ("batch/v1", "CronJob"),
}


def workload(opts: WorkloadOptions, placement: Placement) -> dict[str, Any]:
    api_version, kind = _API[opts.kind]
    labels = {NAME_LABEL: opts.name}
    template = {"metadata": {"labels": dict(labels)}, "spec": pod_spec(opts, placement)}
    spec: dict[str, Any]
    if opts.kind in ("job", "cronjob"):
        template["spec"]["restartPolicy"] = "OnFailure"
        job_spec: dict[str, Any] = {"backoffLimit": 4, "template": template}
        if opts.kind == "job":
            spec = job_spec
        else:
            spec = {"schedule": opts.schedule, "concurrencyPolicy": "Forbid",
                    "jobTemplate": {"metadata": {"labels": dict(labels)}, "spec": job_spec}}
    else:
        spec = {}
        if opts.kind != "daemonset":
            spec["replicas"] = opts.replicas
        if opts.kind == "statefulset":
            spec["serviceName"] = opts.name
        spec["selector"] = {"matchLabels": dict(labels)}
        spec["template"] = template
    return {"apiVersion": api_version, "kind": kind, "metadata": _metadata(opts.name, opts.namespace, labels),
            "spec": spec}


def pod_spec(opts: WorkloadOptions, placement: Placement) -> dict[str, Any]:
    spec: dict[str, Any] = {"os": {"name": "windows"}, "nodeSelector": dict(placement.node_selector)}
    if placement.tolerations:
        spec["tolerations"] = [dict(t) for t in placement.tolerations]
    if opts.runtime_class:
        spec["runtimeClassName"] = opts.runtime_class
    windows_options: dict[str, Any] = {}
    if opts.hostprocess:
        # Every container inherits the pod-level value, so all of them are HostProcess containers.
        spec["hostNetwork"] = True
        windows_options["hostProcess"] = True
    if opts.gmsa:
        windows_options["gmsaCredentialSpecName"] = opts.gmsa
    if opts.run_as_user_name:
        windows_options["runAsUserName"] = opts.run_as_user_name
    if windows_options:
        spec["securityContext"] = {"windowsOptions": windows_options}
    spec["containers"] = [container(opts)]
    return spec


def container(opts: WorkloadOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"name": opts.name, "image": opts.image}
    if opts.ports:
        out["ports"] = [{"containerPort": p, "protocol": "TCP"} for p in opts.ports]
    # Windows pages instead of OOM-killing, so a container without limits can starve the node.
    out["resources"] = {
        "requests": {"cpu": opts.cpu, "memory": opts.memory},
        "limits": {"cpu": opts.cpu, "memory": opts.memory},
    }
    if opts.ports:
        probe_port = opts.ports[0]
        # Windows images are large and start slowly: the startup probe gives them five minutes.
        out["startupProbe"] = _tcp_probe(probe_port, period=10, failures=30)
        out["readinessProbe"] = _tcp_probe(probe_port, period=10, failures=3)
        out["livenessProbe"] = _tcp_probe(probe_port, period=20, failures=3)
    return out


def service(opts: WorkloadOptions) -> dict[str, Any]:
    labels = {NAME_LABEL: opts.name}
    spec: dict[str, Any] = {"type": opts.service, "selector": dict(labels)}
    if opts.kind == "statefulset" and opts.service == "ClusterIP":
        spec["clusterIP"] = "None"  # a StatefulSet's governing Service is headless: one DNS name per pod
    spec["ports"] = [{"name": f"tcp-{p}", "port": p, "targetPort": p, "protocol": "TCP"} for p in opts.ports]
    return {"apiVersion": "v1", "kind": "Service", "metadata": _metadata(opts.name, opts.namespace, labels),
            "spec": spec}


def runtime_class(name: str, handler: str, placement: Placement) -> dict[str, Any]:
    scheduling: dict[str, Any] = {"nodeSelector": dict(placement.node_selector)}
    if placement.tolerations:
        scheduling["tolerations"] = [dict(t) for t in placement.tolerations]
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": handler, "scheduling": scheduling}


def _metadata(name: str, namespace: str | None, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(labels)
    return meta


def _tcp_probe(port: int, period: int, failures: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "periodSeconds": period, "timeoutSeconds": 5, "failureThreshold": failures}
