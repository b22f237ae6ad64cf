"""Resolve `TYPE/NAME` targets to a running pod, a container and numeric remote ports, like kubectl.

Workload and Service targets are re-resolved when their pod goes away; a bare pod is not.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubectl_win.errors import UsageError
from kubectl_win.portforward.ports import PortPair
from kubectl_win.wellknown import OS_LABEL

_KINDS = {
    "pod": "pods", "pods": "pods", "po": "pods",
    "deploy": "deployments", "deployment": "deployments", "deployments": "deployments",
    "sts": "statefulsets", "statefulset": "statefulsets", "statefulsets": "statefulsets",
    "rs": "replicasets", "replicaset": "replicasets", "replicasets": "replicasets",
    "svc": "services", "service": "services", "services": "services",
}
_SHORT = {"pods": "pod", "deployments": "deployment", "statefulsets": "statefulset",
          "replicasets": "replicaset", "services": "service"}
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_CONTAINER = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class TargetError(UsageError):
    """The target cannot be resolved now (no ready pod, unknown port, ...)."""


class ClusterReader(Protocol):
    namespace: str

    def get_object(self, resource: str, name: str, namespace: str | None = None) -> dict: ...

    def list(self, resource: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None, page_size: int = 500) -> Any: ...


@dataclass(frozen=True)
class Target:
    resource: str  # plural
    name: str

    @property
    def is_pod(self) -> bool:
        return self.resource == "pods"

    def __str__(self) -> str:
        return f"{_SHORT[self.resource]}/{self.name}"


@dataclass(frozen=True)
class ResolvedPod:
    namespace: str
    name: str
    uid: str
    container: str
    pod: dict
    ports: tuple[tuple[int, int], ...]  # (local, remote) after name and Service resolution

    @property
    def windows(self) -> bool | None:
        return pod_is_windows(self.pod)


def parse_target(text: str) -> Target:
    kind, slash, name = text.partition("/")
    if not slash:
        kind, name = "pod", text
    resource = _KINDS.get(kind.lower())
    if resource is None:
        raise UsageError(f"invalid target {text!r}: the type must be one of pod, deploy, sts, rs, svc")
    if not _NAME.match(name):
        raise UsageError(f"invalid target {text!r}: {name!r} is not a valid object name")
    return Target(resource, name)


def validate_container(name: str | None) -> str | None:
    if name is not None and not _CONTAINER.match(name):
        raise UsageError(f"invalid container name {name!r}")
    return name


def pod_is_windows(pod: dict) -> bool | None:
    spec = pod.get("spec") or {}
    os_name = (spec.get("os") or {}).get("name") or (spec.get("nodeSelector") or {}).get(OS_LABEL)
    if os_name:
        return os_name == "windows"
    return None


def resolve(cluster: ClusterReader, target: Target, namespace: str, pairs: list[PortPair],
            container: str | None = None, timeout: float = 60.0, poll: float = 0.5,
            sleep: Callable[[float], None] = time.sleep) -> ResolvedPod:
    """Find a running, ready pod for the target (waiting up to `timeout`) and resolve its ports."""
    owner = cluster.get_object(target.resource, target.name, namespace) if not target.is_pod else None
    deadline = time.monotonic() + timeout
    while True:
        pod, why = _pick_pod(cluster, target, owner, namespace)
        if pod is not None:
            break
        if time.monotonic() >= deadline:
            raise TargetError(f"{target}: {why} (waited {timeout:g}s; see --pod-running-timeout)")
        sleep(poll)
    chosen = _container(pod, container)
    ports = tuple((pair.local if not pair.local_from_remote else number, number)
                  for pair, number in ((p, _remote_port(p, owner, pod, chosen, target)) for p in pairs))
    meta = pod.get("metadata") or {}
    return ResolvedPod(namespace, meta.get("name", ""), meta.get("uid", ""), chosen, pod, ports)


def _pick_pod(cluster: ClusterReader, target: Target, owner: dict | None, namespace: str) -> tuple[dict | None, str]:
    if target.is_pod:
        pod = cluster.get_object("pods", target.name, namespace)
        phase = (pod.get("status") or {}).get("phase")
        if phase != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return None, f"pod is not running (phase {phase or 'unknown'})"
        return pod, ""
    selector = _selector(target, owner or {})
    candidates = [p for p in cluster.list("pods", namespace, label_selector=selector)
                  if (p.get("status") or {}).get("phase") == "Running"
                  and not (p.get("metadata") or {}).get("deletionTimestamp")]
    if not candidates:
        return None, f"no running pod matches {selector}"
    # Ready first, then the oldest (most likely to stay), then by name so the choice is stable.
    candidates.sort(key=lambda p: (not _ready(p), (p.get("metadata") or {}).get("creationTimestamp", ""),
                                   (p.get("metadata") or {}).get("name", "")))
    return candidates[0], ""


def _selector(target: Target, owner: dict) -> str:
    spec = owner.get("spec") or {}
    if target.resource == "services":
        selector = spec.get("selector") or {}
        if not selector:
            raise TargetError(f"{target}: the Service is defined without a selector")
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    selector = spec.get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        if operator == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif operator == "Exists":
            parts.append(str(key))
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    if not parts:
        raise TargetError(f"{target}: the object has no pod selector")
    return ",".join(parts)


def _ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _container(pod: dict, requested: str | None) -> str:
    containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    name = (pod.get("metadata") or {}).get("name", "")
    if requested:
        if requested not in containers:
            raise TargetError(f"container {requested!r} not found in pod {name} (containers: {', '.join(containers)})")
        return requested
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    if default in containers:
        return default
    if not containers:
        raise TargetError(f"pod {name} has no containers")
    return containers[0]


def _remote_port(pair: PortPair, owner: dict | None, pod: dict, container: str, target: Target) -> int:
    remote = pair.remote
    protocol = pair.protocol.upper()
    if target.resource == "services":
        return _service_port(remote, owner or {}, pod, target, protocol)
    if isinstance(remote, int):
        return remote
    return _named_container_port(pod, remote, target, protocol)


def _service_port(remote: int | str, service: dict, pod: dict, target: Target, protocol: str = "TCP") -> int:
    wrong_protocol = None
    for port in (service.get("spec") or {}).get("ports") or []:
        if port.get("port") == remote or (isinstance(remote, str) and port.get("name") == remote):
            if port.get("protocol", "TCP") != protocol:
                wrong_protocol = port.get("protocol", "TCP")
                continue  # 53/TCP and 53/UDP may both exist
            target_port = port.get("targetPort", port.get("port"))
            if isinstance(target_port, str) and not target_port.isdigit():
                return _named_container_port(pod, target_port, target, protocol)
            return int(target_port)
    if wrong_protocol:
        raise TargetError(f"{target}: port {remote} is {wrong_protocol}; "
                          f"add /{wrong_protocol.lower()} to the port pair to forward it")
    raise TargetError(f"{target} does not have a service port {remote}")


def _named_container_port(pod: dict, name: str, target: Target, protocol: str = "TCP") -> int:
    wrong_protocol = None
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == name:
                if port.get("protocol", "TCP") != protocol:
                    wrong_protocol = port.get("protocol", "TCP")
                    continue
                return int(port["containerPort"])
    if wrong_protocol:
        raise TargetError(f"{target}: port {name} is {wrong_protocol}; "
                          f"add /{wrong_protocol.lower()} to the port pair to forward it")
    pod_name = (pod.get("metadata") or {}).get("name", "")
    raise TargetError(f"{target}: pod {pod_name} has no container port named {name!r}")
