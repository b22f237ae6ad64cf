"""An HNS dump read into plain records, whichever schema each part is in.

The dump is one JSON object whose keys each hold the raw `ConvertTo-Json` output of one cmdlet:
`networks` (Get-HnsNetwork), `endpoints` (Get-HnsEndpoint), `policyLists` (Get-HnsPolicyList, V1),
`loadBalancers` (Get-HnsLoadBalancer from hns.v2.psm1, V2), `namespaces`, `version`, and, where the
in-pod script collected them, `dynamicPortRange`, `events` (HNS and System event-log entries),
`kubeProxyLog` (the tail of kube-proxy's log file) and `node`. Any key may be missing.
Each object is read as V1 (IsRemoteEndpoint, IPAddress, References, ELB policies) or V2 (Flags,
IpConfigurations, HostComputeEndpoints, FrontendVIPs, PortMappings) by the fields it carries;
ConvertTo-Json writes a single object without the surrounding array, and field case varies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KNOWN_KEYS = ("networks", "endpoints", "policyLists", "loadBalancers", "namespaces", "version",
              "dynamicPortRange", "events", "kubeProxyLog", "node")
ENDPOINT_STATES = {0: "Uninitialized", 1: "Created", 2: "Attached", 3: "AttachedSharing", 4: "Detached",
                   5: "Degraded", 6: "Destroyed"}
PROTOCOLS = {6: "TCP", 17: "UDP", 132: "SCTP"}
V2_REMOTE_ENDPOINT = 1
V2_LB_DSR = 1
V2_PORT_LOCAL_ROUTED_VIP = 2


@dataclass(frozen=True)
class Network:
    id: str
    name: str
    type: str  # lower case: nat, l2bridge, overlay, transparent, ...
    management_ip: str | None
    subnets: tuple[str, ...]
    remote_subnet_routes: tuple[tuple[str, str], ...]  # (destination prefix, provider address)

    @property
    def overlay(self) -> bool:
        return self.type == "overlay"


@dataclass(frozen=True)
class Endpoint:
    id: str
    name: str
    ip: str | None
    network: str | None
    remote: bool
    state: int | None  # V1 only
    mac: str | None
    schema: int


@dataclass(frozen=True)
class LoadBalancer:
    id: str
    vips: tuple[str, ...]  # empty: a NodePort load balancer on the node's own address
    protocol: str
    internal_port: int | None
    external_port: int | None
    endpoints: tuple[str, ...]  # endpoint ids (lower case)
    source_vip: str | None
    dsr: bool
    local_routed: bool
    state: int | None  # V1 policy lists only; 2 is applied
    schema: int

    def frontend(self) -> str:
        vip = ",".join(self.vips) if self.vips else "node IP"
        return f"{vip}:{self.external_port}/{self.protocol}"


@dataclass
class HnsState:
    networks: list[Network] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)
    load_balancers: list[LoadBalancer] = field(default_factory=list)
    namespaces: int = 0
    version: str | None = None
    dynamic_ports: tuple[int, int] | None = None  # (start, count)
    events: list[dict[str, Any]] = field(default_factory=list)
    kube_proxy_log: list[str] = field(default_factory=list)
    node: str | None = None
    present: frozenset[str] = frozenset()  # the dump keys that were there, with content
    collected: frozenset[str] = frozenset()  # the dump keys that were there, also empty (collected, none found)
    schemas: frozenset[str] = frozenset()  # "V1", "V2"

    def endpoint(self, endpoint_id: str) -> Endpoint | None:
        return self._by_id().get(endpoint_id.lower())

    def _by_id(self) -> dict[str, Endpoint]:
        index = self.__dict__.get("_index")
        if index is None:
            index = self.__dict__["_index"] = {e.id.lower(): e for e in self.endpoints}
        return index

    def counts(self) -> dict[str, int]:
        remote = sum(1 for e in self.endpoints if e.remote)
        return {"networks": len(self.networks), "endpoints": len(self.endpoints),
                "localEndpoints": len(self.endpoints) - remote, "remoteEndpoints": remote,
                "loadBalancers": len(self.load_balancers),
                "dsrLoadBalancers": sum(1 for lb in self.load_balancers if lb.dsr),
                "nodePortLoadBalancers": sum(1 for lb in self.load_balancers if not lb.vips),
                "namespaces": self.namespaces}


def parse(doc: dict[str, Any]) -> HnsState:
    """Read a dump object (see the module docstring) into an HnsState; unknown keys are ignored."""
    state = HnsState(present=frozenset(k for k in KNOWN_KEYS if doc.get(k) not in (None, "", [])),
                     collected=frozenset(k for k in KNOWN_KEYS if k in doc))
    schemas: set[str] = set()
    for raw in _objects(doc.get("networks")):
        state.networks.append(_network(raw))
    for raw in _objects(doc.get("endpoints")):
        endpoint = _endpoint(raw)
        if endpoint is not None:
            state.endpoints.append(endpoint)
            schemas.add(f"V{endpoint.schema}")
    seen: set[tuple[str, str, int | None, int | None]] = set()
    for key in ("loadBalancers", "policyLists"):
        for raw in _objects(doc.get(key)):
            for lb in _load_balancers(raw):
                # A dump may hold the same load balancer as V2 and as a V1 policy list: keep one.
                marker = (lb.id.lower(), lb.protocol, lb.external_port, lb.internal_port)
                if marker in seen:
                    continue
                seen.add(marker)
                state.load_balancers.append(lb)
                schemas.add(f"V{lb.schema}")
    state.namespaces = len(_objects(doc.get("namespaces")))
    state.version = _version(doc.get("version"))
    state.dynamic_ports = _port_range(doc.get("dynamicPortRange"))
    state.events = [e for e in _objects(doc.get("events")) if isinstance(e, dict)]
    log = doc.get("kubeProxyLog")
    if isinstance(log, str):
        state.kube_proxy_log = log.splitlines()
    elif isinstance(log, list):
        state.kube_proxy_log = [str(line) for line in log if isinstance(line, str)]
    node = doc.get("node")
    state.node = str(node) if isinstance(node, str) and node else None
    state.schemas = frozenset(schemas)
    return state


def _objects(value: Any) -> list[Any]:
    """ConvertTo-Json gives an object for one result, an array for several, nothing for none."""
    if value is None or value == "":
        return []
    if isinstance(value, dict):
        # Invoke-HnsRequest style wrappers: {"Output": [...]} or {"value": [...]}
        for wrapper in ("Output", "value"):
            if isinstance(value.get(wrapper), list) and len(value) <= 3:
                return [v for v in value[wrapper] if isinstance(v, dict)]
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def _get(obj: dict[str, Any], *names: str) -> Any:
    """The first present field among `names`, matched case-insensitively (PowerShell keeps any case)."""
    for name in names:
        if name in obj:
            return obj[name]
    lowered = {k.lower(): v for k, v in obj.items() if isinstance(k, str)}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def _values(value: Any) -> list[Any]:
    """A list field; one value where a list belongs is that value alone, anything else none."""
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, str | int) and not isinstance(value, bool) else []


def _str(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and str(value) != "" else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def _settings(policy: dict[str, Any]) -> dict[str, Any]:
    settings = _get(policy, "Settings")
    return settings if isinstance(settings, dict) else policy


def _network(raw: dict[str, Any]) -> Network:
    subnets: list[str] = []
    for subnet in _objects(_get(raw, "Subnets")):
        prefix = _str(_get(subnet, "AddressPrefix"))
        if prefix:
            subnets.append(prefix)
    for ipam in _objects(_get(raw, "Ipams")):
        for subnet in _objects(_get(ipam, "Subnets")):
            prefix = _str(_get(subnet, "IpAddressPrefix"))
            if prefix:
                subnets.append(prefix)
    routes: list[tuple[str, str]] = []
    for policy in _objects(_get(raw, "Policies")):
        if str(_get(policy, "Type") or "").lower() != "remotesubnetroute":
            continue
        settings = _settings(policy)
        prefix = _str(_get(settings, "DestinationPrefix"))
        if prefix:
            routes.append((prefix, _str(_get(settings, "ProviderAddress")) or ""))
    return Network(id=_str(_get(raw, "ID", "Id")) or "", name=_str(_get(raw, "Name")) or "",
                   type=str(_get(raw, "Type") or "").lower(), management_ip=_str(_get(raw, "ManagementIP")),
                   subnets=tuple(subnets), remote_subnet_routes=tuple(routes))


def _endpoint(raw: dict[str, Any]) -> Endpoint | None:
    endpoint_id = _str(_get(raw, "ID", "Id"))
    if not endpoint_id:
        return None
    ip = _str(_get(raw, "IPAddress"))
    configurations = _objects(_get(raw, "IpConfigurations"))
    v2 = bool(configurations) or _get(raw, "HostComputeNetwork") is not None
    if not ip:
        ip = next((_str(_get(c, "IpAddress")) for c in configurations if _str(_get(c, "IpAddress"))), None)
    remote_v1 = _get(raw, "IsRemoteEndpoint")
    if remote_v1 is not None:
        remote = _truthy(remote_v1)
    else:
        remote = bool((_int(_get(raw, "Flags")) or 0) & V2_REMOTE_ENDPOINT)
    return Endpoint(id=endpoint_id, name=_str(_get(raw, "Name")) or "", ip=ip,
                    network=_str(_get(raw, "VirtualNetwork", "HostComputeNetwork")), remote=remote,
                    state=_int(_get(raw, "State")), mac=_str(_get(raw, "MacAddress")), schema=2 if v2 else 1)


def _load_balancers(raw: dict[str, Any]) -> list[LoadBalancer]:
    lb_id = _str(_get(raw, "ID", "Id")) or ""
    state = _int(_get(raw, "State"))
    mappings = _objects(_get(raw, "PortMappings"))
    if mappings or _get(raw, "FrontendVIPs") is not None or _get(raw, "HostComputeEndpoints") is not None:
        vips = tuple(str(v) for v in (_get(raw, "FrontendVIPs") or ()) if v)
        endpoints = tuple(str(e).lower() for e in (_get(raw, "HostComputeEndpoints") or ()) if e)
        dsr = bool((_int(_get(raw, "Flags")) or 0) & V2_LB_DSR)
        out = []
        for mapping in mappings or [{}]:
            flags = _int(_get(mapping, "Flags")) or 0
            out.append(LoadBalancer(lb_id, vips, _protocol(_get(mapping, "Protocol")),
                                    _int(_get(mapping, "InternalPort")), _int(_get(mapping, "ExternalPort")),
                                    endpoints, _str(_get(raw, "SourceVIP")), dsr,
                                    bool(flags & V2_PORT_LOCAL_ROUTED_VIP), state, 2))
        return out
    # V1 policy list: References name the endpoints, an ELB policy carries the frontend.
    references = tuple(str(r).rsplit("/", 1)[-1].lower() for r in _values(_get(raw, "References")) if r)
    out = []
    for policy in _objects(_get(raw, "Policies")):
        if str(_get(policy, "Type") or "").upper() != "ELB":
            continue
        vips = _get(policy, "VIPs")
        vips = (vips,) if isinstance(vips, str) else tuple(str(v) for v in _values(vips) if v)
        out.append(LoadBalancer(lb_id, vips, _protocol(_get(policy, "Protocol")), _int(_get(policy, "InternalPort")),
                                _int(_get(policy, "ExternalPort")), references, _str(_get(policy, "SourceVIP")),
                                _truthy(_get(policy, "IsDSR")),
                                _truthy(_get(policy, "LocalRoutedVip")) or _truthy(_get(policy, "ILB")), state, 1))
    return out


def _protocol(value: Any) -> str:
    number = _int(value)
    if number is not None:
        return PROTOCOLS.get(number, str(number))
    return str(value or "TCP").upper()


def _version(value: Any) -> str | None:
    if isinstance(value, dict):
        major, minor = _get(value, "Major"), _get(value, "Minor")
        if major is not None:
            return f"{major}.{minor if minor is not None else 0}"
        inner = _get(value, "Version")
        return _version(inner) if inner is not None else None
    if isinstance(value, (str, int, float)) and str(value):
        return str(value)
    return None


def _port_range(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, dict):
        objects = _objects(value)
        value = objects[0] if objects else None
    if not isinstance(value, dict):
        return None
    start = _int(_get(value, "StartPort", "DynamicPortRangeStartPort"))
    count = _int(_get(value, "NumberOfPorts", "DynamicPortRangeNumberOfPorts"))
    if start is None or not count:
        return None
    return start, count
