"""Findings as a terminal report, shared by doctor and hns.

Piped (no `width`): one table per severity, errors first, then the fixes. On a terminal (`width`): the
findings grouped by object, a check on many objects folded, no line wider than the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

from kubectl_win.findings import Finding
from kubectl_win.output.fix_lines import PROSE, first_fixes, fix_lines
from kubectl_win.output.table import RESET, SEVERITY_COLOURS, render_table

SEVERITY_TITLES = (("error", "ERRORS"), ("warning", "WARNINGS"), ("info", "INFO"))


def render_by_severity(findings: Sequence[Finding], out: IO[str], *, wide: bool = False, colour: bool = False,
                       width: int | None = None, title: Callable[[str], str] | None = None,
                       shell: str = "posix") -> None:
    """Write the findings (not the summary line); `title(check_id)` names a folded check."""
    if width:
        from kubectl_win.output.fold import render_blocks

        render_blocks(findings, out, width, wide=wide, fixes=True, colour=colour, title=title, shell=shell)
        if findings:
            out.write("\n")
        return
    firsts = {id(f) for f in first_fixes(findings)}  # a fix shown under an error is not repeated under a warning
    for severity, heading in SEVERITY_TITLES:
        group = [f for f in findings if f.severity == severity]
        if not group:
            continue
        heading = f"{heading} ({len(group)})"
        out.write((SEVERITY_COLOURS[severity] + heading + RESET if colour else heading) + "\n")
        # A finding read from a failure message says how sure it is of its cause (cause or unsure).
        sure = any(f.confidence for f in group)
        if wide:
            render_table(["id", "object", "path", *(["confidence"] if sure else []), "message", "fix"],
                         [[f.id, f.object.display(), f.path or "-", *([f.confidence or "-"] if sure else []),
                           f.message, f.fix.text(shell)] for f in group], out)
        else:
            render_table(["id", "object", *(["confidence"] if sure else []), "message"],
                         [[f.id, f.object.display(), *([f.confidence or "-"] if sure else []), f.message]
                          for f in group], out)
            with_fix = [f for f in group if id(f) in firsts]
            if with_fix:
                out.write("  fix:\n")
            for f in with_fix:
                write_fix_lines(f, out, shell)
        out.write("\n")


def write_fix_lines(finding: Finding, out: IO[str], shell: str) -> None:
    """`    OBJECT: note`, then each command alone on its line (never wrapped), then the judgement."""
    from kubectl_win.terminal import terminal_safe

    lines = fix_lines(finding.fix, shell)
    head = f"    {terminal_safe(finding.object.display())}:"
    if lines[0][0] == PROSE:
        head += " " + terminal_safe(lines.pop(0)[1])
    out.write(head + "\n")
    for _kind, text in lines:
        out.write(f"      {terminal_safe(text)}\n")
