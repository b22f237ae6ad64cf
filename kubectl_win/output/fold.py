"""Findings laid out for a terminal: grouped by object, errors first, folded, wrapped to the window.

On a terminal the findings become blocks (doctor writes the same blocks to a pipe, at page_width(), so that what
is pasted into a ticket is what was seen; explain and `-o wide` keep plain tables there, for scripts):

    kube-system/DaemonSet/azure-cns-win  deploy/cns.yaml
      ERROR    windows-privileged  spec.template.spec.containers[0].securityContext.privileged  line 37
               privileged is rejected for Windows pods, even privileged=false.

    WARNING  windows-memory-limit-missing on 39 objects: A Windows container has no memory limit
      Deployment/iis  deploy/iis.yaml:34
      ...
      e.g. Deployment/iis runs on Windows without a memory limit on container(s) web; ...
      fix for Deployment/iis (the others: alike):
        kubectl set resources deployment/iis -c web --limits=memory=512Mi
      -o wide unfolds this: each of the 39 findings with its message and fix

A check that fires on FOLD_AT or more objects becomes one block listing the objects, with the first finding's
message and fix where fixes are shown (`-o wide` keeps every finding in its object's block). No line is wider
than the terminal: text wraps at word boundaries, and a single word longer than the line (a long path) is
broken. This is a grouped list rather than a grid: a severity column of fixed width and one text column, so
textwrap lays it out exactly; tables proper go through kubectl_win.output.table.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubectl_win.findings import SEVERITY_RANK, Finding, Fix
from kubectl_win.output.fix_lines import COMMAND, fix_key, fix_lines

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO

FOLD_AT = 3
MIN_WIDTH = 40
SEVERITY_WIDTH = 9  # "WARNING" and two spaces
COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
RESET = "\033[0m"


@dataclass
class Block:
    """The findings on one object, or one check's findings on many objects (folded)."""

    findings: list[Finding] = field(default_factory=list)
    folded: bool = False

    @property
    def severity(self) -> str:
        return max(self.findings, key=lambda f: SEVERITY_RANK[f.severity]).severity


def terminal_width(fallback: int = 120) -> int:
    """The window's width in columns (COLUMNS wins, as everywhere), never below MIN_WIDTH."""
    return max(MIN_WIDTH, shutil.get_terminal_size((fallback, 24)).columns)


def page_width(fallback: int = 120) -> int:
    """The width of the layout written to a pipe or a file: COLUMNS when set, else `fallback`; never the size of
    a terminal the command happens to run in, so a saved copy is the same wherever it was made."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = fallback
    return max(MIN_WIDTH, columns if columns > 0 else fallback)


def display_path(path: str, cwd: str | None = None) -> str:
    """An absolute path under the working directory relative to it; anything else as the user typed it."""
    if not path or not os.path.isabs(path) or path == "-":
        return path
    base = cwd or os.getcwd()
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


def _object_key(finding: Finding) -> tuple[str, str]:
    return finding.file or "", finding.object.display()


def blocks(findings: Sequence[Finding], fold: bool = True, fold_at: int = FOLD_AT) -> list[Block]:
    """Findings as blocks, errors first: a block per object, and with `fold` a block per check that fires
    (at one severity) on `fold_at` objects or more."""
    folded: dict[tuple[str, str], Block] = {}
    if fold:
        objects: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for f in findings:
            objects.setdefault((f.id, f.severity), set()).add(_object_key(f))
        folded = {key: Block(folded=True) for key, seen in objects.items() if len(seen) >= fold_at}
    by_object: dict[tuple[str, str], Block] = {}
    order: list[Block] = []
    for f in findings:
        block = folded.get((f.id, f.severity))
        if block is None:
            block = by_object.get(_object_key(f))
            if block is None:
                block = by_object[_object_key(f)] = Block()
        if not block.findings:
            order.append(block)
        block.findings.append(f)
    for block in order:
        if not block.folded:
            block.findings.sort(key=lambda f: -SEVERITY_RANK[f.severity])  # stable: keeps the given order inside
    position = {id(b): i for i, b in enumerate(order)}
    return sorted(order, key=lambda b: (-SEVERITY_RANK[b.severity], b.folded, position[id(b)]))


SEPARATORS = "./_-[]=:,"


def wrap(text: str, width: int, first_width: int | None = None) -> list[str]:
    """Greedy word wrap; a word longer than a line (a path, a file name) breaks after a separator
    (`.`, `/`, `-`, ...) where it can, mid-word only where it must."""
    lines: list[str] = []
    line = ""
    for match in re.finditer(r"(\s*)(\S+)", text):
        space = " " * min(2, len(match.group(1))) or " "  # two spaces between fields stay two
        for index, piece in enumerate(_pieces(match.group(2), width)):
            limit = first_width if first_width is not None and not lines else width
            glue = space if line and index == 0 else ""
            if len(line) + len(glue) + len(piece) <= limit:
                line += glue + piece
                continue
            if line:
                lines.append(line)
            line = piece
    lines.append(line)
    return lines


def _pieces(word: str, width: int) -> list[str]:
    pieces = []
    while len(word) > width:
        cut = max(word.rfind(sep, 0, width) for sep in SEPARATORS) + 1
        if cut < width // 3:  # no separator late enough: break mid-word
            cut = width
        pieces.append(word[:cut])
        word = word[cut:]
    return [*pieces, word] if word else pieces


class Writer:
    """Writes wrapped lines no wider than `width`."""

    def __init__(self, out: IO[str], width: int, colour: bool = False) -> None:
        self.out = out
        self.width = max(MIN_WIDTH, width)
        self.colour = colour

    def text(self, text: str, indent: int = 0, first: str = "", hanging: int | None = None) -> None:
        """`first` (a label such as a severity) starts the first line after `indent`; wrapped lines are
        indented by `hanging` (default: where the text started)."""
        start = indent + len(first)
        hanging = start if hanging is None else hanging
        lines = wrap(text, self.width - hanging, first_width=self.width - start)
        self.out.write(" " * indent + self._paint(first) + lines[0] + "\n")
        for line in lines[1:]:
            self.out.write(" " * hanging + line + "\n")

    def line(self, text: str, indent: int = 0) -> None:
        """One line as it is, however wide: a command to copy (the terminal may wrap it on screen, but a
        copy of it stays one line)."""
        self.out.write(" " * indent + text + "\n")

    def fits(self, text: str, indent: int) -> bool:
        return indent + len(text) <= self.width

    def _paint(self, label: str) -> str:
        word = label.strip().lower()
        if self.colour and word in COLOURS:
            return COLOURS[word] + label.rstrip() + RESET + label[len(label.rstrip()):]
        return label

    def blank(self) -> None:
        self.out.write("\n")


def render_blocks(
    findings: Sequence[Finding],
    out: IO[str],
    width: int,
    *,
    wide: bool = False,
    fixes: bool = False,
    colour: bool = False,
    title: Callable[[str], str] | None = None,
    cwd: str | None = None,
    shell: str = "posix",
) -> None:
    """Write findings as blocks. `fixes` adds each finding's fix (doctor always, explain with -o wide);
    `title(check_id)` names a folded check (the catalogue's one-line description)."""
    writer = Writer(out, width, colour)
    shown: dict[tuple[object, ...], str] = {}  # fix -> the object it was printed under (one root cause, one fix)
    for index, block in enumerate(blocks(findings, fold=not wide)):
        if index:
            writer.blank()
        if block.folded:
            _folded(writer, block, title, cwd, shell if fixes else None, shown)
        else:
            _object(writer, block, fixes or wide, cwd, shell, shown)


def _where(finding: Finding, cwd: str | None) -> str:
    return display_path(finding.file, cwd) if finding.file else ""


def _object(writer: Writer, block: Block, fixes: bool, cwd: str | None, shell: str,
            shown: dict[tuple[object, ...], str]) -> None:
    first = block.findings[0]
    where = _where(first, cwd)
    writer.text(first.object.display() + (f"  {where}" if where else ""), hanging=4)
    body = 2 + SEVERITY_WIDTH
    for f in block.findings:
        line = f"line {f.line}" if f.line else ""
        label = f.severity.upper().ljust(SEVERITY_WIDTH)
        sure = f"confidence: {f.confidence}" if f.confidence else ""
        head = "  ".join(part for part in (f.id, sure, f.path, line) if part)
        if writer.fits(head, body) or not f.path:
            writer.text(head, indent=2, first=label, hanging=body)
        else:  # the path on a line of its own
            writer.text("  ".join(part for part in (f.id, sure, line) if part), indent=2, first=label, hanging=body)
            writer.text(f.path, indent=body)
        writer.text(f.message, indent=body)
        if fixes and f.fix:
            key = fix_key(f)
            if key in shown:
                where = "" if shown[key] == f.object.display() else f" for {shown[key]}"
                writer.text(f"fix: the one above{where}", indent=body)
                continue
            shown[key] = f.object.display()
            write_fix(writer, f.fix, body, shell)


def write_fix(writer: Writer, fix: Fix, indent: int, shell: str, headed: bool = False) -> None:
    """`fix:` and the note (wrapped), then each command on a line of its own, never wrapped. `headed`: the caller
    wrote its own `fix` heading; the lines start at `indent`."""
    lines = fix_lines(fix, shell)
    if headed:
        for kind, text in lines:
            (writer.line if kind == COMMAND else writer.text)(text, indent)
        return
    inner = indent + len("fix: ")
    if lines and lines[0][0] == COMMAND:
        writer.text("fix:", indent=indent)
    for index, (kind, text) in enumerate(lines):
        if kind == COMMAND:
            writer.line(text, inner)
        elif index == 0:
            writer.text(text, indent=indent, first="fix: ", hanging=inner)
        else:
            writer.text(text, indent=inner)


def _folded(writer: Writer, block: Block, title: Callable[[str], str] | None, cwd: str | None, shell: str | None,
            shown: dict[tuple[object, ...], str]) -> None:
    """One check on many objects: the objects (with their count of findings where more than one), then, when
    fixes are shown (`shell`), the first finding's message and fix (the others' are alike) and how to unfold."""
    first = block.findings[0]
    per_object: dict[tuple[str, str], list[Finding]] = {}
    for f in block.findings:
        per_object.setdefault(_object_key(f), []).append(f)
    name = (title(first.id) if title else "") or first.message
    count = "" if len(block.findings) == len(per_object) else f" ({len(block.findings)} findings)"
    writer.text(f"{first.id} on {len(per_object)} objects{count}: {name}",
                first=first.severity.upper().ljust(SEVERITY_WIDTH), hanging=SEVERITY_WIDTH)
    for found in per_object.values():
        f = found[0]
        where = _where(f, cwd)
        location = f"{where}:{f.line}" if where and f.line else where
        times = f"  ({len(found)} findings)" if len(found) > 1 else ""
        writer.text(f.object.display() + (f"  {location}" if location else "") + times, indent=2, hanging=6)
    if shell is None:
        return
    writer.text(f"e.g. {first.message}", indent=2, hanging=4)  # the figures of one, as the others say theirs
    with_fix = next((f for f in block.findings if f.fix), None)
    if with_fix is not None:
        key = fix_key(with_fix)
        alike = len({f.fix for f in block.findings if f.fix}) == 1  # one fix for every object
        if key in shown:
            writer.text(f"fix: the one above for {shown[key]}", indent=2)
        else:
            shown[key] = with_fix.object.display()
            writer.text(f"fix{'' if alike else f' for {with_fix.object.display()} (the others: alike)'}:", indent=2)
            write_fix(writer, with_fix.fix, 4, shell, headed=True)
    writer.text(f"-o wide unfolds this: each of the {len(block.findings)} findings with its message and fix",
                indent=2)
