"""A fleet run as text (`-o table|wide`): one section per cluster as it finishes, then the fleet summary.

A section is the single-cluster report exactly as `doctor --context X` prints it, under a `=== X (server) ===`
line; a cluster that could not be read gets its one-line error instead. The summary has one row per cluster
(in the order asked for) and then, folded on (finding id, fix), each fix that applies in several clusters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_win.fleet.render import FleetOutput
from kubectl_win.fleet.summary import ClusterSummary, fleet_counts, shared_fixes
from kubectl_win.output.words import counted

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan


def heading(context: str, server: str | None) -> str:
    """`=== context (server) ===`: both read from a kubeconfig, so shown terminal-safe."""
    from kubectl_win.terminal import terminal_safe

    return f"=== {terminal_safe(context)}" + (f" ({terminal_safe(server)})" if server else "") + " ==="


class TableRenderer:
    def __init__(self, output: FleetOutput) -> None:
        self.o = output

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        from kubectl_win.doctor.render.report import render_findings, render_nodes
        from kubectl_win.terminal import terminal_safe

        out, wide = self.o.out, self.o.output == "wide"
        out.write(heading(scan.context, scan.server) + "\n")
        if scan.report is None:
            out.write(f"error: {terminal_safe(scan.error)}\n\n")
        else:
            if scan.report.scope == "nodes":
                render_nodes(scan.report, out, wide, self.o.width)
                out.write("\n")
            render_findings(scan.report, out, wide, self.o.colour, self.o.width, self.o.shell)
            out.write("\n")
        out.flush()

    def finish(self, summaries: list[ClusterSummary]) -> None:
        from kubectl_win.output.table import render_table

        out = self.o.out
        total = fleet_counts(summaries)
        line = f"=== fleet: {counted(total['clusters'], 'cluster')}, {total['read']} read"
        if total["failed"]:
            line += f", {total['failed']} could not be read"
        out.write(line + " ===\n")
        rows = []
        for s in sorted(summaries, key=lambda s: s.index):
            if not s.ok:
                rows.append([s.context, "-", "-", "-", "-", "-", f"could not be read: {s.error}"])
                continue
            builds = ", ".join(f"{name} x{n}" for name, n in s.builds.items()) or "-"
            worst = f"{s.worst[0]} {s.worst[1]}" if s.worst else "-"
            rows.append([s.context, s.windows_nodes, builds, s.counts["errors"], s.counts["warnings"],
                         s.counts["infos"], worst])
        render_table(["context", "windows nodes", "builds", "errors", "warnings", "info", "worst"], rows, out,
                     width=self.o.width)
        shared = shared_fixes(summaries)
        if shared:
            out.write(f"\nSAME FIX IN SEVERAL CLUSTERS ({len(shared)})\n")
            render_table(["severity", "id", "clusters", "objects", "fix"],
                         [[r.severity, r.check, f"{len(r.clusters)}: {', '.join(r.clusters)}", r.objects, r.fix]
                          for r in shared], out, colour_column=0, colour=self.o.colour, width=self.o.width)
