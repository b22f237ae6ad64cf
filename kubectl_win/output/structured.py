"""JSON and YAML renderers for a command's payload dict."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any


def render_json(payload: Any, out: IO[str]) -> None:
    """Indented JSON, the text json.dump(indent=2) writes. orjson writes it several times faster (doctor's
    report on a large cluster is tens of MB), straight to the byte stream under a UTF-8 text stream so the
    text is never held twice; the stdlib serves what orjson refuses (non-string keys, huge integers)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; a vendored copy may lack it
        orjson = None
    if orjson is not None:
        try:
            data = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            data = None
        if data is not None:
            buffer = getattr(out, "buffer", None)
            encoding = str(getattr(out, "encoding", "") or "").lower().replace("-", "").replace("_", "")
            if buffer is not None and encoding == "utf8":
                out.flush()
                buffer.write(data)
                buffer.flush()
            else:
                out.write(data.decode("utf-8"))
            return
    json.dump(payload, out, indent=2, sort_keys=False, ensure_ascii=False)
    out.write("\n")


def render_yaml(payload: Any, out: IO[str]) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump(payload, out, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
