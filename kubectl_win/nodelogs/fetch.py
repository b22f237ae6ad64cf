"""Read a Windows node's component logs through the API server's node proxy (KEP-2258): no printing here.

Components whose logs are files under the kubelet's log directory are fetched whole
(/api/v1/nodes/NODE/proxy/logs/<file>: the kubelet takes no options for files) and filtered here;
components running as pods are read through pods/log; other names go to the log query API
(?query=NAME with sinceTime, tailLines and pattern), which on Windows reads the Application event log.
When no known location has a component's log, the log query API gets the name too, as the kubelet itself
resolves names to files. Logs the kubelet cannot reach are reported with where they are and how to read them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from kubectl_win.errors import KubectlWinError, UsageError
from kubectl_win.nodelogs import locations
from kubectl_win.nodelogs.filtering import filter_lines
from kubectl_win.nodelogs.locations import Distribution, Location
from kubectl_win.wellknown import node_os


class LogApiError(KubectlWinError):
    """The node's log endpoint is off, too old, or refused the request."""

    exit_code = 3


@dataclass
class LogOptions:
    node: str
    services: list[str] = field(default_factory=list)
    since: datetime | None = None
    tail: int | None = None
    pattern: str | None = None
    distribution: str | None = None  # None: detect from the node


@dataclass
class LogResult:
    service: str
    where: str
    lines: list[str] | None  # None: out of the API's reach (see note)
    note: str = ""


def windows_node(cluster: Any, name: str, purpose: str = "logs reads Windows nodes", linux_hint: bool = True
                 ) -> dict[str, Any]:
    """The node object; a one-line usage error for a missing or non-Windows node."""
    from kubectl_win.kube import NotFound

    try:
        node = cluster.get_object("nodes", name)
    except NotFound:
        raise UsageError(f'node "{name}" not found') from None
    os_name = node_os(node)
    if os_name != "windows":
        hint = f" (for Linux nodes: kubectl get --raw '/api/v1/nodes/{name}/proxy/logs/?query=kubelet')" \
            if linux_hint else ""
        raise UsageError(f"node {name} runs {os_name or 'an unknown OS'}; {purpose}{hint}")
    return node


def check_services(services: list[str]) -> None:
    rule = re.compile(locations.data()["api"]["service_name"])
    for service in services:
        if not rule.match(service):
            raise UsageError(f"unknown service {service!r}: a service is a component ("
                             f"{', '.join(locations.components())}) or an event provider name "
                             "(letters, digits, '-', '_', '@')")


def pick_distribution(node: dict[str, Any], chosen: str | None) -> Distribution:
    if chosen:
        try:
            return locations.distribution(chosen)
        except KeyError:
            known = ", ".join(d.id for d in locations.distributions())
            raise UsageError(f"unknown distribution {chosen!r} (known: {known})") from None
    return locations.detect(node)


def read_logs(cluster: Any, options: LogOptions) -> tuple[Distribution, list[LogResult]]:
    check_services(options.services)
    node = windows_node(cluster, options.node)
    dist = pick_distribution(node, options.distribution)
    pattern = re.compile(options.pattern, re.IGNORECASE) if options.pattern else None
    return dist, [read_component(cluster, options.node, dist, service, options.since, options.tail, pattern,
                                 options.pattern) for service in options.services]


def read_component(cluster: Any, node: str, dist: Distribution, service: str, since: datetime | None,
                   tail: int | None, pattern: re.Pattern[str] | None, pattern_text: str | None = None) -> LogResult:
    """One component's log lines from the first location that has them."""
    log_dir = locations.log_dir()
    places = dist.logs.get(service) or (Location("query", service),)
    outside: list[str] = []
    for place in places:
        if place.kind == "outside":
            outside.append(place.value)
            continue
        if place.kind == "file":
            text = _fetch_file(cluster, node, place.value)
        elif place.kind == "pod":
            text = _pod_log(cluster, node, place.value, since, tail if pattern is None else None)
        else:
            text = _query(cluster, node, place.value, since, tail, pattern_text,
                          unknown=service not in locations.components())
        if text is None:
            continue
        return LogResult(service, place.describe(log_dir), filter_lines(text, since, pattern, tail))
    if not any(place.kind == "query" for place in places):
        found = _query_fallback(cluster, node, service, since, tail, pattern, pattern_text)
        if found is not None:
            return found
    if outside:
        how = str(locations.data()["outside_how"]).format(path=outside[0])
        note = (f"{service} on {node} logs to {' and '.join(outside)} ({dist.name}), outside the kubelet's log "
                f"directory {log_dir}: the log API cannot read it; {how}")
        return LogResult(service, outside[0], None, note)
    where = " or ".join(p.describe(log_dir) for p in places)
    return LogResult(service, where, None, f"no {service} log found on {node} ({dist.name}: looked for {where})")


def _query_fallback(cluster: Any, node: str, service: str, since: datetime | None, tail: int | None,
                    pattern: re.Pattern[str] | None, pattern_text: str | None) -> LogResult | None:
    """No known location has the log: ask the log query API, which resolves the name as the kubelet does
    (C:\\var\\log\\NAME.log, C:\\var\\log\\NAME\\NAME.log, then the Application event log). Whatever it
    answers short of a log (the API off, nothing found) leaves the caller's note standing."""
    try:
        text = _query(cluster, node, service, since, tail, pattern_text, unknown=True)
    except KubectlWinError:
        return None
    if text is None or not text.strip():
        return None
    return LogResult(service, f"log query ?query={service} (no known location had it)",
                     filter_lines(text, since, pattern, tail))


def _proxy(node: str) -> str:
    return f"/api/v1/nodes/{quote(node, safe='')}/proxy/logs/"


def _fetch_file(cluster: Any, node: str, relative: str) -> str | None:
    status, body = cluster.get_raw(_proxy(node) + "/".join(quote(p) for p in relative.split("/")))
    if status == 404:
        return None
    _raise_for(status, body, node)
    return body.decode("utf-8", "replace")


def _query(cluster: Any, node: str, service: str, since: datetime | None, tail: int | None,
           pattern: str | None, unknown: bool) -> str | None:
    params: list[tuple[str, str]] = [("query", service)]
    if since is not None:
        params.append(("sinceTime", since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")))
    if tail is not None:
        params.append(("tailLines", str(min(tail, int(locations.data()["api"]["max_tail"])))))
    if pattern:
        params.append(("pattern", pattern))
    status, body = cluster.get_raw(_proxy(node), params)
    if status == 404:
        raise LogApiError(f"the kubelet on {node} does not serve the node log query API (404: kubelet older "
                          f"than 1.27?); {locations.data()['api']['enable']}")
    _raise_for(status, body, node)
    text = body.decode("utf-8", "replace")
    if _is_listing(text):
        raise LogApiError(f"the node log query API is not enabled on {node}'s kubelet (it answered with its log "
                          f"directory); {locations.data()['api']['enable']}")
    if "query resolved to log files" in text and len(params) > 1:
        # The name is a file logger: the kubelet takes no options then; fetch it whole and filter here.
        return _query(cluster, node, service, None, None, None, unknown)
    if "log not found for" in text or (unknown and not text.strip() and len(params) == 1):
        known = ", ".join(locations.components())
        raise UsageError(f"unknown service {service!r} on {node}: not an event provider in the Application log "
                         f"and no log file {locations.log_dir()}\\{service}.log (components: {known})")
    return text


def _pod_log(cluster: Any, node: str, where: str, since: datetime | None, tail: int | None) -> str | None:
    from kubectl_win.kube import ApiError

    namespace, prefix = where.split("/", 1)
    try:
        pods = [p for p in cluster.list("pods", namespace=namespace, field_selector=f"spec.nodeName={node}")
                if str((p.get("metadata") or {}).get("name") or "").startswith(prefix)]
    except ApiError:
        return None
    if not pods:
        return None
    name = pods[0]["metadata"]["name"]
    params: list[tuple[str, str]] = [("timestamps", "false")]
    if since is not None:
        params.append(("sinceTime", since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")))
    if tail is not None:
        params.append(("tailLines", str(tail)))
    status, body = cluster.get_raw(f"/api/v1/namespaces/{namespace}/pods/{name}/log", params)
    if status == 403:
        raise LogApiError(f"cannot read the logs of pod {namespace}/{name} on {node}: forbidden (needs get on "
                          "pods/log)")
    if status != 200:
        return None
    return body.decode("utf-8", "replace")


def _is_listing(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith("<pre>") or head.startswith("<!doctype html") or head.startswith("<html")


def _raise_for(status: int, body: bytes, node: str) -> None:
    if status == 200:
        return
    text = " ".join(body.decode("utf-8", "replace").split())
    message = _status_message(text) or text[:300]
    if status == 403:
        raise LogApiError(f"forbidden: reading {node}'s logs needs get on nodes/proxy ({message})")
    if status == 405:
        raise LogApiError(f"the kubelet on {node} has its log endpoint disabled ({message}); "
                          f"{locations.data()['api']['enable']}")
    if status in (400, 406):
        raise UsageError(f"the kubelet on {node} refused the log query: {message}")
    raise LogApiError(f"the kubelet on {node} answered {status} to the log request: {message}")


def _status_message(text: str) -> str:
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return ""
    return str(doc.get("message") or "") if isinstance(doc, dict) else ""
