"""Label selectors as kubectl -l reads them: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x)`."""

from __future__ import annotations

import re

_SET = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(r"^\s*([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([\w./-]+)\s*$")


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def parse_selector(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(key, operator, values) requirements; ValueError for what kubectl would refuse."""
    out = []
    for part in _split(text):
        if m := _SET.match(part):
            out.append((m.group(1), m.group(2), tuple(v.strip() for v in m.group(3).split(",") if v.strip())))
        elif m := _EQ.match(part):
            out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", (m.group(3),)))
        elif m := _EXISTS.match(part):
            out.append((m.group(2), "!" if m.group(1) else "exists", ()))
        else:
            raise ValueError(f"cannot read the requirement {part.strip()!r}")
    return out


def matches(requirements: list[tuple[str, str, tuple[str, ...]]], labels: dict[str, str]) -> bool:
    for key, op, values in requirements:
        present, value = key in labels, labels.get(key)
        ok = {"=": present and value == values[0], "!=": value != values[0], "exists": present, "!": not present,
              "in": present and value in values, "notin": value not in values}[op]
        if not ok:
            return False
    return True
