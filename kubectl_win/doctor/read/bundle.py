"""doctor --from-bundle: a support bundle (kubectl win collect, collect/bundle.py) as a source like the live
cluster and a dump.

Its cluster part (bundle.json names it: cluster.json, as --save-dump writes it) is parsed once, fed to the
builder and read as the objects each node's HNS state is compared with. Per node it gives what the API does not
show: whether the node was collected and what failed, its HNS state (hns.json) and its files (logs, event logs,
containerd's configuration, port ranges, disks), read when a check asks. The checks that read them are
checks/bundle*.py; they find them on Snapshot.bundle, which a live or dump run leaves None.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kubectl_win.collect.bundle import Bundle, node_entries
from kubectl_win.doctor.read.dump import read_dump_stream
from kubectl_win.errors import InputError, KubectlWinError

if TYPE_CHECKING:
    from kubectl_win.doctor.build import SnapshotBuilder
    from kubectl_win.hns.cluster import ClusterView
    from kubectl_win.hns.model import HnsState


@dataclass(frozen=True)
class BundleNode:
    """One node's part of the bundle (nodes/<node>/)."""

    name: str
    folder: str
    collected: bool
    errors: tuple[str, ...]  # items that failed or were skipped on the node (bundle.json)
    hns: HnsState | None  # None: no hns.json, or one that could not be read (said in skipped)
    bundle: Bundle = field(repr=False, compare=False)

    def path(self, name: str) -> str:
        return f"{self.folder}/{name}"

    def has(self, name: str) -> bool:
        return self.path(name) in self.bundle.files

    def text(self, member: str) -> str:
        """A member's text, by its name in the bundle (as path() and under() give it)."""
        return self.bundle.text(member)

    def under(self, name: str) -> list[str]:
        return self.bundle.under(self.path(name))


@dataclass(frozen=True)
class BundleFacts:
    nodes: tuple[BundleNode, ...]
    view: ClusterView | None  # the cluster part as hns compares nodes with it (None for `doctor workloads`)
    hns: list[dict[str, Any]] | None  # the report's hns section per node (None for `doctor workloads`)


def read_bundle(bundle: Bundle, builder: SnapshotBuilder, scope: str = "cluster") -> BundleFacts:
    """Feed the bundle's cluster part to the builder and read its nodes (`doctor workloads` needs none of
    them); what could not be read goes to the builder's skipped list."""
    from kubectl_win.hns.cluster import build_view

    cluster_name = str(bundle.json("bundle.json").get("cluster") or "cluster.json")
    if cluster_name not in bundle.files:
        raise InputError(f"{bundle.origin}: bundle.json names {cluster_name}, which is not in the bundle")
    dump = read_dump_stream(io.BytesIO(bundle.files[cluster_name]), f"{bundle.origin}: {cluster_name}")
    dump.feed(builder)
    objects = dump.objects()
    for why in bundle.refused:
        builder.skip("bundle", why)
    if scope == "workloads":
        return BundleFacts((), None, None)
    refused = len(bundle.refused)
    sections: list[dict[str, Any]] = []
    nodes = [_node(bundle, name, entry, builder, sections) for name, entry in node_entries(bundle)]
    for why in bundle.refused[refused:]:  # nodes whose folder leaves the bundle
        builder.skip("bundle", why)
    return BundleFacts(tuple(nodes), build_view(objects), sections)


def _node(bundle: Bundle, name: str, entry: dict[str, Any], builder: SnapshotBuilder,
          sections: list[dict[str, Any]]) -> BundleNode:
    """The node's part, its HNS state read (a problem with hns.json is skipped, and said in its section)."""
    from kubectl_win.hns.report import hns_section

    errors = tuple(str(e) for e in entry.get("errors") or ())
    node = BundleNode(name, entry["dir"], bool(entry.get("collected")), errors, None, bundle)
    if not node.collected:
        sections.append({"node": name, "error": errors[0] if errors else "not collected"})
    elif not node.has("hns.json"):
        builder.skip(f"hns {name}", "no hns.json in the bundle")
    else:
        try:
            node = replace(node, hns=_hns_state(bundle, node.path("hns.json")))
        except KubectlWinError as exc:
            builder.skip(f"hns {name}", str(exc))
            sections.append({"node": name, "error": str(exc)})
        else:
            sections.append(hns_section(name, node.hns))
    return node


def _hns_state(bundle: Bundle, member: str) -> HnsState:
    from kubectl_win.hns.model import parse
    from kubectl_win.hns.service import parse_hns_text

    return parse(parse_hns_text(bundle.text(member).lstrip("\ufeff"), member))
