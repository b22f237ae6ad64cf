"""List pages decoded straight from the bytes into typed records of only the fields doctor reads.

A pod as a running cluster's kube-apiserver returns it is about 5 KB, and doctor reads a few hundred bytes of
it: its managedFields, volumes, the kubelet's status details and a node's image list are never looked at.
Parsing a page into dicts builds every one of those objects to throw them away (most of the cost of reading a
large cluster, and the memory of the pages in flight), so the live reader decodes each page with msgspec
into the Structs below: unknown fields are skipped without building anything, and the fields kept are the
ones the builder reads, each typed `Any` so that its value is exactly what a JSON parser would give (the
builder's own checks for wrong shapes still apply). A pod's spec is kept as its raw bytes (`msgspec.Raw`):
the builder reads its node name from them and decodes the whole spec only for the pods it keeps, once per
template where it is the template's (see SnapshotBuilder.add_typed_page).

`as_object` turns a record back into the dict the builder's handlers take, holding just the fields read, so
that the builder has one implementation of every rule. A page the Structs cannot hold (an item that is not
an object, a status that is a list: any server's answer can have any shape) is parsed with orjson instead and
goes the way of every dict page, so the result is the same either way. --save-dump, collect and images keep
whole objects and read dict pages (the sink gets the objects as the server sent them).

msgspec rather than hand-written skipping: it is the maintained library for typed JSON decoding, with wheels
for every platform the Windows archive and the krew builds ship.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct

from kubectl_win.kube.jsonfast import loads


class Meta(Struct, gc=False):
    """The metadata fields any of doctor's handlers reads (grouping, ObjectRef, ignores, target)."""

    name: Any = UNSET
    generateName: Any = UNSET  # noqa: N815 - the API's field names
    namespace: Any = UNSET
    labels: Any = UNSET
    annotations: Any = UNSET
    ownerReferences: Any = UNSET  # noqa: N815


class Item(Struct, gc=False):
    """Any object doctor only counts or names (EndpointSlices without --save-dump, GMSA specs)."""

    kind: Any = UNSET
    apiVersion: Any = UNSET  # noqa: N815
    metadata: Meta | None | msgspec.UnsetType = UNSET


class ContainerStatus(Struct, gc=False):
    name: Any = UNSET
    image: Any = UNSET
    restartCount: Any = UNSET  # noqa: N815
    state: Any = UNSET
    lastState: Any = UNSET  # noqa: N815


class PodStatus(Struct, gc=False):
    phase: Any = UNSET
    containerStatuses: list[ContainerStatus] | None | msgspec.UnsetType = UNSET  # noqa: N815
    initContainerStatuses: list[ContainerStatus] | None | msgspec.UnsetType = UNSET  # noqa: N815


class Pod(Item, gc=False):
    spec: Raw = Raw(b"")  # empty: the pod has no spec
    status: PodStatus | None | msgspec.UnsetType = UNSET


class PodSpecHead(Struct, gc=False):
    """What the builder reads of the spec of a pod whose template and group it knows already."""

    nodeName: Any = UNSET  # noqa: N815
    runtimeClassName: Any = UNSET  # noqa: N815
    ephemeralContainers: Any = UNSET  # noqa: N815


class NodeStatus(Struct, gc=False):
    nodeInfo: Any = UNSET  # noqa: N815
    conditions: Any = UNSET
    capacity: Any = UNSET
    allocatable: Any = UNSET


class Node(Item, gc=False):
    spec: Any = UNSET
    status: NodeStatus | None | msgspec.UnsetType = UNSET


class Namespace(Item, gc=False):
    pass


class RuntimeClass(Item, gc=False):
    handler: Any = UNSET
    scheduling: Any = UNSET


class Service(Item, gc=False):
    spec: Any = UNSET


class Workload(Item, gc=False):
    """Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers: the spec holds the pod
    template the checks read whole; the status is never read."""

    spec: Any = UNSET


class Event(Item, gc=False):
    reason: Any = UNSET
    message: Any = UNSET
    note: Any = UNSET
    type: Any = UNSET
    count: Any = UNSET
    series: Any = UNSET
    source: Any = UNSET
    reportingInstance: Any = UNSET  # noqa: N815
    involvedObject: Any = UNSET  # noqa: N815
    regarding: Any = UNSET


ITEM_TYPES: dict[str, type[Item]] = {
    "nodes": Node, "namespaces": Namespace, "runtimeclasses": RuntimeClass, "gmsacredentialspecs": Item,
    "pods": Pod, "deployments": Workload, "statefulsets": Workload, "daemonsets": Workload, "jobs": Workload,
    "cronjobs": Workload, "replicasets": Workload, "replicationcontrollers": Workload, "services": Service,
    "endpointslices": Item, "events": Event,
}


class TypedPage(Struct, gc=False):
    """A list page whose items are typed records (see ITEM_TYPES); `metadata` as any JSON value, so the
    continue token reads as it does from a dict page."""

    kind: Any = None
    apiVersion: Any = None  # noqa: N815
    metadata: Any = None
    items: Any = None

    def get(self, key: str, default: Any = None) -> Any:
        """dict.get over the page's fields (the access layer reads the continue token this way)."""
        value = getattr(self, key, None)
        return default if value is None else value


@functools.cache
def page_decoder(resource: str) -> Callable[[bytes], Any] | None:
    """bytes -> a TypedPage of the resource's records, or (a shape the records cannot hold) the page as dicts;
    None for a resource doctor has no records for."""
    item_type = ITEM_TYPES.get(resource)
    if item_type is None:
        return None
    page_type = msgspec.defstruct(f"{item_type.__name__}Page", [("items", list[item_type] | None, None)],  # type: ignore[valid-type]
                                  bases=(TypedPage,), gc=False)
    decoder = msgspec.json.Decoder(page_type)

    def decode(data: bytes) -> Any:
        try:
            return decoder.decode(data)
        except msgspec.DecodeError:  # not a shape for the records (or not JSON: orjson says so, as before)
            return loads(data)

    return decode


_SPEC_HEAD = msgspec.json.Decoder(PodSpecHead)


def spec_head(pod: Pod) -> PodSpecHead | None:
    """The head of the pod's raw spec, or None when the spec is missing or not an object."""
    raw = pod.spec
    if not raw:
        return None
    try:
        return _SPEC_HEAD.decode(raw)
    except msgspec.DecodeError:
        return None


def as_object(record: Struct, **instead: Any) -> dict[str, Any]:
    """The dict the builder's handlers read: the record's fields that were in the JSON, nested records as
    dicts, a raw spec decoded whole (the only place it is). `instead` gives fields other values (a pod's spec
    head for its raw spec). Values typed `Any` are the parser's already and are taken as they are."""
    out = {}
    for name in record.__struct_fields__:
        value = instead[name] if name in instead else getattr(record, name)
        if value is UNSET:
            continue
        kind = type(value)
        if kind is Raw:
            if not value:
                continue
            value = loads(memoryview(value))
        elif isinstance(value, Struct):
            value = as_object(value)
        elif kind is list and value and isinstance(value[0], Struct):  # a list of records holds only records
            value = [as_object(item) for item in value]
        out[name] = value
    return out
