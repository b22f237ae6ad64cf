"""The structural matcher: a Windows failure message -> its error chain (the operation the kubelet was doing,
the components that failed, every Windows code in it in any notation) -> the rule of
knowledge/error_chains.yaml that maps that structure to a doctor check.

The text catalogue (knowledge/symptoms.yaml) recognises the messages it was written from; this recognises a
message whose exact text is new when its structure is known: a CSI driver on Windows failing with
ERROR_SESSION_CREDENTIAL_CONFLICT is the same failure whatever the driver prints around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from kubectl_win.knowledge import load
from kubectl_win.wincodes import Decoded, codes_in_text, find_codes


@dataclass(frozen=True)
class Chain:
    operation: str | None
    components: frozenset[str]
    codes: tuple[Decoded, ...]  # numeric codes first, then codes named only by their text

    @property
    def code_values(self) -> frozenset[int]:
        return frozenset(c.code for c in self.codes)

    def describe(self) -> str:
        """'sandbox via cni:flannel, hns [0x1392]' for debugging and the unrecognised fallback."""
        parts = [self.operation or "unknown operation"]
        if self.components:
            parts.append("via " + ", ".join(sorted(self.components)))
        return " ".join(parts) + (f" [{', '.join(c.hex for c in self.codes)}]" if self.codes else "")


@dataclass(frozen=True)
class Rule:
    check: str
    operations: frozenset[str]
    components: frozenset[str]
    codes: frozenset[int]
    text: re.Pattern[str] | None
    cause: str

    def score(self, chain: Chain, message: str) -> int:
        """How many of the rule's fields hold (0 when one of them does not)."""
        score = 0
        if self.operations:
            if chain.operation not in self.operations:
                return 0
            score += 1
        if self.components:
            if not any(_component_matches(want, chain.components) for want in self.components):
                return 0
            score += 1
        if self.codes:
            if not self.codes & chain.code_values:
                return 0
            score += 1
        if self.text is not None:
            if not self.text.search(message):
                return 0
            score += 1
        return score


def _component_matches(want: str, have: frozenset[str]) -> bool:
    return want in have or (":" not in want and any(h.startswith(want + ":") for h in have))


@dataclass(frozen=True)
class _Compiled:
    operations: tuple[tuple[str, re.Pattern[str] | None, frozenset[str]], ...]
    components: tuple[tuple[str, re.Pattern[str]], ...]
    rules: tuple[Rule, ...]


def _any(patterns: list[str] | None) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None


@cache
def _data() -> _Compiled:
    data = load("error_chains")
    operations = tuple((o["id"], _any(o.get("patterns")), frozenset(o.get("reasons") or ()))
                       for o in data["operations"])
    components = tuple((c["id"], _any(c["patterns"])) for c in data["components"])
    rules = tuple(Rule(r["check"], frozenset(r.get("operations") or ()), frozenset(r.get("components") or ()),
                       frozenset(int(c) & 0xFFFFFFFF for c in r.get("codes") or ()),
                       re.compile(r["text"], re.IGNORECASE) if r.get("text") else None,
                       " ".join(str(r.get("cause") or "").split()))
                  for r in data["rules"])
    return _Compiled(operations, components, rules)  # type: ignore[arg-type]


_CNI_TYPE = re.compile(r"""plugin type=["']([\w.-]+)["']""")


def parse(message: str, reason: str = "") -> Chain:
    """The error chain of a message; the reason names the operation only when the text does not."""
    data = _data()
    operation = next((op for op, pattern, _ in data.operations if pattern is not None and pattern.search(message)),
                     None)
    if operation is None and reason:
        operation = next((op for op, _, reasons in data.operations if reason in reasons), None)
    components = {cid for cid, pattern in data.components if pattern.search(message)}
    components.update(f"cni:{m.group(1)}" for m in _CNI_TYPE.finditer(message))
    numeric = find_codes(message)
    seen = {c.code for c in numeric}
    by_text = tuple(c for c in codes_in_text(message) if c.code not in seen)
    return Chain(operation, frozenset(components), numeric + by_text)


def classify(message: str, reason: str = "") -> tuple[Rule, Chain] | None:
    """The best rule for the message's structure, with the chain; None when no rule holds."""
    if not message:
        return None
    chain = parse(message, reason)
    best: Rule | None = None
    best_score = 0
    for rule in _data().rules:
        score = rule.score(chain, message)
        if score > best_score:
            best, best_score = rule, score
    return (best, chain) if best is not None else None
