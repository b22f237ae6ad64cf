"""Comment- and order-preserving YAML round trips with ruamel.yaml (imported here only, and lazily).

A stream is split into its documents; documents that do not change keep their exact text. In a changed
document the keys and items that were added to the tree are written as new lines at the position and
indentation of their siblings, so every other line stays byte for byte as it was; the result is parsed
again and must equal the edited tree. Only when that is impossible (flow style, say) is the document
dumped whole, in the indentation style closest to its original text.
"""

from __future__ import annotations

import difflib
import io
import re
from dataclasses import dataclass
from typing import Any

_DOC_START = re.compile(r"^---(?=[ \t]|$)", re.MULTILINE)
_INDENT_STYLES = ((2, 0), (2, 2), (4, 2), (4, 0), (4, 4))  # (mapping indent, sequence dash offset)


@dataclass
class Document:
    header: str  # the '---' line (with its newline) or "" for a first document without one
    body: str  # the original text after the header
    data: Any  # the ruamel tree (CommentedMap / CommentedSeq / scalar / None)


def split_documents(text: str) -> list[Document]:
    """Documents of a YAML stream, parsed with the round-trip loader; ValueError on bad YAML."""
    starts = [m.start() for m in _DOC_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    docs = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        chunk = text[start:end]
        header = ""
        if _DOC_START.match(chunk):
            newline = chunk.find("\n")
            header, chunk = (chunk, "") if newline < 0 else (chunk[: newline + 1], chunk[newline + 1:])
        docs.append(Document(header, chunk, _load(chunk)))
    return docs


def render_document(doc: Document) -> str:
    """The edited document's text: new lines inserted into the original where possible, else a full dump."""
    inserted = insert_new_lines(doc)
    return inserted if inserted is not None else dump_document(doc)


def insert_new_lines(doc: Document) -> str | None:
    """The original body with the tree's added keys and items inserted as lines; None when that is unsafe."""
    lines = doc.body.splitlines(keepends=True)
    style = _style(doc.body)
    insertions: list[tuple[int, list[str]]] = []
    if not _collect(doc.data, lines, style, insertions):
        return None
    for line_no, new_lines in sorted(insertions, key=lambda item: item[0], reverse=True):
        lines[line_no:line_no] = new_lines
    text = "".join(lines)
    try:
        reparsed = _load(text)
    except ValueError:
        return None
    return text if _plain(reparsed) == _plain(doc.data) else None


def _collect(node: Any, lines: list[str], style: tuple[int, int], out: list[tuple[int, list[str]]]) -> bool:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        known = node.lc.data
        if known is None:
            # An empty {} as loaded, or a node built in memory that replaced a value (null, say).
            return not node
        new = [k for k in node if k not in known]
        if new:
            anchors = [k for k in node if k in known]
            if not anchors or node.fa.flow_style():
                return False
            line, col = node.lc.key(anchors[0])
            if line >= len(lines) or lines[line][:col].strip():
                return False  # the first key shares its line with something else
            block: list[str] = []
            for key in new:
                block += _entry(key, node[key], col, style)
            out.append((_above_comments(lines, line, col), block))
        return all(_collect(node[k], lines, style, out) for k in node if k in known)
    if isinstance(node, CommentedSeq):
        if node.lc.data is None:
            return not node
        known_count = len(node.lc.data)
        if len(node) > known_count:
            if known_count == 0 or node.fa.flow_style():
                return False
            line, col = node.lc.item(known_count - 1)
            prefix = lines[line][:col] if line < len(lines) else ""
            dash = prefix.rstrip()
            if not dash.endswith("-") or dash[:-1].strip():
                return False
            dash_col = len(dash) - 1
            block = []
            for item in list(node)[known_count:]:
                block += _item(item, dash_col, style)
            out.append((_after_item(lines, line, dash_col), block))
        return all(_collect(item, lines, style, out) for item in list(node)[:known_count])
    return True


def _after_item(lines: list[str], line: int, dash_col: int) -> int:
    """The line after the sequence item that starts at `line`: its content is indented past the dash."""
    end = line + 1
    for index in range(line + 1, len(lines)):
        stripped = lines[index].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(lines[index]) - len(lines[index].lstrip(" ")) <= dash_col:
            break
        end = index + 1
    return end


def _above_comments(lines: list[str], line: int, col: int) -> int:
    """Move an insertion point above the comment lines (at the same column) that introduce the next line."""
    while line > 0:
        above = lines[line - 1]
        stripped = above.lstrip(" ")
        if not stripped.startswith("#") or len(above) - len(stripped) != col:
            break
        line -= 1
    return line


def _entry(key: Any, value: Any, col: int, style: tuple[int, int]) -> list[str]:
    indent, offset = style
    pad = " " * col
    if isinstance(value, dict) and value:
        out = [f"{pad}{_scalar(key)}:\n"]
        for k, v in value.items():
            out += _entry(k, v, col + indent, style)
        return out
    if isinstance(value, list) and value:
        out = [f"{pad}{_scalar(key)}:\n"]
        for item in value:
            out += _item(item, col + offset, style)
        return out
    return [f"{pad}{_scalar(key)}: {_scalar(value)}\n"]


def _item(value: Any, dash_col: int, style: tuple[int, int]) -> list[str]:
    if isinstance(value, dict) and value:
        out: list[str] = []
        for k, v in value.items():
            out += _entry(k, v, dash_col + 2, style)
        first = out[0]
        out[0] = " " * dash_col + "- " + first[dash_col + 2:]
        return out
    return [" " * dash_col + f"- {_scalar(value)}\n"]


_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


def _scalar(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    text = str(value)
    if _PLAIN.match(text) and _load(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def _style(body: str) -> tuple[int, int]:
    """(mapping indent, sequence dash offset) most used in a document; (2, 0) when it does not say."""
    indents: dict[int, int] = {}
    offsets: dict[int, int] = {}
    previous: tuple[int, str] | None = None
    for line in body.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        col = len(line) - len(stripped)
        if previous is not None and previous[1].endswith(":"):
            if stripped.startswith("- "):
                offsets[col - previous[0]] = offsets.get(col - previous[0], 0) + 1
            elif col > previous[0]:
                indents[col - previous[0]] = indents.get(col - previous[0], 0) + 1
        previous = (col, stripped.rstrip())
    indent = max(indents, key=lambda k: indents[k]) if indents else 2
    offset = max(offsets, key=lambda k: offsets[k]) if offsets else 0
    return indent, offset if offset >= 0 else 0


def _plain(data: Any) -> Any:
    if isinstance(data, dict):
        return {str(k): _plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    if isinstance(data, bool) or data is None:
        return data
    if isinstance(data, int | float):
        return data if isinstance(data, bool) else (int(data) if isinstance(data, int) else float(data))
    return str(data)


def dump_document(doc: Document) -> str:
    """The document's tree as text, in the indentation style closest to its original body.

    A document written in flow style (JSON-like YAML) is dumped in block style: ruamel would otherwise
    put the whole object on one line.
    """
    if getattr(getattr(doc.data, "fa", None), "flow_style", lambda: False)():
        _block_style(doc.data)
    best: tuple[int, str] | None = None
    for mapping, offset in _INDENT_STYLES:
        text = _dump(doc.data, mapping, offset)
        distance = _distance(doc.body, text)
        if best is None or distance < best[0]:
            best = (distance, text)
        if distance == 0:
            break
    assert best is not None
    return best[1]


def _block_style(node: Any) -> None:
    if isinstance(node, dict | list):
        if hasattr(node, "fa"):
            node.fa.set_block_style()
        for child in node.values() if isinstance(node, dict) else node:
            _block_style(child)


def _yaml(mapping: int = 2, offset: int = 0) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap long lines
    yaml.indent(mapping=mapping, sequence=mapping + offset, offset=offset)
    return yaml


def _load(chunk: str) -> Any:
    from ruamel.yaml.error import YAMLError

    try:
        return _yaml().load(chunk)
    except YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())) from None


def _dump(data: Any, mapping: int, offset: int) -> str:
    out = io.StringIO()
    _yaml(mapping, offset).dump(data, out)
    return out.getvalue()


def _distance(before: str, after: str) -> int:
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
