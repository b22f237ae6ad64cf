"""Comment- and order-preserving YAML round trips with ruamel.yaml (imported here only, and lazily).

A stream is split into its documents; only the documents that change are dumped again, the others
keep their exact text. A changed document is dumped with the indentation style (of the candidates
kubectl, Helm and hand-written manifests use) that reproduces its original text most closely.
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


def dump_document(doc: Document) -> str:
    """The document's tree as text, in the indentation style closest to its original body."""
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
