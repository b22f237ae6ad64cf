"""One node log line's finding, the same from `doctor --deep` and `logs --analyse` (a live node's logs) and from a
support bundle's logs: the catalogue's or the model's reading, the cluster's evidence (the pod the line names, the
node, what registries said), and the known bug of the version the node runs. The callers differ only in where the
line came from (a live window or a bundle's file and line) and how they fold repeats."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_win.catalog import finding
from kubectl_win.doctor.checks import evidence, image_platform
from kubectl_win.doctor.records import PodRecord, Snapshot
from kubectl_win.doctor.signatures import model, symptoms
from kubectl_win.findings import Finding, Fix, ObjectRef, fix_from_template
from kubectl_win.wincodes import describe

EXCERPT = 240  # the characters of a message a finding quotes (events' findings quote as many)


@dataclass(frozen=True)
class Place:
    """Where a line was read: the node, the log's name (`logs/<label>`, "<label> log") and its writer, the object
    the finding is on, the values a catalogue fix is written with, the fix when the catalogue gives none, and how
    the finding says where (`where` for a catalogue entry, `placed_where` for the model's, which names the node
    in its own words)."""

    node: str
    label: str
    writer: str
    ref: ObjectRef
    values: dict[str, str]
    fallback: Fix
    where: str
    placed_where: str
    at: tuple[str, int] | None = None  # the bundle's member and line number


def line_finding(found: symptoms.Match, line: str, place: Place, pod: PodRecord | None,
                 snapshot: Snapshot | None, versions: tuple[dict[str, str], int | None]) -> Finding | None:
    """The finding for a log line the catalogue or the model claimed (`found`); None for a catalogue entry whose
    texts need values a log line cannot give. `pod`: the pod the line is about, where doctor knows it; `versions`:
    what the node runs (component -> version) and its Windows build, for the known bugs."""
    fix = fix_from_template(found.fix, place.values) if found.fix else place.fallback
    fix = image_platform.with_evidence(found.check, line, None, fix)
    where = place.where
    labels: dict[str, str] = {}
    if found.placed:  # placed by the model: its labels, and the next steps for its subsystem on this node
        reading = model.read(line, "", "node", place.writer)
        labels = reading.labels()
        fix = model.next_steps(reading, place.node)
        where = place.placed_where
    decided = evidence.decide(found.confidence, pod, snapshot.node(place.node) if snapshot else None, found.check,
                              line, "", "node", place.writer, images=snapshot.images if snapshot else None)
    if decided.cause and "cause" in labels:
        labels["cause"] = decided.cause
    flat = " ".join(line.split())
    excerpt = (flat if len(flat) <= EXCERPT else flat[:EXCERPT - 1] + "…") + describe(found.codes)
    extra = {"at": place.at} if place.at else {}
    try:
        made = finding(found.check, place.ref, f"logs/{place.label}", object=place.ref.display(),
                       reason=f"{place.label} log", excerpt=excerpt, where=where, node=place.node,
                       on_node=f" on {place.node}", fix=decided.fix_of(fix), route=decided.route,
                       confidence=decided.confidence, **extra, **labels)
    except KeyError:
        return None  # a catalogue entry whose texts need values a log line cannot give
    running, build = versions
    return model.with_known_bug(made, line, place.node, running, build, cause=labels.get("cause", ""))
