"""Tables like kubectl's, laid out by tabulate: upper-case headers, three spaces between columns,
no rules, nothing padded at the end of a line.

What goes into a cell (colour, `<none>`, which columns -o wide adds, where long text wraps) is
decided here and by the callers; tabulate only measures and aligns. It is imported when a table
is printed, never before: its import alone costs more than a TAB may.
"""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any

COLUMN_SEPARATOR = "   "
SEVERITY_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
RESET = "\033[0m"


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    out: IO[str],
    colour_column: int | None = None,
    colour: bool = False,
    width: int | None = None,
) -> None:
    """Write rows aligned under headers; `colour_column` holds a severity to colour on a terminal.

    With `width` (a terminal's) no line is wider: the widest columns wrap between words, and when even
    that cannot fit, each row is written as a block of HEADER value lines instead."""
    cells = [[_cell(value) for value in row] for row in rows]
    table = [[h.upper() for h in headers], *cells]
    if width:
        fitted = fit(table, width, len(COLUMN_SEPARATOR))
        if fitted is None:
            _records(table, out, width)
            return
        table = fitted
    if colour and colour_column is not None:
        for row in table[1:]:
            code = SEVERITY_COLOURS.get(row[colour_column].lower())
            if code:  # tabulate measures cells without their escape codes
                row[colour_column] = code + row[colour_column] + RESET
    # The header goes in as a row: tabulate pads header cells by two more, kubectl does not.
    _write(_layout(table, COLUMN_SEPARATOR), out)


def fit(cells: list[list[str]], width: int, separator: int) -> list[list[str]] | None:
    """The table (header row first) with its widest columns wrapped between words until it fits `width`;
    None when it cannot fit without breaking words."""
    from kubectl_win.output.fold import wrap

    count = len(cells[0])
    natural = [max(len(row[i]) for row in cells) for i in range(count)]
    floor = [max(len(word) for row in cells for word in (row[i].split() or [""])) for i in range(count)]
    limits = list(natural)
    while sum(limits) + separator * (count - 1) > width:
        widest = max(range(count), key=lambda i: limits[i] - floor[i])
        if limits[widest] <= floor[widest]:
            return None
        excess = sum(limits) + separator * (count - 1) - width
        others = max((limits[i] for i in range(count) if i != widest), default=0)
        limits[widest] = max(floor[widest], limits[widest] - excess, min(others, limits[widest] - 1))
    out: list[list[str]] = []
    for row in cells:  # a wrapped cell spans several lines: one table row per line
        parts = [[cell] if len(cell) <= limits[i] else wrap(cell, limits[i]) for i, cell in enumerate(row)]
        height = max(len(p) for p in parts)
        out.extend([p[line] if line < len(p) else "" for p in parts] for line in range(height))
    return out


def _records(table: list[list[str]], out: IO[str], width: int) -> None:
    """Each row as HEADER value lines (values wrapped), rows separated by a blank line."""
    from kubectl_win.output.fold import Writer

    headers, rows = table[0], table[1:]
    label = max(len(h) for h in headers) + 2
    writer = Writer(out, width)
    for index, row in enumerate(rows):
        if index:
            writer.blank()
        for header, value in zip(headers, row, strict=True):
            writer.text(value, first=header.ljust(label))


def render_rows(rows: Sequence[Sequence[Any]], out: IO[str], indent: str = "", separator: str = "  ") -> None:
    """Label/value lines without a header (explain FIELD, version): the labels in one column."""
    _write(_layout([[_cell(value) for value in row] for row in rows], separator), out, indent)


def _layout(cells: list[list[str]], separator: str) -> str:
    tabulate = _import_tabulate()
    row = tabulate.DataRow("", separator, "")
    kubectl = tabulate.TableFormat(lineabove=None, linebelowheader=None, linebetweenrows=None, linebelow=None,
                                   headerrow=row, datarow=row, padding=0, with_header_hide=None)
    return tabulate.tabulate(cells, tablefmt=kubectl, disable_numparse=True, stralign="left")


def _import_tabulate() -> Any:
    """tabulate, imported without the package-metadata lookup its import does for `__version__`.

    That lookup imports importlib.metadata, which pulls in email, zipfile, csv, socket and more: it costs
    more than laying out the table, and bench/bench_startup.py holds `explain -f` to its budget against
    `kubectl version --client`. Unless something already imported the real module,
    tabulate sees a stand-in for the duration of its import (its version reads "unknown"), and
    the stand-in is gone before anything else can import importlib.metadata.
    """
    import sys

    if "tabulate" in sys.modules or "importlib.metadata" in sys.modules:
        import tabulate

        return tabulate
    import importlib
    import types

    class PackageNotFoundError(ModuleNotFoundError):
        pass

    def version(name: str) -> str:
        raise PackageNotFoundError(name)

    stand_in = types.ModuleType("importlib.metadata")
    stand_in.version = version  # type: ignore[attr-defined]
    stand_in.PackageNotFoundError = PackageNotFoundError  # type: ignore[attr-defined]
    sys.modules["importlib.metadata"] = stand_in
    try:
        import tabulate
    finally:
        del sys.modules["importlib.metadata"]
        if getattr(importlib, "metadata", None) is stand_in:
            del importlib.metadata
    return tabulate


def _write(text: str, out: IO[str], indent: str = "") -> None:
    for line in text.splitlines():
        out.write(indent + line.rstrip() + "\n")


def _cell(value: Any) -> str:
    """What a cell shows: line breaks folded to spaces, any other control character escaped (terminal.py)."""
    from kubectl_win.terminal import terminal_safe

    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "True" if value else "False"
    return terminal_safe(" ".join(str(value).split()) if "\n" in str(value) else str(value))
