"""Findings as a terminal report, shared by doctor and hns.

Piped (no `width`): one table per severity, errors first, then the fixes. On a terminal (`width`): the
findings grouped by object, a check on many objects folded, no line wider than the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

from kubectl_win.findings import Finding
from kubectl_win.output.table import RESET, SEVERITY_COLOURS, render_table

SEVERITY_TITLES = (("error", "ERRORS"), ("warning", "WARNINGS"), ("info", "INFO"))


def render_by_severity(findings: Sequence[Finding], out: IO[str], *, wide: bool = False, colour: bool = False,
                       width: int | None = None, title: Callable[[str], str] | None = None) -> None:
    """Write the findings (not the summary line); `title(check_id)` names a folded check."""
    if width:
        from kubectl_win.output.fold import render_blocks

        render_blocks(findings, out, width, wide=wide, fixes=True, colour=colour, title=title)
        if findings:
            out.write("\n")
        return
    for severity, heading in SEVERITY_TITLES:
        group = [f for f in findings if f.severity == severity]
        if not group:
            continue
        heading = f"{heading} ({len(group)})"
        out.write((SEVERITY_COLOURS[severity] + heading + RESET if colour else heading) + "\n")
        if wide:
            render_table(["id", "object", "path", "message", "fix"],
                         [[f.id, f.object.display(), f.path or "-", f.message, f.hint] for f in group], out)
        else:
            render_table(["id", "object", "message"], [[f.id, f.object.display(), f.message] for f in group], out)
            out.write("  fix:\n")
            for f in group:
                if f.hint:
                    out.write(f"    {f.object.display()}: {f.hint}\n")
        out.write("\n")
