"""One shared object for the values many snapshot records repeat: namespaces, kinds, phases, container
paths and memory sizes, targets, placements. Each record of a large cluster would otherwise hold its own
copy of these, parsed from its page (at 20,000 workloads the records' size halves)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from kubectl_win.findings import ObjectRef

if TYPE_CHECKING:
    from kubectl_win.explain.target import Target

T = TypeVar("T")


class Interner:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._values: dict[Any, Any] = {}
        self._placements: dict[bytes, Any] = {}

    def text(self, text: str) -> str:
        return self._texts.setdefault(text, text)

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self._texts.setdefault(text, text)

    def value(self, value: T) -> T:
        """A hashable record (a Target), shared with an equal one seen before."""
        return self._values.setdefault(value, value)

    def target(self, target: Target) -> Target:
        """A Target, shared with an equal one seen before: looked up by its fields as a plain tuple, which
        hashes and compares in C (a record's __hash__ and __eq__ are Python code; this runs per template)."""
        key = (target.os, target.explicit, target.reasons)
        return self._values.setdefault(key, target)

    def ref(self, ref: ObjectRef) -> ObjectRef:
        """The reference with its API version, kind and namespace shared (names are each object's own)."""
        return ObjectRef(self.text(ref.apiVersion), self.text(ref.kind), self.optional(ref.namespace), ref.name)

    def placement(self, placement: T) -> T:
        """A Placement (its dicts make it unhashable), shared with an equal one through its JSON."""
        import orjson

        fields = [getattr(placement, name) for name in
                  ("node_selector", "required_terms", "tolerations", "node_name", "runtime_class")]
        try:
            key = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # a value JSON cannot hold (a dump read from YAML may have one): kept as it is
            return placement
        return self._placements.setdefault(key, placement)
