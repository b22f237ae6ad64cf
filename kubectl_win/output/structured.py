"""JSON and YAML renderers for a command's payload dict."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any


def render_json(payload: Any, out: IO[str]) -> None:
    """Indented JSON; orjson (the same text as json.dump with indent=2, several times faster on doctor's
    large reports) when installed and the payload is plain JSON data, the stdlib otherwise."""
    try:
        import orjson
    except ImportError:
        orjson = None
    if orjson is not None:
        try:
            text = orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode("utf-8")
        except TypeError:
            pass
        else:
            out.write(text + "\n")
            return
    json.dump(payload, out, indent=2, sort_keys=False, ensure_ascii=False)
    out.write("\n")


def render_yaml(payload: Any, out: IO[str]) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump(payload, out, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
