"""render_json streams a payload piece by piece; the text must stay exactly what json.dump(indent=2) writes
(floats aside, whose notation orjson chooses: the same numbers)."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_win.output.structured import render_json

# Floats are left out of the text comparison: orjson writes 1e-05 as 0.00001 (the same number).
_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text()
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=25)


def _text(payload: object, utf8_stream: bool) -> str:
    if utf8_stream:
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="utf-8")
        render_json(payload, out)
        out.flush()
        return raw.getvalue().decode("utf-8")
    out = io.StringIO()
    render_json(payload, out)
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(_values, st.booleans())
def test_the_text_is_what_json_dump_writes(payload: object, utf8_stream: bool) -> None:
    assert _text(payload, utf8_stream) == json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_keep_their_value(number: float) -> None:
    assert json.loads(_text({"value": [number]}, True)) == {"value": [number]}


def test_iterators_in_a_report_are_written_as_lists() -> None:
    findings = ({"id": f"f{i}", "fix": {"commands": ["kubectl get nodes"]}} for i in range(3))
    text = _text({"kind": "DoctorReport", "nodes": iter(()), "findings": findings, "summary": {"errors": 0}}, True)
    assert json.loads(text) == {"kind": "DoctorReport", "nodes": [],
                                "findings": [{"id": f"f{i}", "fix": {"commands": ["kubectl get nodes"]}}
                                             for i in range(3)], "summary": {"errors": 0}}
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
