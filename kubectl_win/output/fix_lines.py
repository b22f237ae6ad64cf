"""A finding's fix as lines for the text renderers: the note and the judgement are prose (they may wrap),
each command is one line quoted for the user's shell (it never wraps: a wrapped command pasted runs cut)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kubectl_win.findings import Finding, Fix
from kubectl_win.shells import quote_command

PROSE, COMMAND = "prose", "command"


def fix_lines(fix: Fix, shell: str = "posix") -> list[tuple[str, str]]:
    lines = [(PROSE, fix.note)] if fix.note else []
    lines += [(COMMAND, quote_command(argv, shell)) for argv in fix.commands]
    if fix.judgement:
        lines.append((PROSE, "Needs your judgement: " + fix.judgement))
    return lines


def fix_key(finding: Finding) -> tuple[object, ...]:
    """What makes two fixes the same: their commands (a command names its object), else the object and note."""
    if finding.fix.commands:
        return finding.fix.commands
    return finding.object.display(), finding.fix.note


def first_fixes(findings: Iterable[Finding]) -> Iterator[Finding]:
    """The findings with a fix, each fix once: one root cause, one fix printed."""
    seen: set[tuple[object, ...]] = set()
    for finding in findings:
        key = fix_key(finding)
        if finding.fix and key not in seen:
            seen.add(key)
            yield finding
