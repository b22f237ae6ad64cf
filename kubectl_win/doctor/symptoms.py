"""Match event and container-waiting text against knowledge/symptoms.yaml."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kubectl_win.knowledge import load


@dataclass(frozen=True)
class Symptom:
    check: str
    where: frozenset[str]
    reasons: frozenset[str]
    pattern: re.Pattern[str]
    cause: str


def _compile() -> tuple[Symptom, ...]:
    out = []
    for entry in load("symptoms")["symptoms"]:
        pattern = re.compile("|".join(f"(?:{p})" for p in entry["patterns"]), re.IGNORECASE)
        out.append(Symptom(entry["check"], frozenset(entry["where"]), frozenset(entry.get("reasons") or ()),
                           pattern, entry["cause"]))
    return tuple(out)


@dataclass
class SymptomMatcher:
    symptoms: tuple[Symptom, ...] = field(default_factory=_compile)

    def match_event(self, reason: str, message: str) -> str | None:
        return self._match("events", reason, message)

    def match_waiting(self, reason: str, message: str) -> str | None:
        if not message:
            return None
        return self._match("waiting", reason, message)

    def _match(self, where: str, reason: str, message: str) -> str | None:
        for symptom in self.symptoms:
            if where not in symptom.where or (symptom.reasons and reason not in symptom.reasons):
                continue
            if symptom.pattern.search(message):
                return symptom.check
        return None

    def cause(self, check: str) -> str:
        return next((s.cause for s in self.symptoms if s.check == check), "")
