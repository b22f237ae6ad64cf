"""A cluster's scan as the few figures its metrics are made of (ClusterFigures), small enough for `serve` to
keep between scans in place of the report: counts per finding id and severity, Windows nodes per build and
readiness, the day each build's support ends, and each Windows node's patch level (its name, build, the release
time of its update and how many monthly updates it is behind). No message or credential is kept; node names only
for the patch-level series, made safe as every label value is by prometheus_client's escaping."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from kubectl_win.findings import CONFIDENCE_CAUSE

if TYPE_CHECKING:
    from kubectl_win.doctor.render.report import DoctorReport
    from kubectl_win.fleet.scan import ClusterScan


@dataclass(frozen=True, slots=True)
class ClusterFigures:
    cluster: str  # the context name
    ok: bool  # the last scan read the cluster
    seconds: float  # how long the last scan took
    last_success: float | None = None  # Unix time the figures below were read; None: never read
    findings: tuple[tuple[str, str, int], ...] = ()  # (check id, severity, count)
    # (build, release name, ready, platform, count) of Windows nodes; platform as kubectl_win/platforms.py names it
    nodes: tuple[tuple[str, str, str, str, int], ...] = ()
    support_ends: tuple[tuple[str, dt.date], ...] = ()  # (build, the day its support ends)
    scans: int = 1  # scans of this cluster so far (serve counts them)
    # (node, build, release time of its update in Unix seconds or None, monthly updates behind or None, how many
    # of those are estimated from the release cadence)
    patches: tuple[tuple[str, str, float | None, int | None, int], ...] = ()
    # (check id, severity, count) of the findings read from a failure message whose words show their cause
    # (confidence cause), for every check that reads failure messages (0 where none does)
    causes: tuple[tuple[str, str, int], ...] = ()

    def failed(self, seconds: float) -> ClusterFigures:
        """These figures after a scan that could not read the cluster: the last good ones, marked failed."""
        return dataclasses.replace(self, ok=False, seconds=seconds)

    def counted(self, previous: ClusterFigures | None) -> ClusterFigures:
        """These figures as the scan after `previous` (serve's running count of scans)."""
        return dataclasses.replace(self, scans=previous.scans + 1) if previous is not None else self


def figures_of(scan: ClusterScan, finished: float | None = None) -> ClusterFigures:
    """The figures of one scan (finished: its Unix time, default now); a failed scan has none but its outcome."""
    if scan.report is None:
        return ClusterFigures(scan.context, False, scan.seconds)
    return report_figures(scan.context, scan.report, scan.seconds, time.time() if finished is None else finished)


def report_figures(cluster: str, report: DoctorReport, seconds: float, finished: float) -> ClusterFigures:
    from kubectl_win import lifecycle, platforms
    from kubectl_win.builds import build_for_version

    found = Counter((f.id, f.severity) for f in report.findings)
    nodes: Counter[tuple[str, str, str, str]] = Counter()
    ends: dict[str, dt.date] = {}
    running = platforms.of_nodes(report.nodes)
    for node in report.nodes:
        if not node.windows:
            continue
        build = node.windows_build or "unknown"
        name = build_for_version(node.windows_build).name if node.windows_build else "unknown"
        ready = "unknown" if node.ready is None else str(node.ready).lower()
        nodes[(build, name, ready, running[node.name].id)] += 1
        if node.build_number is not None:
            where = lifecycle.platform_of(running[node.name].id, node.labels)
            end = lifecycle.support_end(node.build_number, where[0] if where else None)
            if end is not None and (build not in ends or end < ends[build]):
                ends[build] = end
    counted = _with_zeros(found)
    sure = Counter((f.id, f.severity) for f in report.findings if f.confidence == CONFIDENCE_CAUSE)
    readers = reading_checks()
    causes = tuple((check, severity, sure[(check, severity)]) for check, severity, _ in counted if check in readers)
    return ClusterFigures(cluster, True, seconds, finished, counted,
                          tuple(sorted((*key, count) for key, count in nodes.items())),
                          tuple(sorted(ends.items())), patches=_patches(report), causes=causes)


def _patches(report: DoctorReport) -> tuple[tuple[str, str, float | None, int | None, int], ...]:
    """Each Windows node's patch level: the release time of the update it runs (None when the node is newer
    than the update history or its build has none), the monthly updates it is behind and how many of those are
    estimated."""
    out = []
    for name, patch in sorted(report.patches.items()):
        released = patch.update.timestamp if patch.update is not None and not patch.newer_than_data else None
        out.append((name, f"10.0.{patch.build}", released, patch.behind, patch.estimated))
    return tuple(out)


def _with_zeros(found: Counter[tuple[str, str]]) -> tuple[tuple[str, str, int], ...]:
    """Every known check at its default severity (0 when it found nothing), so a series never vanishes when
    a problem is fixed and `increase()` and `absent()` alerts keep working; other severities as found."""
    counts = {(check, severity): 0 for check, severity in known_checks()}
    counts.update(found)
    return tuple(sorted((check, severity, count) for (check, severity), count in counts.items()))


@cache
def reading_checks() -> frozenset[str]:
    """The checks that read a failure message (the catalogue's symptom and model families): their findings carry
    a confidence, cause or unsure."""
    from kubectl_win.catalog import family

    return frozenset(family("symptom", "model"))


@cache
def known_checks() -> tuple[tuple[str, str], ...]:
    """(id, default severity) of every check doctor runs on a cluster: its catalogue and explain's field rules."""
    from kubectl_win.catalog import doctor_checks
    from kubectl_win.explain.rules import all_rules

    checks = {info.id: info.severity for info in doctor_checks().values()}
    for rule in all_rules():
        if rule.check is not None:
            checks.setdefault(rule.id, rule.check.severity)
    return tuple(sorted(checks.items()))
