"""The cluster side of the HNS comparison: Services, EndpointSlices, Pods and Nodes as plain records.

Built from any list of Kubernetes objects: a doctor dump (--save-dump), the JSON of
`kubectl get services,endpointslices,pods,nodes -A -o json`, or objects read live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_win.addresses import is_ip
from kubectl_win.wellknown import BUILD_LABEL, node_os


@dataclass(frozen=True)
class ServicePort:
    name: str
    port: int
    protocol: str
    node_port: int | None
    target_port: Any


@dataclass(frozen=True)
class Service:
    namespace: str
    name: str
    type: str
    cluster_ips: tuple[str, ...]
    ports: tuple[ServicePort, ...]
    external_ips: tuple[str, ...]
    ingress_ips: tuple[str, ...]
    external_local: bool
    internal_local: bool
    created: str | None = None  # metadata.creationTimestamp (RFC 3339)

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name

    def display(self) -> str:
        return f"{self.namespace}/Service/{self.name}"


@dataclass(frozen=True)
class SliceEndpoint:
    ip: str
    ready: bool
    serving: bool
    terminating: bool
    node: str | None


@dataclass
class ServiceEndpoints:
    endpoints: list[SliceEndpoint] = field(default_factory=list)
    ports: dict[tuple[str, str], int] = field(default_factory=dict)  # (port name, protocol) -> target port


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    node: str | None
    ips: tuple[str, ...]
    host_network: bool
    phase: str
    restarts: int = 0  # the largest container restart count
    started: str | None = None  # the latest container start (RFC 3339), else status.startTime


@dataclass(frozen=True)
class Node:
    name: str
    windows: bool
    internal_ip: str | None
    addresses: tuple[str, ...]
    pod_cidrs: tuple[str, ...]
    build: str | None


@dataclass
class ClusterView:
    services: list[Service] = field(default_factory=list)
    slices: dict[tuple[str, str], ServiceEndpoints] = field(default_factory=dict)
    pods: list[Pod] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)  # the kinds the input held

    @property
    def has_slices(self) -> bool:
        return "EndpointSlice" in self.kinds

    @property
    def has_pods(self) -> bool:
        return "Pod" in self.kinds

    def node(self, name: str | None) -> Node | None:
        return next((n for n in self.nodes if n.name == name), None)

    def slice_ips(self) -> set[str]:
        return {e.ip for s in self.slices.values() for e in s.endpoints}

    def pod_ips(self, node: str | None = None) -> set[str]:
        return {ip for p in self.pods if not p.host_network and (node is None or p.node == node)
                and p.phase not in ("Succeeded", "Failed") for ip in p.ips}

    def service_ips(self) -> set[str]:
        return {ip for s in self.services for ip in (*s.cluster_ips, *s.external_ips, *s.ingress_ips)}

    def node_ips(self) -> set[str]:
        return {ip for n in self.nodes for ip in n.addresses}

    @property
    def has_nodes(self) -> bool:
        return "Node" in self.kinds

    def kube_proxy(self, node: str | None) -> Pod | None:
        """The kube-proxy pod on the node, when the input holds one (a DaemonSet pod named kube-proxy-...)."""
        return next((p for p in self.pods if p.node == node and "kube-proxy" in p.name), None) if node else None


def build_view(objects: list[dict[str, Any]]) -> ClusterView:
    view = ClusterView()
    for obj in objects:
        kind = str(obj.get("kind") or "")
        view.kinds.add(kind)
        if kind == "Service":
            service = _service(obj)
            if service is not None:
                view.services.append(service)
        elif kind == "EndpointSlice":
            _add_slice(view, obj)
        elif kind == "Pod":
            view.pods.append(_pod(obj))
        elif kind == "Node":
            view.nodes.append(_node(obj))
    return view


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _service(obj: dict[str, Any]) -> Service | None:
    meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
    kind = str(spec.get("type") or "ClusterIP")
    if kind == "ExternalName":
        return None
    ips = [str(ip) for ip in _list(spec.get("clusterIPs")) if ip and ip != "None"]
    if not ips and spec.get("clusterIP") not in (None, "", "None"):
        ips = [str(spec["clusterIP"])]
    ports = tuple(ServicePort(str(p.get("name") or ""), int(p.get("port") or 0), str(p.get("protocol") or "TCP"),
                              int(p["nodePort"]) if isinstance(p.get("nodePort"), int) else None,
                              p.get("targetPort", p.get("port")))
                  for p in _list(spec.get("ports")) if isinstance(p, dict) and isinstance(p.get("port"), int))
    ingress = tuple(str(i["ip"]) for i in _list(_dict(_dict(obj.get("status")).get("loadBalancer")).get("ingress"))
                    if isinstance(i, dict) and i.get("ip"))
    return Service(str(meta.get("namespace") or "default"), str(meta.get("name") or ""), kind, tuple(ips), ports,
                   tuple(str(ip) for ip in _list(spec.get("externalIPs"))), ingress,
                   spec.get("externalTrafficPolicy") == "Local", spec.get("internalTrafficPolicy") == "Local",
                   str(meta["creationTimestamp"]) if meta.get("creationTimestamp") else None)


def _add_slice(view: ClusterView, obj: dict[str, Any]) -> None:
    meta = _dict(obj.get("metadata"))
    service = _dict(meta.get("labels")).get("kubernetes.io/service-name")
    if not service:
        return
    entry = view.slices.setdefault((str(meta.get("namespace") or "default"), str(service)), ServiceEndpoints())
    for port in _list(obj.get("ports")):
        if isinstance(port, dict) and isinstance(port.get("port"), int):
            entry.ports[(str(port.get("name") or ""), str(port.get("protocol") or "TCP"))] = port["port"]
    for endpoint in _list(obj.get("endpoints")):
        if not isinstance(endpoint, dict):
            continue
        conditions = _dict(endpoint.get("conditions"))
        ready = conditions.get("ready") is not False  # unset means ready (EndpointSlice API)
        terminating = conditions.get("terminating") is True
        serving = conditions.get("serving", ready) is not False
        for address in _list(endpoint.get("addresses")):
            entry.endpoints.append(SliceEndpoint(str(address), ready, serving, terminating,
                                                 endpoint.get("nodeName") or None))


def _pod(obj: dict[str, Any]) -> Pod:
    meta, spec, status = _dict(obj.get("metadata")), _dict(obj.get("spec")), _dict(obj.get("status"))
    ips = [str(p.get("ip")) for p in _list(status.get("podIPs")) if isinstance(p, dict) and p.get("ip")]
    if not ips and status.get("podIP"):
        ips = [str(status["podIP"])]
    statuses = [c for c in _list(status.get("containerStatuses")) if isinstance(c, dict)]
    restarts = max((c["restartCount"] for c in statuses if isinstance(c.get("restartCount"), int)), default=0)
    starts = [str(_dict(_dict(c.get("state")).get("running")).get("startedAt") or "") for c in statuses]
    started = max((t for t in starts if t), default=None) or (str(status["startTime"]) if status.get("startTime")
                                                             else None)
    return Pod(str(meta.get("namespace") or "default"), str(meta.get("name") or ""), spec.get("nodeName") or None,
               tuple(ips), bool(spec.get("hostNetwork")), str(status.get("phase") or ""), restarts, started)


def _node(obj: dict[str, Any]) -> Node:
    meta, spec, status = _dict(obj.get("metadata")), _dict(obj.get("spec")), _dict(obj.get("status"))
    labels = _dict(meta.get("labels"))
    addresses = [a for a in _list(status.get("addresses")) if isinstance(a, dict)]
    internal = next((str(a.get("address")) for a in addresses if a.get("type") == "InternalIP"), None)
    cidrs = [str(c) for c in _list(spec.get("podCIDRs"))] or ([str(spec["podCIDR"])] if spec.get("podCIDR") else [])
    return Node(str(meta.get("name") or ""), node_os(obj) == "windows", internal,
                tuple(str(a.get("address")) for a in addresses if is_ip(a.get("address"))), tuple(cidrs),
                labels.get(BUILD_LABEL) or None)
