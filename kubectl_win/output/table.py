"""Plain aligned tables like kubectl's: upper-case headers, two spaces between columns."""

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
    """Write rows aligned under headers; the last column is never padded (it may be long)."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for index, value in enumerate(row[:-1]):
            widths[index] = max(widths[index], len(value))
    out.write(_line([h.upper() for h in headers], widths) + "\n")
    for row in cells:
        text = _line(row, widths)
        if colour and colour_column is not None:
            text = _colourise(text, row, widths, colour_column)
        out.write(text + "\n")


def _cell(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return "True" if value else "False"
    return " ".join(str(value).split()) if "\n" in str(value) else str(value)


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    parts = [value.ljust(widths[i]) for i, value in enumerate(values[:-1])]
    parts.append(values[-1] if values else "")
    return "   ".join(parts).rstrip()


def _colourise(text: str, row: Sequence[str], widths: Sequence[int], column: int) -> str:
    start = sum(widths[:column]) + 3 * column
    value = row[column]
    code = SEVERITY_COLOURS.get(value.lower())
    if not code:
        return text
    return text[:start] + code + value + RESET + text[start + len(value) :]
