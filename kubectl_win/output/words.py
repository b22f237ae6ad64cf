"""Counts in English: "1 error", "2 errors", "0 info" (info is a mass noun: never "infos" or "info(s)")."""

from __future__ import annotations

_UNCOUNTABLE = frozenset({"info"})


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and the noun in the number it needs: counted(1, "error") -> "1 error"."""
    if count == 1 or noun in _UNCOUNTABLE:
        return f"{count} {noun}"
    return f"{count} {plural or noun + 's'}"


def severity_counts(errors: int, warnings: int, infos: int) -> str:
    """The summary lines' opening: "1 error, 2 warnings, 0 info"."""
    return f"{counted(errors, 'error')}, {counted(warnings, 'warning')}, {counted(infos, 'info')}"
