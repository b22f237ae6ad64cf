"""JSON and YAML renderers for a command's payload dict."""

from __future__ import annotations

import json
from functools import cache

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any


def render_json(payload: Any, out: IO[str]) -> None:
    """Indented JSON, the text json.dump(indent=2) writes (floats in orjson's notation), streamed: a
    top-level mapping is written one entry at a time and its lists (or iterators, consumed as they go) one
    item at a time, so doctor's report on a large cluster (tens of MB) is never held whole, neither as text
    nor, when the caller passes iterators, as dicts. orjson encodes each piece several times faster than
    the stdlib, which serves what orjson refuses (non-string keys, huge integers); under a UTF-8 text
    stream the bytes go to its buffer."""
    write = _writer(out)
    if not isinstance(payload, dict) or not payload or not all(isinstance(k, str) for k in payload):
        write(_encode(payload, 0) + b"\n")
        return
    write(b"{\n")
    last = len(payload) - 1
    for index, (key, value) in enumerate(payload.items()):
        head = b"  " + _encode(str(key), 0) + b": "
        tail = b",\n" if index < last else b"\n"
        if isinstance(value, list | tuple) or _is_iterator(value):
            _write_array(write, head, value, tail)
        else:
            write(head + _encode(value, 2) + tail)
    write(b"}\n")


def _write_array(write: Any, head: bytes, items: Any, tail: bytes) -> None:
    iterator = iter(items)
    first = next(iterator, _END)
    if first is _END:
        write(head + b"[]" + tail)
        return
    write(head + b"[\n")
    item = first
    while item is not _END:
        following = next(iterator, _END)
        write(b"    " + _encode(item, 4) + (b",\n" if following is not _END else b"\n"))
        item = following
    write(b"  ]" + tail)


_END = object()


def _is_iterator(value: Any) -> bool:
    return hasattr(value, "__next__") and hasattr(value, "__iter__")


def _encode(value: Any, indent: int) -> bytes:
    """value as indented JSON, its lines after the first indented by `indent` more spaces."""
    try:
        import orjson

        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (ImportError, TypeError):
        data = json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")
    return data.replace(b"\n", b"\n" + b" " * indent) if indent else data


def encode(value: Any, indent: int) -> bytes:
    """value as the indented JSON render_json writes for it `indent` spaces deep (its first line unindented)."""
    return _encode(value, indent)


def byte_writer(out: IO[str]) -> Any:
    """A function writing UTF-8 bytes to `out`: to its buffer when it has one, else decoded."""
    return _writer(out)


def _writer(out: IO[str]) -> Any:
    buffer = getattr(out, "buffer", None)
    encoding = str(getattr(out, "encoding", "") or "").lower().replace("-", "").replace("_", "")
    if buffer is not None and encoding == "utf8":
        out.flush()

        def write(data: bytes) -> None:
            buffer.write(data)

        return write
    return lambda data: out.write(data.decode("utf-8"))


def render_yaml(payload: Any, out: IO[str]) -> None:
    import yaml

    yaml.dump(payload, out, Dumper=_yaml_dumper(), sort_keys=False, default_flow_style=False, allow_unicode=True)


@cache
def _yaml_dumper() -> Any:
    """The safe dumper, which also writes a text enum (a finding's Severity) as its text, as JSON does."""
    import enum

    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[misc, valid-type]
        pass

    Dumper.add_multi_representer(enum.StrEnum, lambda dumper, value: dumper.represent_str(str(value)))
    return Dumper
