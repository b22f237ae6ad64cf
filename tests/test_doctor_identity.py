"""doctor's outputs on every identity case are byte for byte those recorded before doctor's modules moved."""

from __future__ import annotations

from tests.support.doctor_digests import digests, recorded


def test_doctor_outputs_are_unchanged_by_the_move() -> None:
    expected = recorded()
    actual = digests()
    assert actual.keys() == expected.keys()
    changed = [name for name in expected if actual[name] != expected[name]]
    assert not changed, f"doctor's output changed for: {', '.join(changed)}"
