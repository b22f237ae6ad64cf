"""What the fleet summary keeps of each cluster once its report is rendered and dropped: counts, builds, the
worst finding and one entry per distinct (finding id, fix), so the same fix in several clusters folds into one
row. A few hundred bytes per distinct fix, never a cluster's nodes or findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubectl_win.findings import SEVERITY_RANK

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan


@dataclass
class FixSeen:
    """One (finding id, fix) of one cluster: its worst severity and how many objects it is about."""

    severity: str
    objects: int = 0


@dataclass
class ClusterSummary:
    context: str
    server: str | None
    index: int
    ok: bool
    error: str | None = None
    exit_code: int = 0  # the cluster's own: 0/1 against --fail-on when read, the error's when not
    server_version: str | None = None
    nodes: int = 0
    windows_nodes: int = 0
    builds: dict[str, int] = field(default_factory=dict)  # Windows build name -> nodes
    counts: dict[str, int] = field(default_factory=lambda: {"errors": 0, "warnings": 0, "infos": 0})
    worst: tuple[str, str, str] | None = None  # severity, finding id, message of the first (worst) finding
    fixes: dict[tuple[str, str], FixSeen] = field(default_factory=dict)  # (finding id, fix text) -> seen


def summarise(scan: ClusterScan, fail_on: str, shell: str = "posix") -> ClusterSummary:
    from kubectl_win.findings import exit_code

    if scan.report is None:
        return ClusterSummary(scan.context, scan.server, scan.index, False, scan.error, scan.exit_code or 3)
    report = scan.report
    summary = report.summary()
    windows = [n for n in report.nodes if n.windows]
    out = ClusterSummary(
        scan.context, scan.server, scan.index, True, exit_code=exit_code(report.findings, fail_on),
        server_version=report.server_version, nodes=summary["nodes"], windows_nodes=summary["windowsNodes"],
        builds=dict(Counter(build_name(n.build_number, n.windows_build) for n in windows).most_common()),
        counts={key: summary[key] for key in ("errors", "warnings", "infos")})
    if report.findings:
        first = min(report.findings, key=lambda f: -SEVERITY_RANK[f.severity])
        out.worst = (first.severity, first.id, first.message)
    for finding in report.findings:
        key = (finding.id, finding.fix.text(shell) if finding.fix else finding.message)
        seen = out.fixes.get(key)
        if seen is None:
            seen = out.fixes[key] = FixSeen(finding.severity)
        elif SEVERITY_RANK[finding.severity] > SEVERITY_RANK[seen.severity]:
            seen.severity = finding.severity
        seen.objects += 1
    return out


def build_name(number: int | None, version: str | None) -> str:
    """`Windows Server 2022 (20348)`, from the build list; the bare build when kubectl-win does not know it."""
    from kubectl_win import builds

    known = builds.build_of(number)
    if known:
        return f"{known.name} ({known.build})"
    return f"build {version}" if version else "unknown build"


@dataclass
class SharedFix:
    """One row of the fleet summary: a (finding id, fix) found in several clusters."""

    check: str
    fix: str
    severity: str
    clusters: list[str]
    objects: int


def shared_fixes(summaries: Sequence[ClusterSummary], at_least: int = 2) -> list[SharedFix]:
    """Each (finding id, fix) seen in `at_least` clusters, worst first, then in the most clusters."""
    rows: dict[tuple[str, str], SharedFix] = {}
    for summary in sorted(summaries, key=lambda s: s.index):
        for (check, fix), seen in summary.fixes.items():
            row = rows.get((check, fix))
            if row is None:
                row = rows[(check, fix)] = SharedFix(check, fix, seen.severity, [], 0)
            elif SEVERITY_RANK[seen.severity] > SEVERITY_RANK[row.severity]:
                row.severity = seen.severity
            row.clusters.append(summary.context)
            row.objects += seen.objects
    shared = [row for row in rows.values() if len(row.clusters) >= at_least]
    return sorted(shared, key=lambda r: (-SEVERITY_RANK[r.severity], -len(r.clusters), r.check, r.fix))


def fleet_exit_code(summaries: Iterable[ClusterSummary]) -> int:
    """The worst over the clusters that were read; 3 when none could be read (5 when each of them was read but
    for its nodes); at least 1 when some could not."""
    from kubectl_win.errors import ExitStatus

    summaries = list(summaries)
    read = [s for s in summaries if s.ok]
    if not read:
        incomplete = bool(summaries) and all(s.exit_code == ExitStatus.INCOMPLETE for s in summaries)
        return int(ExitStatus.INCOMPLETE) if incomplete else 3
    worst = max(s.exit_code for s in read)
    return max(worst, 1) if len(read) < len(summaries) else worst


def fleet_counts(summaries: Sequence[ClusterSummary]) -> dict[str, int]:
    total = {"clusters": len(summaries), "read": sum(1 for s in summaries if s.ok),
             "failed": sum(1 for s in summaries if not s.ok), "errors": 0, "warnings": 0, "infos": 0,
             "windowsNodes": 0}
    for s in summaries:
        for key in ("errors", "warnings", "infos"):
            total[key] += s.counts[key]
        total["windowsNodes"] += s.windows_nodes
    return total
