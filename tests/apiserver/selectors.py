"""Label and field selectors, parsed the way kube-apiserver parses them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Matcher = Callable[[Mapping[str, str]], bool]


class SelectorError(ValueError):
    """A selector the real server would reject with 400 BadRequest."""


_SET_RE = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> Matcher | None:
    if not text or not text.strip():
        return None
    tests: list[Matcher] = []
    for term in _split_top_level(text):
        if m := _SET_RE.match(term):
            key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",") if v.strip()}
            if op == "in":
                tests.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                tests.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif m := _EQ_RE.match(term):
            key, op, value = m.groups()
            if op == "!=":
                tests.append(lambda labels, k=key, v=value: labels.get(k) != v)
            else:
                tests.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif m := _EXISTS_RE.match(term):
            negate, key = m.groups()
            if negate:
                tests.append(lambda labels, k=key: k not in labels)
            else:
                tests.append(lambda labels, k=key: k in labels)
        else:
            raise SelectorError(f"unable to parse requirement: {term.strip()!r}")
    return lambda labels: all(t(labels) for t in tests)


def parse_field_selector(text: str | None, allowed: set[str]) -> tuple[Matcher | None, list[str]]:
    """Return a matcher over an object's field values and the field paths it reads."""
    if not text or not text.strip():
        return None, []
    tests: list[Matcher] = []
    paths: list[str] = []
    for term in text.split(","):
        if not term.strip():
            continue
        m = re.match(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        path, op, value = m.groups()
        if path not in allowed:
            raise SelectorError(f'field label not supported: {path}')
        paths.append(path)
        if op == "!=":
            tests.append(lambda fields, p=path, v=value: fields.get(p, "") != v)
        else:
            tests.append(lambda fields, p=path, v=value: fields.get(p, "") == v)
    return (lambda fields: all(t(fields) for t in tests)), paths
