"""A fleet run as one self-contained HTML page (`-o html`, `--report PATH`): a table with one row per cluster
(Windows nodes, builds, counts by severity, the worst finding), then each cluster's report.

A cluster's report is the single-cluster page's sections (kubectl_win/doctor/render/html.py), so it looks and
escapes exactly the same; the renderer starts its element ids and in-page links with a per-cluster prefix
(`c3-findings`) so the reports do not collide. Reports are rendered when their cluster finishes and kept
as text in a spooled temporary file until the table above them can be written.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubectl_win.fleet.render import SPOOL_BYTES, FleetOutput, InOrder
from kubectl_win.fleet.summary import ClusterSummary, fleet_counts
from kubectl_win.output.html import page, plain, text

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan

SEVERITY_COLUMNS = (("errors", "error", "Errors"), ("warnings", "warning", "Warnings"), ("infos", "info", "Info"))


def anchor(index: int) -> str:
    return f"c{index + 1}"


def cluster_report(scan: ClusterScan, index: int, shell: str) -> str:
    """One cluster's part of the page: its heading, then its report (or why it could not be read)."""
    from kubectl_win.doctor.render.html import render_sections

    prefix = anchor(index)
    server = f' <span class="sub">{text(scan.server)}</span>' if scan.server else ""
    head = f'<section class="cluster" id="{prefix}">\n<h2>{text(scan.context, 253)}{server}</h2>\n'
    if scan.report is None:
        return (head + f'<section class="block"><p class="unreadable">could not be read: {text(scan.error)}</p>'
                "</section>\n</section>\n")
    return head + render_sections(scan.report, shell, id_prefix=f"{prefix}-") + "</section>\n"


def overview(summaries: list[ClusterSummary]) -> str:
    rows = []
    for s in sorted(summaries, key=lambda s: s.index):
        name = f'<td class="name" data-label="Cluster"><a href="#{anchor(s.index)}">{text(s.context, 253)}</a>' \
               f'<span class="line2">{text(s.server or "")}</span></td>'
        if not s.ok:
            rows.append(f'<tr class="unreadable">{name}<td colspan="6" class="cell-error" data-label="Result">'
                        f"could not be read: {text(s.error)}</td></tr>\n")
            continue
        builds = "".join(f"<div>{text(b, 200)} <b>× {n}</b></div>"
                         for b, n in s.builds.items()) or '<span class="none">none</span>'
        counts = "".join(f'<td class="{"cell-" + sev if s.counts[key] else ""}" data-label="{label}">'
                         f"{s.counts[key]}</td>" for key, sev, label in SEVERITY_COLUMNS)
        worst = (f'<span class="mark">{text(s.worst[0])}</span> {text(s.worst[1], 100)}'
                 f'<span class="line2" title="{plain(s.worst[2])}">{text(s.worst[2], 300)}</span>'
                 if s.worst else '<span class="none">none</span>')
        rows.append(f"<tr>{name}<td data-label=\"Windows nodes\">{s.windows_nodes}</td>"
                    f'<td data-label="Builds">{builds}</td>{counts}<td data-label="Worst finding">{worst}</td></tr>\n')
    return ('<section class="block" id="fleet">\n<h2>Clusters</h2>\n<div class="scroll"><table class="fleet">\n'
            '<thead><tr><th scope="col">Cluster</th><th scope="col">Windows nodes</th><th scope="col">Builds</th>'
            '<th scope="col">Errors</th><th scope="col">Warnings</th><th scope="col">Info</th>'
            '<th scope="col">Worst finding</th></tr></thead>\n<tbody>\n' + "".join(rows)
            + "</tbody></table></div>\n</section>\n")


class HtmlRenderer:
    def __init__(self, output: FleetOutput, now: datetime | None = None) -> None:
        self.o = output
        self.now = now
        self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+b")
        self._parts = InOrder(self._spool.write)

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        self._parts.put(summary.index, cluster_report(scan, summary.index, self.o.shell).encode("utf-8"))

    def finish(self, summaries: list[ClusterSummary]) -> None:
        self._parts.flush()
        self._spool.seek(0)
        self.o.out.write(self.page(summaries, self._spool.read().decode("utf-8")))
        self._spool.close()

    def page(self, summaries: list[ClusterSummary], reports: str) -> str:
        from kubectl_win import __version__

        total = fleet_counts(summaries)
        generated = (self.now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
        failed = f", {total['failed']} could not be read" if total["failed"] else ""
        verdict = f"{total['errors']} errors, {total['warnings']} warnings, {total['infos']} info"
        worst = "error" if total["errors"] or total["failed"] else ("warning" if total["warnings"] else "ok")
        body = (
            '<div class="page">\n<header class="masthead">\n<div>\n'
            '<div class="brand">kubectl win doctor</div>\n<h1>Windows nodes across the fleet</h1>\n'
            f'<p class="meta"><span>clusters <b>{total["clusters"]}</b></span><span>read <b>{total["read"]}'
            f'{text(failed)}</b></span><span>Windows nodes <b>{total["windowsNodes"]}</b></span>'
            f"<span>generated <b>{text(generated)}</b></span></p>\n</div>\n"
            f'<div class="verdict {worst}">{text(verdict)}</div>\n</header>\n'
            "<main>\n" + overview(summaries) + reports + "</main>\n"
            f"<footer>kubectl-win {text(__version__)} · generated {text(generated)} · doctor only reads the "
            "clusters; every fix above is a suggestion to review before you run it.</footer>\n</div>\n")
        return page(f"kubectl-win doctor: {total['clusters']} clusters, {verdict}{failed}", body)
