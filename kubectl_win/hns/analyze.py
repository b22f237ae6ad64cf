"""Compare one node's HNS state with the cluster's Services and EndpointSlices: findings out, nothing printed.

The expectations follow kube-proxy's winkernel mode: one load balancer per Service port and frontend
(cluster IP, node port with an empty VIP, each external IP and load-balancer ingress IP), none where
kube-proxy deliberately creates none (no ready endpoints, all endpoints terminating, a Local traffic
policy without a local endpoint).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime

from kubectl_win.addresses import in_prefix
from kubectl_win.catalog import finding
from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.hns import knowledge
from kubectl_win.hns.cluster import ClusterView, Service, ServicePort
from kubectl_win.hns.model import ENDPOINT_STATES, HnsState, LoadBalancer

BAD_ENDPOINT_STATES = frozenset({0, 4, 5, 6})
SOURCE_VIP_NAMES = ("sourcevip", "source_vip", "calico_ep")


@dataclass(frozen=True)
class Expected:
    """One load balancer kube-proxy should have programmed on this node."""

    service: Service
    port: ServicePort
    vip: str | None  # None: the node-port load balancer
    external_port: int
    backends: frozenset[str]  # endpoint IPs

    def frontend(self) -> str:
        return f"{self.vip or 'node IP'}:{self.external_port}/{self.port.protocol}"

    def key(self) -> tuple[str, int, str]:
        return (self.vip or "", self.external_port, self.port.protocol.upper())


def lb_key(lb: LoadBalancer) -> tuple[str, int, str]:
    return (",".join(sorted(lb.vips)), lb.external_port or 0, lb.protocol.upper())


def infer_node(state: HnsState, view: ClusterView) -> str | None:
    """The node the dump came from: named in it, else the node whose pods own its local endpoints."""
    names = {n.name for n in view.nodes}
    if state.node and (not names or state.node in names):
        return state.node
    votes: dict[str, int] = defaultdict(int)
    owners = {ip: p.node for p in view.pods if p.node and not p.host_network for ip in p.ips}
    for endpoint in state.endpoints:
        if not endpoint.remote and endpoint.ip in owners:
            votes[owners[endpoint.ip]] += 1
    return max(votes, key=lambda n: votes[n]) if votes else state.node


def analyze(state: HnsState, view: ClusterView, node: str | None, now: datetime | None = None) -> list[Finding]:
    ref = ObjectRef("v1", "Node", None, node or state.node or "(unknown node)")
    name = ref.name
    checker = _Checker(state, view, node, ref, name, now or datetime.now(UTC))
    return checker.run()


class _Checker:
    def __init__(self, state: HnsState, view: ClusterView, node: str | None, ref: ObjectRef, name: str,
                 now: datetime) -> None:
        self.state, self.view, self.node, self.ref, self.name, self.now = state, view, node, ref, name, now
        self.findings: list[Finding] = []
        self.expected = expected_load_balancers(view, node) if view.services and view.has_slices else None

    def run(self) -> list[Finding]:
        # A load-balancer key that was collected but is empty means the node has none at all: still compared.
        has_lbs = bool(self.state.collected & {"loadBalancers", "policyLists"}) or \
            bool(self.state.present & {"loadBalancers", "policyLists"})
        has_endpoints = "endpoints" in self.state.present
        if has_endpoints:
            self._duplicate_ips()
            self._endpoint_states()
            if self.view.has_slices or self.view.has_pods or self.view.has_nodes:
                self._stale_remote_endpoints()
            if self.view.has_pods and self.node:
                self._leaked_local_endpoints()
        if has_lbs:
            self._load_balancer_states()
            self._duplicate_load_balancers()
            self._backend_limits()
            self._ports()
            self._dsr()
            if self.expected is not None:
                self._compare_with_services()
        self._scale()
        self._networks()
        self._events()
        self._kube_proxy_log()
        return self.findings

    def add(self, check_id: str, path: str = "", obj: ObjectRef | None = None, **values: object) -> None:
        self.findings.append(finding(check_id, obj or self.ref, path, node=self.name, **values))

    # -- endpoints -----------------------------------------------------------------------------------
    def _duplicate_ips(self) -> None:
        by_ip = defaultdict(list)
        for endpoint in self.state.endpoints:
            if endpoint.ip:
                by_ip[endpoint.ip].append(endpoint)
        for ip, endpoints in sorted(by_ip.items()):
            local = [e for e in endpoints if not e.remote]
            remote = [e for e in endpoints if e.remote]
            if local and remote:
                self.add("hns-duplicate-endpoint-ip", f"hns.endpoints[{remote[0].id}]", ip=ip, local=local[0].id,
                         remote=remote[0].id)

    def _endpoint_states(self) -> None:
        for endpoint in self.state.endpoints:
            if not endpoint.remote and endpoint.state in BAD_ENDPOINT_STATES:
                self.add("hns-endpoint-unhealthy", f"hns.endpoints[{endpoint.id}]", endpoint=endpoint.id,
                         ip=endpoint.ip or "no IP", state=endpoint.state,
                         state_name=ENDPOINT_STATES.get(endpoint.state or 0, "unknown"))

    def _infrastructure_ips(self) -> set[str]:
        """IPs kube-proxy and the CNI give endpoints that belong to no pod: VIPs, node and source-VIP addresses."""
        ips = self.view.service_ips() | self.view.node_ips()
        ips.update(lb.source_vip for lb in self.state.load_balancers if lb.source_vip)
        ips.update(e.ip for e in self.state.endpoints
                   if e.ip and any(n in e.name.lower() for n in SOURCE_VIP_NAMES))
        return ips

    def _stale_remote_endpoints(self) -> None:
        """A remote endpoint whose IP no EndpointSlice, pod or node of the dump holds is stale, unless a load
        balancer of a Service the dump does not hold uses it: then it is unknown, not clean."""
        known = self.view.slice_ips() | self.view.pod_ips() | self._infrastructure_ips()
        against = " and ".join(what for what, there in (("EndpointSlice", self.view.has_slices),
                                                        ("pod", self.view.has_pods), ("node", self.view.has_nodes))
                               if there) + " address of the cluster dump"
        service_vips = self.view.service_ips()
        users: dict[str, list[LoadBalancer]] = defaultdict(list)
        for lb in self.state.load_balancers:
            for endpoint_id in lb.endpoints:
                users[endpoint_id].append(lb)
        for endpoint in self.state.endpoints:
            if not endpoint.remote or not endpoint.ip or endpoint.ip in known:
                continue
            using = users.get(endpoint.id.lower(), [])
            foreign = [lb for lb in using if lb.vips and not set(lb.vips) & service_vips]
            if foreign and len(foreign) == len(using):
                self.add("hns-remote-endpoint-unknown", f"hns.endpoints[{endpoint.id}]", endpoint=endpoint.id,
                         ip=endpoint.ip, lb=foreign[0].id, frontend=foreign[0].frontend())
                continue
            note = "" if using else " and no load balancer uses it"
            self.add("hns-stale-remote-endpoint", f"hns.endpoints[{endpoint.id}]", endpoint=endpoint.id,
                     ip=endpoint.ip, lb_note=note, against=against)

    def _leaked_local_endpoints(self) -> None:
        pod_ips = self.view.pod_ips(self.node)
        infrastructure = self._infrastructure_ips()
        node = self.view.node(self.node)
        for endpoint in self.state.endpoints:
            if endpoint.remote or not endpoint.ip or endpoint.ip in pod_ips or endpoint.ip in infrastructure:
                continue
            if node and node.pod_cidrs and not any(in_prefix(endpoint.ip, c) for c in node.pod_cidrs):
                continue  # not from the pod range: a host or management endpoint
            self.add("hns-leaked-local-endpoint", f"hns.endpoints[{endpoint.id}]", endpoint=endpoint.id,
                     ip=endpoint.ip)

    # -- load balancers ------------------------------------------------------------------------------
    def _load_balancer_states(self) -> None:
        for lb in self.state.load_balancers:
            if lb.state is not None and lb.state != 2:
                self.add("hns-loadbalancer-unhealthy", f"hns.loadBalancers[{lb.id}]", lb=lb.id,
                         frontend=lb.frontend(), state=lb.state)

    def _duplicate_load_balancers(self) -> None:
        groups: dict[tuple[str, int, str], list[LoadBalancer]] = defaultdict(list)
        for lb in self.state.load_balancers:
            groups[lb_key(lb)].append(lb)
        for group in groups.values():
            if len({lb.id.lower() for lb in group}) > 1:
                self.add("hns-duplicate-loadbalancer", f"hns.loadBalancers[{group[0].id}]", count=len(group),
                         frontend=group[0].frontend(), lbs=", ".join(lb.id for lb in group))

    def _backend_limits(self) -> None:
        limit = int(knowledge.limits()["backends"])
        for lb in self.state.load_balancers:
            if len(lb.endpoints) > limit:
                self.add("hns-too-many-backends", f"hns.loadBalancers[{lb.id}]", lb=lb.id, frontend=lb.frontend(),
                         count=len(lb.endpoints),
                         limit_text=f"Windows supports at most {limit} per Service "
                                    "(\"invalid number of destinations\")")

    def _ports(self) -> None:
        limits = knowledge.limits()
        non_dsr = sum(1 for lb in self.state.load_balancers if not lb.dsr)
        if not non_dsr:
            return
        default = limits["default_dynamic_ports"]
        start, count = self.state.dynamic_ports or (int(default["start"]), int(default["count"]))
        reserved = non_dsr * int(limits["port_pool"])
        share = reserved / count
        if share < float(limits["port_warning_share"]):
            return
        described = f"{start}-{start + count - 1}" + ("" if self.state.dynamic_ports else ", the default")
        if share >= float(limits["port_error_share"]):
            detail = "the range is (nearly) used up: new load balancers fail with 0x803b0013 and get plumbed " \
                     "inconsistently across nodes"
        else:
            detail = f"{share:.0%} of the range is taken; a few more Services exhaust it"
        finding_ = finding("hns-ephemeral-port-exhaustion", self.ref, "hns.loadBalancers", node=self.name,
                           non_dsr=non_dsr, reserved=reserved, ports=count, range=described, detail=detail)
        if share >= float(limits["port_error_share"]):
            finding_.severity = "error"
        self.findings.append(finding_)

    def _dsr(self) -> None:
        # Node-port, external and ingress load balancers of Local-policy Services are DSR by design: compare
        # only cluster-IP ones, which follow --enable-dsr.
        cluster_ips = {ip for s in self.view.services for ip in s.cluster_ips}
        cluster_lbs = [lb for lb in self.state.load_balancers if set(lb.vips) & cluster_ips]
        dsr = sum(1 for lb in cluster_lbs if lb.dsr)
        if 0 < dsr < len(cluster_lbs):
            self.add("hns-dsr-inconsistent", "hns.loadBalancers",
                     detail=f"On {self.name}, {dsr} of {len(cluster_lbs)} cluster-IP HNS load balancers use DSR and "
                            f"{len(cluster_lbs) - dsr} do not: kube-proxy ran with different --enable-dsr settings "
                            "and did not recreate them.")
        if self.expected is None:
            return
        by_key = {lb_key(lb): lb for lb in self.state.load_balancers}
        for expected in self.expected:
            lb = by_key.get(expected.key())
            service = expected.service
            if lb is None or lb.dsr or not service.external_local or expected.vip in service.cluster_ips:
                continue
            self.add("hns-dsr-inconsistent", f"hns.loadBalancers[{lb.id}]", obj=_service_ref(expected.service),
                     detail=f"{expected.service.namespace}/{expected.service.name} sets externalTrafficPolicy: Local "
                            f"but its load balancer {lb.id} ({lb.frontend()}) on {self.name} is not DSR; Windows "
                            "keeps the client IP only with DSR.")

    def _compare_with_services(self) -> None:
        assert self.expected is not None
        by_key: dict[tuple[str, int, str], list[LoadBalancer]] = defaultdict(list)
        for lb in self.state.load_balancers:
            by_key[lb_key(lb)].append(lb)
        ip_of = {e.id.lower(): e.ip for e in self.state.endpoints}
        know_endpoints = "endpoints" in self.state.present
        wanted = {e.key() for e in self.expected}
        wanted.update(self._frontends_without_lb())
        missing = 0
        for expected in self.expected:
            lbs = by_key.get(expected.key())
            values = dict(service=f"{expected.service.namespace}/{expected.service.name}",
                          port=expected.port.port, protocol=expected.port.protocol, frontend=expected.frontend())
            obj = _service_ref(expected.service)
            if not lbs:
                missing += 1
                note, young = self._sync_note(expected.service)
                self.add("hns-missing-loadbalancer", f"spec.ports[{expected.port.name or expected.port.port}]",
                         obj=obj, note=note, **values)
                if young:
                    self.findings[-1].severity = "warning"
                continue
            lb = lbs[0]
            problem = None
            if know_endpoints:
                unknown = [e for e in lb.endpoints if e not in ip_of]
                backends = {ip_of[e] for e in lb.endpoints if ip_of.get(e)}
                if unknown:
                    from kubectl_win.output.words import counted

                    problem = (f"references {counted(len(unknown), 'HNS endpoint')} that no longer "
                               f"{'exists' if len(unknown) == 1 else 'exist'} ({', '.join(unknown[:3])})")
                elif backends - expected.backends:
                    problem = ("sends traffic to " + ", ".join(sorted(backends - expected.backends)) +
                               ", which no ready endpoint of the Service has")
                elif expected.backends - backends:
                    problem = ("does not include the ready endpoint(s) " +
                               ", ".join(sorted(expected.backends - backends)))
            if problem:
                self.add("hns-stale-loadbalancer", f"hns.loadBalancers[{lb.id}]", obj=obj, lb=lb.id, problem=problem,
                         **values)
        for lb in self.state.load_balancers:
            if lb_key(lb) not in wanted and (lb.vips or self._node_port_unknown(lb)):
                self.add("hns-orphan-loadbalancer", f"hns.loadBalancers[{lb.id}]", lb=lb.id, frontend=lb.frontend())
        limits = knowledge.limits()
        expected_count = len(self.expected)
        present = len(self.state.load_balancers)
        if expected_count >= int(limits["collapse_min_expected"]) and present < expected_count * float(
                limits["collapse_share"]):
            self.add("hns-loadbalancers-collapsed", "hns.loadBalancers", present=present, expected=expected_count)

    def _sync_note(self, service: Service) -> tuple[str, bool]:
        """What the dump says about kube-proxy having had the chance to program the Service: (note, young)
        where young means kube-proxy may simply not have synced it yet."""
        grace = float(knowledge.limits()["sync_grace_seconds"])
        notes = []
        young = False
        age = _age(service.created, self.now)
        if age is not None and age < grace:
            young = True
            notes.append(f"the Service was created {_duration(age)} before this check, so kube-proxy may simply not "
                         "have synced it yet (it syncs every 30 s)")
        proxy = self.view.kube_proxy(self.node)
        if proxy is not None:
            started = _age(proxy.started, self.now)
            if started is not None and started < grace:
                young = True
                notes.append(f"kube-proxy pod {proxy.namespace}/{proxy.name} started {_duration(started)} ago and "
                             "may not have synced yet")
            elif proxy.restarts:
                notes.append(f"kube-proxy pod {proxy.namespace}/{proxy.name} has restarted {proxy.restarts} "
                             f"time{'s' if proxy.restarts != 1 else ''}; its previous log (kubectl logs -n "
                             f"{proxy.namespace} {proxy.name} --previous) shows the policy that failed")
        elif self.view.has_pods and self.node:
            notes.append(f"no kube-proxy pod runs on {self.node} in the cluster dump (unless it runs as a Windows "
                         "service there, nothing programs load balancers)")
        return ("; " + "; ".join(notes) if notes else ""), young

    def _frontends_without_lb(self) -> set[tuple[str, int, str]]:
        """Every frontend a Service defines, also those kube-proxy deliberately leaves out (not orphans)."""
        keys = set()
        for service in self.view.services:
            for port in service.ports:
                for vip in (*service.cluster_ips, *service.external_ips, *service.ingress_ips):
                    keys.add((vip, port.port, port.protocol.upper()))
                if port.node_port:
                    keys.add(("", port.node_port, port.protocol.upper()))
        return keys

    def _node_port_unknown(self, lb: LoadBalancer) -> bool:
        return not lb.vips and lb.external_port not in {p.node_port for s in self.view.services for p in s.ports}

    def _scale(self) -> None:
        limits = knowledge.limits()
        counts = self.state.counts()
        if counts["loadBalancers"] >= int(limits["scale_loadbalancers"]) or \
                counts["remoteEndpoints"] >= int(limits["scale_remote_endpoints"]):
            self.add("hns-scale", "hns", lbs=counts["loadBalancers"], remote=counts["remoteEndpoints"])

    # -- networks ------------------------------------------------------------------------------------
    def _networks(self) -> None:
        for network in self.state.networks:
            if network.management_ip and network.management_ip.startswith("169.254."):
                self.add("hns-management-ip-apipa", f"hns.networks[{network.id}]", network=network.name,
                         ip=network.management_ip)
        overlays = [n for n in self.state.networks if n.overlay]
        if not overlays:
            return
        self._source_vip()
        for network in overlays:
            self._remote_routes(network)

    def _source_vip(self) -> None:
        cluster_lbs = [lb for lb in self.state.load_balancers if lb.vips]
        if not cluster_lbs:
            return
        vips = {lb.source_vip for lb in cluster_lbs if lb.source_vip} - self.view.node_ips()
        if not vips:
            self.add("hns-overlay-source-vip", "hns.loadBalancers",
                     detail=f"The overlay network on {self.name} has load balancers without a SourceVIP: kube-proxy "
                            "runs without --source-vip (or the WinOverlay feature gate).")
            return
        endpoint_ips = {e.ip for e in self.state.endpoints}
        pods = {ip: p for p in self.view.pods if not p.host_network for ip in p.ips}
        for vip in sorted(vips):
            if "endpoints" in self.state.present and vip not in endpoint_ips:
                self.add("hns-overlay-source-vip", "hns.endpoints",
                         detail=f"No HNS endpoint on {self.name} holds the source VIP {vip} that its load balancers "
                                "use; replies from backends never come back.")
            pod = pods.get(vip)
            if pod is not None:
                self.add("hns-overlay-source-vip", "hns.loadBalancers",
                         detail=f"The source VIP {vip} on {self.name} is also the IP of pod "
                                f"{pod.namespace}/{pod.name}: the CNI's IPAM handed it out again.")

    def _remote_routes(self, network) -> None:  # type: ignore[no-untyped-def]
        routes = {prefix for prefix, _ in network.remote_subnet_routes}
        for other in self.view.nodes:
            if other.name == self.node or not other.internal_ip:
                continue
            for cidr in other.pod_cidrs:
                if cidr in routes or any(s == cidr for s in network.subnets):
                    continue
                self.add("hns-overlay-route-missing", f"hns.networks[{network.id}].Policies", network=network.name,
                         other=other.name, cidr=cidr, address=other.internal_ip)

    # -- logs ----------------------------------------------------------------------------------------
    def _events(self) -> None:
        seen: set[str] = set()
        for event in self.state.events:
            text = " ".join(str(event.get("Message") or event.get("message") or "").split())
            for pattern in knowledge.event_patterns():
                if pattern.what in seen or not pattern.regex.search(text):
                    continue
                seen.add(pattern.what)
                when = str(event.get("TimeCreated") or event.get("timeCreated") or "time unknown")
                self.add("hns-service-crashed", "hns.events", what=pattern.what, when=when, text=text[:300])

    def _kube_proxy_log(self) -> None:
        for what, line in kube_proxy_matches(self.state.kube_proxy_log):
            self.add("hns-kube-proxy-sync-error", "kube-proxy log", what=what, line=line)


def kube_proxy_matches(lines: list[str]) -> list[tuple[str, str]]:
    """(what, last matching line) per kind of kube-proxy HNS failure in the log lines."""
    last: dict[str, str] = {}
    for line in lines:
        for pattern in knowledge.kube_proxy_patterns():
            if pattern.regex.search(line):
                last[pattern.what] = " ".join(line.split())[:400]
                break
    return sorted(last.items())


def _age(timestamp: str | None, now: datetime) -> float | None:
    """Seconds from an RFC 3339 timestamp to now; None when absent or unreadable."""
    if not timestamp:
        return None
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0.0, (now - then).total_seconds())


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _service_ref(service: Service) -> ObjectRef:
    return ObjectRef("v1", "Service", service.namespace, service.name)


def expected_load_balancers(view: ClusterView, node: str | None) -> list[Expected]:
    """The load balancers kube-proxy programs on `node`, from the Services and their EndpointSlices."""
    out = []
    for service in view.services:
        if not service.cluster_ips:
            continue  # headless: no load balancer
        slices = view.slices.get(service.key)
        if slices is None:
            continue
        ready = [e for e in slices.endpoints if e.ready]
        if not ready:
            continue  # no ready endpoints, or all terminating: kube-proxy creates none
        local = [e for e in ready if e.node == node]
        for port in service.ports:
            cluster = local if service.internal_local else ready
            external = local if service.external_local else ready
            if cluster:
                backends = frozenset(e.ip for e in cluster)
                for vip in service.cluster_ips:
                    out.append(Expected(service, port, vip, port.port, backends))
            if not external:
                continue  # Local policy without a local endpoint
            backends = frozenset(e.ip for e in external)
            if port.node_port and service.type in ("NodePort", "LoadBalancer"):
                out.append(Expected(service, port, None, port.node_port, backends))
            for vip in (*service.external_ips, *service.ingress_ips):
                out.append(Expected(service, port, vip, port.port, backends))
    return out
