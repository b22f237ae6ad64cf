"""The objects scaffold writes, as plain dicts: workloads, their pod template, a Service and a RuntimeClass."""

from __future__ import annotations

from typing import Any

from kubectl_win.scaffold.options import WorkloadOptions
from kubectl_win.scaffold.placement import Placement

NAME_LABEL = "app.kubernetes.io/name"
DEFAULT_HANDLER = "runhcs-wcow-process"  # containerd's process-isolated Windows runtime handler
BATCH = ("job", "cronjob")
# A Job's bounds: a hung run fails after an hour (raise it for longer batches) and is retried at most 4 times;
# a finished Job is deleted after a day (a CronJob's history limits keep its last runs instead).
JOB_DEADLINE_SECONDS = 3600
JOB_BACKOFF_LIMIT = 4
JOB_TTL_SECONDS = 86400
DAY_SECONDS = 86400

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
    if opts.kind in BATCH:
        template["spec"]["restartPolicy"] = "OnFailure"
        if opts.kind == "job":
            spec = {"backoffLimit": JOB_BACKOFF_LIMIT, "activeDeadlineSeconds": JOB_DEADLINE_SECONDS,
                    "ttlSecondsAfterFinished": JOB_TTL_SECONDS, "template": template}
        else:
            # concurrencyPolicy Forbid skips a run while the last is active: a run must end before the next is due,
            # and one missed by more than half an interval (at most 5 minutes) is skipped, not caught up.
            interval = cron_interval_seconds(opts.schedule) or JOB_DEADLINE_SECONDS
            spec = {"schedule": opts.schedule, "concurrencyPolicy": "Forbid",
                    "startingDeadlineSeconds": max(10, min(300, interval // 2)),
                    "jobTemplate": {"metadata": {"labels": dict(labels)}, "spec": {
                        "backoffLimit": JOB_BACKOFF_LIMIT,
                        "activeDeadlineSeconds": min(interval, DAY_SECONDS) * 9 // 10, "template": template}}}
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
    # Windows pages instead of OOM-killing, so a container without a memory limit can starve the node. A HostProcess
    # node agent gets no CPU limit: capped at a CPU rate, it falls behind when its node is busy, when it is needed.
    limits = {"memory": opts.memory} if opts.hostprocess else {"cpu": opts.cpu, "memory": opts.memory}
    out["resources"] = {"requests": {"cpu": opts.cpu, "memory": opts.memory}, "limits": limits}
    if opts.ports and opts.kind not in BATCH:  # a batch run is not a server: it is done when it exits
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


_MACROS = {"@hourly": 3600, "@daily": DAY_SECONDS, "@midnight": DAY_SECONDS}


def cron_interval_seconds(schedule: str) -> int | None:
    """The shortest time between two runs of a schedule whose day, month and weekday fields are `*` (minute and
    hour fields: numbers, ranges, steps, lists), or of @hourly/@daily; one day for any other valid schedule (it
    runs at most daily); None when the fields cannot be read."""
    if schedule.startswith("@"):
        return _MACROS.get(schedule, DAY_SECONDS)
    fields = schedule.split()
    if len(fields) != 5:
        return None
    minutes, hours = _cron_field(fields[0], 0, 59), _cron_field(fields[1], 0, 23)
    if not minutes or not hours:
        return None
    if fields[2:] != ["*", "*", "*"]:
        return DAY_SECONDS
    times = sorted(h * 60 + m for h in hours for m in minutes)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)] + [times[0] + 1440 - times[-1]]
    return min(gaps) * 60


def _cron_field(text: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        if span == "*":
            start, end = low, high
        elif "-" in span:
            first, _, last = span.partition("-")
            if not (first.isdigit() and last.isdigit()):
                return set()
            start, end = int(first), int(last)
        elif span.isdigit():
            start = end = int(span)
            if step_text:
                end = high
        else:
            return set()
        if step_text and not (step_text.isdigit() and int(step_text) > 0):
            return set()
        step = int(step_text) if step_text else 1
        if not low <= start <= end <= high:
            return set()
        values.update(range(start, end + 1, step))
    return values


def _tcp_probe(port: int, period: int, failures: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "periodSeconds": period, "timeoutSeconds": 5, "failureThreshold": failures}
