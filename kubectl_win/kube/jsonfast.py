"""JSON decoding for big list pages: orjson when installed, the stdlib otherwise."""

from __future__ import annotations

import json

try:
    import orjson

    loads = orjson.loads
    JSONDecodeError: type[Exception] = orjson.JSONDecodeError
except ImportError:  # pragma: no cover - depends on the environment
    loads = json.loads
    JSONDecodeError = json.JSONDecodeError
