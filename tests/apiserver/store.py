"""The object store: objects per resource, kept pre-serialised so listing 150,000 pods is a join.

Each object is held as compact JSON bytes without `kind`/`apiVersion` (the form list items take on
the wire), plus the few things lists filter on: labels and the field values field selectors read.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import datetime as dt
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tests.apiserver.jsonfast import dumps, loads
from tests.apiserver.resources import BY_KEY, RESOURCES, Resource, resource_for_kind
from tests.apiserver.selectors import Matcher

_EMPTY: dict[str, str] = {}
Watcher = Callable[[str, Resource, "Entry"], None]


class StoreError(Exception):
    """An error that maps to a Status body: reason and HTTP code."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details


class Entry:
    __slots__ = ("namespace", "name", "labels", "raw", "rv")

    def __init__(self, namespace: str, name: str, labels: dict, raw: bytes, rv: int) -> None:
        self.namespace, self.name, self.labels, self.raw, self.rv = namespace, name, labels, raw, rv

    def field_values(self, resource: Resource) -> dict[str, str]:
        """Computed from the JSON on demand: field selectors are rare, memory per object is not."""
        obj = loads(self.raw)
        values = {p: _field_value(obj, p) for p in resource.field_labels}
        values["metadata.name"] = self.name
        values["metadata.namespace"] = self.namespace
        return values

    def full(self, resource: Resource) -> bytes:
        """The object with kind and apiVersion, as GET returns it."""
        head = b'{"kind":"%s","apiVersion":"%s"' % (resource.kind.encode(), resource.group_version.encode())
        return head + (b"," + self.raw[1:] if len(self.raw) > 2 else b"}")

    def obj(self, resource: Resource) -> dict:
        return loads(self.full(resource))


@dataclass
class ListResult:
    entries: list[Entry]
    resource_version: int
    continue_token: str
    remaining: int | None


def _field_value(obj: dict, path: str) -> str:
    if path == "source":  # events: `source` selects on source.component
        value: Any = (obj.get("source") or {}).get("component", "")
    else:
        value = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Table:
    """One resource's objects keyed by (namespace, name), with a lazily rebuilt sorted key list."""

    __slots__ = ("resource", "objects", "_sorted")

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.objects: dict[tuple[str, str], Entry] = {}
        self._sorted: list[tuple[str, str]] | None = None

    def keys(self) -> list[tuple[str, str]]:
        if self._sorted is None:
            self._sorted = sorted(self.objects)
        return self._sorted


class Store:
    """Thread-safe: the server runs on its own event-loop thread while tests mutate the store."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._rv = 1000
        self._tables: dict[tuple[str, str, str], _Table] = {r.key: _Table(r) for r in RESOURCES}
        self._watchers: list[Watcher] = []

    # -- change notification (watch) -------------------------------------------------------------
    def subscribe(self, watcher: Watcher) -> None:
        """Call `watcher(event_type, resource, entry)` after every change, in the changing thread."""
        with self._lock:
            self._watchers.append(watcher)

    def unsubscribe(self, watcher: Watcher) -> None:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    def _notify(self, event_type: str, resource: Resource, entry: Entry) -> None:
        for watcher in list(self._watchers):
            watcher(event_type, resource, entry)

    # -- resource lookup -------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        return BY_KEY.get((group, version, plural))

    def resource_of(self, obj: dict) -> Resource:
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        resource = resource_for_kind(api_version, kind)
        if resource is None:
            raise StoreError(400, "BadRequest", f"no matches for kind \"{kind}\" in version \"{api_version}\"")
        return resource

    # -- writes ----------------------------------------------------------------------------------
    def put(self, obj: dict, resource: Resource | None = None, namespace: str | None = None,
            create: bool = False) -> Entry:
        """Insert or replace one object, filling in uid, resourceVersion, creationTimestamp, namespace."""
        resource = resource or self.resource_of(obj)
        obj = dict(obj)
        meta = dict(obj.get("metadata") or {})
        name = meta.get("name")
        if not name:
            raise StoreError(422, "Invalid",
                             f"{resource.kind} is invalid: metadata.name: Required value: name is required")
        if resource.namespaced:
            ns = meta.get("namespace") or namespace or "default"
            if namespace and meta.get("namespace") and meta["namespace"] != namespace:
                raise StoreError(400, "BadRequest",
                                 "the namespace of the provided object does not match the namespace "
                                 "sent on the request")
            meta["namespace"] = ns
        else:
            ns = ""
            meta.pop("namespace", None)
        with self._lock:
            table = self._tables[resource.key]
            existing = table.objects.get((ns, name))
            if existing is not None and create:
                qualified = resource.plural + ("." + resource.group if resource.group else "")
                raise StoreError(409, "AlreadyExists", f'{qualified} "{name}" already exists',
                                 {"name": name, "group": resource.group, "kind": resource.plural})
            ns_resource = BY_KEY[("", "v1", "namespaces")]
            if ns and ("", ns) not in self._tables[ns_resource.key].objects:
                # Seeding a namespaced object creates its namespace, as an admin would have.
                self.put({"metadata": {"name": ns}, "spec": {"finalizers": ["kubernetes"]},
                          "status": {"phase": "Active"}}, ns_resource)
            self._rv += 1
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now_rfc3339())
            meta["resourceVersion"] = str(self._rv)
            obj["metadata"] = meta
            obj.pop("kind", None)
            obj.pop("apiVersion", None)
            entry = self._entry(resource, ns, name, meta.get("labels") or _EMPTY, obj, self._rv)
            if existing is None:
                table._sorted = None
            table.objects[(ns, name)] = entry
            self._notify("ADDED" if existing is None else "MODIFIED", resource, entry)
            return entry

    def _entry(self, resource: Resource, ns: str, name: str, labels: dict, obj: dict, rv: int) -> Entry:
        # A copy of exactly the right size: orjson's result keeps its over-allocated buffer.
        return Entry(ns, name, labels, memoryview(dumps(obj)).tobytes(), rv)

    def put_many(self, objs: Iterable[dict]) -> int:
        count = 0
        for obj in objs:
            self.put(obj)
            count += 1
        return count

    def delete(self, resource: Resource, namespace: str, name: str) -> Entry:
        with self._lock:
            table = self._tables[resource.key]
            entry = table.objects.pop((namespace if resource.namespaced else "", name), None)
            if entry is None:
                raise not_found(resource, name)
            self._rv += 1
            table._sorted = None
            self._notify("DELETED", resource, entry)
            return entry

    def clear(self) -> None:
        with self._lock:
            for table in self._tables.values():
                table.objects.clear()
                table._sorted = None

    # -- reads -----------------------------------------------------------------------------------
    def get(self, resource: Resource, namespace: str | None, name: str) -> Entry:
        entry = self._tables[resource.key].objects.get(((namespace or "") if resource.namespaced else "", name))
        if entry is None:
            raise not_found(resource, name)
        return entry

    def count(self, resource: Resource) -> int:
        return len(self._tables[resource.key].objects)

    def objects(self, resource: Resource) -> list[dict]:
        """Every object of a resource as dicts (for tests and table printing)."""
        table = self._tables[resource.key]
        with self._lock:
            keys = list(table.keys())
            return [table.objects[k].obj(resource) for k in keys]

    def list(self, resource: Resource, namespace: str | None = None, labels: Matcher | None = None,
             fields: Matcher | None = None, limit: int = 0, continue_token: str = "") -> ListResult:
        with self._lock:
            table = self._tables[resource.key]
            keys = table.keys()
            objects = table.objects
            rv = self._rv
            lo, hi = 0, len(keys)
            if namespace and resource.namespaced:
                lo = bisect.bisect_left(keys, (namespace, ""))
                hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
            if continue_token:
                rv, start = decode_continue(continue_token)
                lo = max(lo, bisect.bisect_right(keys, start))
            if labels is None and fields is None:
                stop = hi if not limit else min(hi, lo + limit)
                entries = [objects[k] for k in keys[lo:stop]]
                more = stop < hi
                remaining = hi - stop if more else None
            else:
                entries, i = [], lo
                while i < hi and (not limit or len(entries) < limit):
                    e = objects[keys[i]]
                    i += 1
                    if labels is not None and not labels(e.labels):
                        continue
                    if fields is not None and not fields(e.field_values(resource)):
                        continue
                    entries.append(e)
                more = i < hi
                remaining = None
            token = encode_continue(rv, (entries[-1].namespace, entries[-1].name)) if more and entries else ""
            return ListResult(entries, rv, token, remaining)


def encode_continue(rv: int, key: tuple[str, str]) -> str:
    payload = dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(key)})
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(data["rv"]), (str(data["start"][0]), str(data["start"][1]))
    except (ValueError, KeyError, IndexError, TypeError, binascii.Error):
        raise StoreError(400, "BadRequest", "continue key is not valid: incorrect encoded start resourceVersion "
                                            "(version meta.k8s.io/v1)") from None


def not_found(resource: Resource, name: str) -> StoreError:
    qualified = resource.plural + ("." + resource.group if resource.group else "")
    return StoreError(404, "NotFound", f'{qualified} "{name}" not found',
                      {"name": name, "group": resource.group, "kind": resource.plural})
