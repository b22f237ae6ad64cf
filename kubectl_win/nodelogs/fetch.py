"""Read a Windows node's component logs through the API server's node proxy (KEP-2258): no printing here.

Components whose logs are files under the kubelet's log directory are fetched by path
(/api/v1/nodes/NODE/proxy/logs/<file>: that path takes no options) and filtered here; components running as
pods are read through pods/log; other names go to the log query API (?query=NAME with sinceTime, untilTime,
tailLines and pattern), which on Windows reads the Application event log. When the kubelet refuses those
options (it resolved the name to a log file: knowledge/node_logs.yaml lists how it says so), the query is
asked again without them and filtered here. When no known location has a component's log, the log query API
gets the name too, as the kubelet itself resolves names to files. Logs the kubelet cannot reach are reported
with where they are and how to read them. Every log is read as a stream, never held whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from kubectl_win.errors import KubectlWinError, UsageError
from kubectl_win.nodelogs import locations
from kubectl_win.nodelogs.filtering import filter_stream
from kubectl_win.nodelogs.locations import Distribution, Location
from kubectl_win.wellknown import node_os


class LogApiError(KubectlWinError):
    """The node's log endpoint is off, too old, or refused the request."""

    exit_code = 3


class QueryRefused(UsageError):
    """The kubelet refused a log query even without options: an answer about the query, not "no log"."""


class LogNotFound(UsageError):
    """The log query API has no event provider and no log file of that name."""


@dataclass
class Filters:
    """What of a log to show: --since, --until, --pattern (as typed, for the kubelet) and --tail."""

    since: datetime | None = None
    until: datetime | None = None
    pattern: str | None = None
    tail: int | None = None

    @property
    def flags(self) -> list[str]:
        """The flags in use, as the user typed them."""
        given = (("--since", self.since), ("--until", self.until), ("--pattern", self.pattern), ("--tail", self.tail))
        return [flag for flag, value in given if value is not None]

    def query_options(self) -> list[tuple[str, str]]:
        """The log query API's options for these filters."""
        options = []
        if self.since is not None:
            options.append(("sinceTime", rfc3339(self.since)))
        if self.until is not None:
            options.append(("untilTime", rfc3339(self.until)))
        if self.tail is not None:
            options.append(("tailLines", str(min(self.tail, int(locations.data()["api"]["max_tail"])))))
        if self.pattern:
            options.append(("pattern", self.pattern))
        return options

    def apply(self, lines: Iterable[str]) -> Iterator[str]:
        pattern = re.compile(self.pattern, re.IGNORECASE) if self.pattern else None
        return filter_stream(lines, self.since, self.until, pattern, self.tail)


@dataclass
class LogOptions:
    node: str
    services: list[str] = field(default_factory=list)
    since: datetime | None = None
    tail: int | None = None
    pattern: str | None = None
    distribution: str | None = None  # None: detect from the node
    until: datetime | None = None


@dataclass
class LogResult:
    service: str
    where: str
    lines: Iterable[str] | None  # None: out of the API's reach (see note); else read from the node as iterated
    note: str = ""
    filtered_here: str = ""  # why the filters are applied here rather than by the kubelet ("" when they are not)


@dataclass
class _Found:
    lines: Iterator[str]
    filtered_here: str = ""


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


def read_logs(cluster: Any, options: LogOptions, node: dict[str, Any] | None = None
              ) -> tuple[Distribution, Iterator[LogResult]]:
    """The node's distribution, then one result per service, each opened when the one before is read. `node`:
    the node object where the caller has read it already."""
    check_services(options.services)
    node = node if node is not None else windows_node(cluster, options.node)
    dist = pick_distribution(node, options.distribution)
    filters = Filters(options.since, options.until, options.pattern, options.tail)
    return dist, (open_component(cluster, options.node, dist, service, filters) for service in options.services)


def read_component(cluster: Any, node: str, dist: Distribution, service: str, since: datetime | None,
                   tail: int | None, pattern: re.Pattern[str] | None, pattern_text: str | None = None) -> LogResult:
    """One component's log lines, as a list, from the first location that has them."""
    text = pattern_text or (pattern.pattern if pattern is not None else None)
    result = open_component(cluster, node, dist, service, Filters(since=since, pattern=text, tail=tail))
    if result.lines is not None:
        result.lines = list(result.lines)
    return result


def open_component(cluster: Any, node: str, dist: Distribution, service: str, filters: Filters) -> LogResult:
    """One component's log from the first location that has it; its lines are read as they are iterated."""
    log_dir = locations.log_dir()
    places = dist.logs.get(service) or (Location("query", service),)
    outside: list[str] = []
    for place in places:
        if place.kind == "outside":
            outside.append(place.value)
            continue
        if place.kind == "file":
            found = _file(cluster, node, place, filters)
        elif place.kind == "pod":
            found = _pod_log(cluster, node, place.value, filters)
        elif service in locations.components():
            try:
                found = _query(cluster, node, place.value, filters, unknown=False)
            except LogNotFound:  # a known component: the note below says where else it was looked for
                found = None
        else:
            found = _query(cluster, node, place.value, filters, unknown=True)
        if found is not None:
            return LogResult(service, place.describe(log_dir), found.lines, filtered_here=found.filtered_here)
    if not any(place.kind == "query" for place in places):
        found = _query_fallback(cluster, node, service, filters)
        if found is not None:
            return LogResult(service, f"log query ?query={service} (no known location had it)", found.lines,
                             filtered_here=found.filtered_here)
    if outside:
        how = str(locations.data()["outside_how"]).format(path=outside[0])
        note = (f"{service} on {node} logs to {' and '.join(outside)} ({dist.name}), outside the kubelet's log "
                f"directory {log_dir}: the log API cannot read it; {how}")
        return LogResult(service, outside[0], None, note)
    where = " or ".join(p.describe(log_dir) for p in places)
    return LogResult(service, where, None, f"no {service} log found on {node} ({dist.name}: looked for {where})")


def _query_fallback(cluster: Any, node: str, service: str, filters: Filters) -> _Found | None:
    """No known location has the log: ask the log query API, which resolves the name as the kubelet does (an
    Application event-log provider of that name, else C:\\var\\log\\NAME, NAME.log or NAME\\NAME.log). The API
    off or nothing found leaves the caller's note standing; a refusal is not "nothing found" (refused options
    were already dropped and applied here, see _query), nor is an unreachable cluster."""
    try:
        return _query(cluster, node, service, filters, unknown=True)
    except (LogApiError, LogNotFound):
        return None


def _proxy(node: str) -> str:
    return f"/api/v1/nodes/{quote(node, safe='')}/proxy/logs/"


def _file(cluster: Any, node: str, place: Location, filters: Filters) -> _Found | None:
    stream = cluster.stream_raw(_proxy(node) + "/".join(quote(p) for p in place.value.split("/")))
    if stream.status == 404:
        stream.close()
        return None
    _raise_for(stream, node)
    why = f"{place.describe(locations.log_dir())} is read as a file, and the kubelet takes no options for files"
    return _Found(_lines(stream, filters), why if filters.flags else "")


def _query(cluster: Any, node: str, name: str, filters: Filters, unknown: bool) -> _Found:
    """The log query API's answer for one name: filtered by the kubelet when it takes the options, else
    asked again without them and filtered here."""
    options = filters.query_options()
    stream = cluster.stream_raw(_proxy(node), [("query", name), *options])
    refusal = _refusal(stream) if options else None
    if refusal is None:
        _check_answer(stream, node, name, unknown, bool(options))
        return _Found(_lines(stream, None))
    stream.close()
    again = cluster.stream_raw(_proxy(node), [("query", name)])
    if again.status in (400, 406):
        message = _message(again)
        again.close()
        raise QueryRefused(f"the kubelet on {node} refused the log query for {name}, also without options: {message}")
    _check_answer(again, node, name, unknown, False)
    return _Found(_lines(again, filters), f"the kubelet on {node} refused the query options: {refusal}")


def _refusal(stream: Any) -> str | None:
    """Why the kubelet would not apply the query's options, from its answer (None: it applied them)."""
    signatures = locations.data()["api"]["options_refused"]
    if stream.status in (400, 406):
        message = _message(stream)
        for signature in signatures:
            if signature["status"] == stream.status and signature["text"] in message:
                return f'{signature["means"]} ("{message}")'
        return f'it answered {stream.status} ("{message}")'
    if stream.status == 200:
        head = " ".join(stream.text().split())
        for signature in signatures:
            if signature["status"] == 200 and stream.complete and head.startswith(signature["text"]):
                return f'{signature["means"]} ("{head}")'
    return None


def _check_answer(stream: Any, node: str, name: str, unknown: bool, with_options: bool) -> None:
    """Raise (closing the stream) unless the answer is a log: the API off or too old, or no such log."""
    api = locations.data()["api"]
    if stream.status == 404:
        stream.close()
        raise LogApiError(f"the kubelet on {node} does not serve the node log query API (404: kubelet older "
                          f"than 1.27?); {api['enable']}")
    _raise_for(stream, node)
    head = stream.text()
    if _is_listing(head):
        stream.close()
        raise LogApiError(f"the node log query API is not enabled on {node}'s kubelet (it answered with its log "
                          f"directory); {api['enable']}")
    missing = stream.complete and (head.strip() == api["not_found"].format(service=name)
                                   or (unknown and not head.strip() and not with_options))
    if missing:
        stream.close()
        known = ", ".join(locations.components())
        raise LogNotFound(f"unknown service {name!r} on {node}: not an event provider in the Application log "
                         f"and no log file {locations.log_dir()}\\{name}.log (components: {known})")


def _lines(stream: Any, filters: Filters | None) -> Iterator[str]:
    """The stream's lines (filtered here when `filters`), closing it when they are read or abandoned."""
    try:
        yield from (stream.lines() if filters is None else filters.apply(stream.lines()))
    finally:
        stream.close()


def _pod_log(cluster: Any, node: str, where: str, filters: Filters) -> _Found | None:
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
    if filters.since is not None:
        params.append(("sinceTime", rfc3339(filters.since)))
    local = filters.pattern is not None or filters.until is not None  # pods/log has neither
    if filters.tail is not None and not local:
        params.append(("tailLines", str(filters.tail)))
    stream = cluster.stream_raw(f"/api/v1/namespaces/{namespace}/pods/{name}/log", params)
    if stream.status == 403:
        stream.close()
        raise LogApiError(f"cannot read the logs of pod {namespace}/{name} on {node}: forbidden (needs get on "
                          "pods/log)")
    if stream.status != 200:
        stream.close()
        return None
    why = f"pod {namespace}/{name} is read through pods/log, which takes --since and --tail but not --pattern " \
          "or --until"
    return _Found(_lines(stream, filters), why if local else "")


def _is_listing(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith("<pre>") or head.startswith("<!doctype html") or head.startswith("<html")


def _raise_for(stream: Any, node: str) -> None:
    """Raise (closing the stream) for any answer but 200."""
    status = stream.status
    if status == 200:
        return
    message = _message(stream)
    stream.close()
    if status == 403:
        raise LogApiError(f"forbidden: reading {node}'s logs needs get on nodes/proxy ({message})")
    if status == 405:
        raise LogApiError(f"the kubelet on {node} has its log endpoint disabled ({message}); "
                          f"{locations.data()['api']['enable']}")
    if status in (400, 406):
        raise QueryRefused(f"the kubelet on {node} refused the log query: {message}")
    raise LogApiError(f"the kubelet on {node} answered {status} to the log request: {message}")


def _message(stream: Any) -> str:
    """An error answer in one line: a Status body's message, else the text the kubelet wrote."""
    import json

    text = " ".join(stream.text(4096).split())
    try:
        doc = json.loads(text)
    except ValueError:
        return text[:300]
    return str(doc.get("message") or "") if isinstance(doc, dict) else text[:300]


def rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
