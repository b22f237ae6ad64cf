"""JSON encode/decode: orjson when installed (much faster for big synthetic clusters), else stdlib."""

from __future__ import annotations

import json
from typing import Any

try:  # pragma: no cover - depends on the environment
    import orjson as _orjson

    def dumps(obj: Any) -> bytes:
        return _orjson.dumps(obj)

    loads = _orjson.loads
except ImportError:  # pragma: no cover
    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

    loads = json.loads
