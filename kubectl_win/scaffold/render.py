"""Objects to text: YAML documents or JSON (a v1 List when there is more than one object)."""

from __future__ import annotations

import io
import json
from typing import Any


def to_text(objects: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        payload: Any = objects[0] if len(objects) == 1 else {"apiVersion": "v1", "kind": "List", "items": objects}
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return "---\n".join(object_yaml(obj) for obj in objects)


def object_yaml(obj: dict[str, Any]) -> str:
    import yaml

    out = io.StringIO()
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump(obj, out, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
    return out.getvalue()


def file_name(obj: dict[str, Any], fmt: str) -> str:
    """web + Deployment -> web-deployment.yaml"""
    return f"{obj['metadata']['name']}-{str(obj['kind']).lower()}.{'json' if fmt == 'json' else 'yaml'}"


def file_text(obj: dict[str, Any], fmt: str) -> str:
    return to_text([obj], fmt)
