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

SEVERITY_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
RESET = "\033[0m"


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    out: IO[str],
    colour_column: int | None = None,
    colour: bool = False,
) -> None:
    """Write rows aligned under headers; `colour_column` holds a severity to colour on a terminal."""
    cells = [[_cell(value) for value in row] for row in rows]
    if colour and colour_column is not None:
        for row in cells:
            code = SEVERITY_COLOURS.get(row[colour_column].lower())
            if code:  # tabulate measures cells without their escape codes
                row[colour_column] = code + row[colour_column] + RESET
    # The header goes in as a row: tabulate pads header cells by two more, kubectl does not.
    _write(_layout([[h.upper() for h in headers], *cells], "   "), out)


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

    That lookup imports importlib.metadata, which pulls in email, zipfile, csv, socket and more:
    about 20 ms, more than laying out the table, and the budget of `explain -f` (3x `kubectl
    version --client`) has no room for it. Unless something already imported the real module,
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
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "True" if value else "False"
    return " ".join(str(value).split()) if "\n" in str(value) else str(value)
