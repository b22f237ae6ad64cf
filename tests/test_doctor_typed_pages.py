"""Live pages decoded into typed records (doctor/read/typed.py) build the snapshot that dict pages build.

The same objects go to two builders as list pages on the wire (items without kind): one page parsed into
dicts (add_page), one decoded into records (add_typed_page). The snapshots must be equal, on the bundled
sample, on hostile names, on a cluster shaped as a real server returns it, and on objects of wrong shapes,
which the typed decoder hands back as dicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubectl_win.doctor.build import SnapshotBuilder
from kubectl_win.doctor.read.plan import KIND_ORDER, RESOURCE_OF_KIND
from kubectl_win.doctor.read.typed import TypedPage, page_decoder
from tests.support.doctor_digests import synthetic_store
from tests.support.html_reports import hostile_dump
from tests.support.paths import SAMPLE_DUMP as SAMPLE

VERSION = "v1.32.0"


def pages(items: list[dict[str, Any]], page_size: int = 7) -> list[tuple[str, bytes]]:
    """(resource, page bytes) in the builder's kind order, as a server lists them."""
    out = []
    for kind in KIND_ORDER:
        objects = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in items
                   if o.get("kind") == kind]
        if not objects:
            continue
        api_version = next(o.get("apiVersion") for o in items if o.get("kind") == kind)
        for start in range(0, len(objects), page_size):
            page = {"kind": f"{kind}List", "apiVersion": api_version, "metadata": {"resourceVersion": "9"},
                    "items": objects[start:start + page_size]}
            out.append((RESOURCE_OF_KIND[kind], orjson.dumps(page)))
    return out


def both(items: list[dict[str, Any]], page_size: int = 7) -> tuple[Any, Any, int]:
    """(snapshot from dict pages, snapshot from typed pages, how many pages decoded as records)."""
    plain, typed = SnapshotBuilder(server_version=VERSION), SnapshotBuilder(server_version=VERSION)
    decoded = 0
    for resource, body in pages(items, page_size):
        page = orjson.loads(body)
        kind = page["kind"].removesuffix("List")
        plain.add_page(kind, page["apiVersion"], page["items"])
        record = page_decoder(resource)(body)  # type: ignore[misc]
        if isinstance(record, TypedPage):
            decoded += 1
            typed.add_typed_page(kind, record.apiVersion, record.items)
        else:
            typed.add_page(kind, record["apiVersion"], record["items"])
    return plain.build(), typed.build(), decoded


def dump_items(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["items"]


def test_the_sample_and_hostile_names_build_the_same_snapshot(tmp_path: Path) -> None:
    for items in (dump_items(SAMPLE), dump_items(hostile_dump(tmp_path))):
        plain, typed, decoded = both(items)
        assert decoded > 0
        assert typed == plain


@pytest.mark.parametrize("spec", ["nodes=30,pods=900,windows=0.5,seed=1,shape=realistic",
                                  "nodes=30,pods=900,windows=0.3,seed=2,shape=small"])
def test_a_synthetic_cluster_builds_the_same_snapshot(spec: str) -> None:
    from tests.apiserver.resources import RESOURCES

    store = synthetic_store(spec)
    items = [obj for resource in RESOURCES for obj in store.objects(resource)]
    plain, typed, decoded = both(items)
    assert decoded == len(pages(items))
    assert typed.pods and typed.pod_groups and typed.counts["pods"] == 900
    assert typed == plain


WRONG_SHAPES: list[dict[str, Any]] = [
    {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1", "labels": {"kubernetes.io/os": "windows"}},
     "status": ["not", "a", "mapping"]},
    {"kind": "Node", "apiVersion": "v1", "metadata": "n2"},
    {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p1", "namespace": "a", "labels": {"app": 3}},
     "spec": None, "status": {"containerStatuses": ["waiting"]}},
    {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p2", "namespace": "a"}, "spec": [1, 2],
     "status": {"phase": 7}},
    {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p3", "namespace": "a",
                                                     "ownerReferences": [{"kind": "ReplicaSet", "name": "r",
                                                                          "controller": "yes"}]},
     "spec": {"nodeName": 12, "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}},
    {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d", "namespace": "a"},
     "spec": {"template": "none"}},
    {"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e", "namespace": "a"}, "type": "Warning",
     "reason": "Failed", "message": ["x"], "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "a"}},
]


def test_objects_of_wrong_shapes_build_the_same_snapshot() -> None:
    """One object a page: the shapes the records take as they are (a label that is a number, a spec that is
    null or a list, a node name that is a number) go the typed way, the others (a status that is a list, a
    container status that is a string) the dict way, and the builder says the same about each."""
    items = dump_items(SAMPLE) + WRONG_SHAPES
    plain, typed, decoded = both(items, page_size=1)
    assert 0 < decoded < len(items)
    assert typed == plain


def test_a_page_the_records_cannot_hold_is_parsed_into_dicts() -> None:
    body = orjson.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {},
                         "items": [{"metadata": {"name": "n"}, "status": ["x"]}]})
    assert page_decoder("nodes")(body) == orjson.loads(body)  # type: ignore[misc]
    with pytest.raises(orjson.JSONDecodeError):
        page_decoder("nodes")(b'{"kind": "NodeList", "items": [')  # type: ignore[misc]
