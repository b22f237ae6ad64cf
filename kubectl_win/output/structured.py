"""JSON and YAML renderers for a command's payload dict."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any


def render_json(payload: Any, out: IO[str]) -> None:
    json.dump(payload, out, indent=2, sort_keys=False, ensure_ascii=False)
    out.write("\n")


def render_yaml(payload: Any, out: IO[str]) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump(payload, out, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
