"""The symptom matcher: message text (and, when known, its reason and where it appeared) -> the catalogue
entry of knowledge/symptoms.yaml that claims it, with every Windows error code in it decoded.

`match` is a plain function so any command can classify text: event and container-state messages here,
node logs elsewhere. It tries, in order: the catalogue's specific entries (their text is the failure),
the structural matcher (doctor/structure.py: operation, component and Windows code of the error chain,
mapped to a check by knowledge/error_chains.yaml), then the catalogue's `broad` entries (text shared by
many failures, such as an hcs::CreateComputeSystem prefix), then the model of the node stack
(doctor/signatures/model.py: the subsystem check `windows-<subsystem>-failure`, with the component, operation
and condition it reads). Only a message in which the model finds nothing comes back as a generic result:
`windows-runtime-error` for Windows runtime text, `windows-error-code` for a bare Windows error code.
Callers decide whether the context is Windows: the generic results and
the `windows_only` ones (structural matches, text that Linux nodes print too) are only meaningful there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from kubectl_win.doctor.signatures import model, structure
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE
from kubectl_win.knowledge import load
from kubectl_win.wincodes import Decoded, find_codes

GENERIC_RUNTIME = "windows-runtime-error"
GENERIC_CODE = "windows-error-code"
UNRECOGNISED = "windows-warning-unrecognised"
GENERIC = frozenset({GENERIC_RUNTIME, GENERIC_CODE, UNRECOGNISED})  # fallbacks: they never recognise a message
WHERE = ("events", "waiting", "terminated", "condition", "log")

# Text only the Windows container stack produces: hcsshim/HCS, HNS/HCN, Win32 system-call failures
# and the Win32 messages users see most (ecosystem reference 4.4; the corpus in tests/corpus).
_RUNTIME_MARKERS = re.compile(
    r"hcsshim|hcs::|\bHCS_E_|ComputeSystem|\bhns\b|hnsCall|\bhcn[A-Z]|\bHCN_E_|in Win32|winapi error|"
    r"failure in a Windows system call|The system cannot find the (file|path) specified|Access is denied|"
    r"The parameter is incorrect|Element not found|The user name or password is incorrect|"
    r"The paging file is too small|\(0x[0-9a-f]{1,8}\)",
    re.IGNORECASE)


@dataclass(frozen=True)
class Symptom:
    check: str
    where: frozenset[str]
    reasons: frozenset[str]
    pattern: re.Pattern[str] | None
    codes: frozenset[int]
    cause: str
    fix: Any  # a fix template (findings.fix_from_template): a note, or {commands, note}; "" when built by the check
    broad: bool = False  # tried after the structural matcher
    windows_only: bool = False
    subsystem: str = ""  # its place in the model of the node stack (knowledge/failure_model.yaml)
    component: str = ""
    confidence: str = CONFIDENCE_CAUSE  # "unsure": the entry recognises the failure but not its cause
    linux_workload: bool = False  # what a Linux workload shows on a Windows node (doctor/checks/misplaced.py)
    spans: tuple[str, ...] = ()  # an unsure entry's candidates lie in these subsystems
    operations: tuple[str, ...] = ()  # the operations of knowledge/failure_model.yaml it fails


@dataclass(frozen=True)
class Match:
    check: str
    cause: str
    fix: Any  # a fix template ({node}, {namespace}, {pod}, {object}); "" when the check builds its own
    codes: tuple[Decoded, ...]
    generic: bool = False
    windows_only: bool = False  # only meaningful on a Windows node or pod
    structural: bool = False  # claimed by its structure (knowledge/error_chains.yaml), not its text
    placed: bool = False  # placed by the model of the node stack (knowledge/failure_model.yaml), no specific entry
    # CONFIDENCE_CAUSE when the text shows the cause; CONFIDENCE_UNSURE when it does not (the finding says so).
    confidence: str = CONFIDENCE_CAUSE


@cache
def catalogue() -> tuple[Symptom, ...]:
    out = []
    for entry in load("symptoms")["symptoms"]:
        patterns = entry.get("patterns") or ()
        pattern = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None
        out.append(Symptom(entry["check"], frozenset(entry.get("where") or WHERE),
                           frozenset(entry.get("reasons") or ()), pattern,
                           frozenset(int(c) & 0xFFFFFFFF for c in entry.get("codes") or ()),
                           " ".join(str(entry.get("cause") or "").split()), entry.get("fix") or "",
                           bool(entry.get("broad")), bool(entry.get("windows_only")), str(entry.get("subsystem") or ""),
                           str(entry.get("component") or ""), str(entry.get("confidence") or CONFIDENCE_CAUSE),
                           bool(entry.get("linux_workload")), tuple(entry.get("spans") or ()),
                           tuple(entry.get("operations") or ())))
    return tuple(out)


@cache
def _by_check() -> dict[str, Symptom]:
    out: dict[str, Symptom] = {}
    for symptom in catalogue():
        out.setdefault(symptom.check, symptom)
    return out


def _text_match(message: str, reason: str, where: str, codes: tuple[Decoded, ...], broad: bool,
                anywhere: bool = False) -> Match | None:
    """The first catalogue entry (of the broad ones, or the others) claiming the text; `anywhere`: only the
    entries that mean the same on any node (no Windows-only one)."""
    code_values = {c.code for c in codes}
    for symptom in catalogue():
        if symptom.broad != broad or where not in symptom.where or (anywhere and symptom.windows_only):
            continue
        if reason and symptom.reasons and reason not in symptom.reasons:
            continue  # the reason disambiguates; a missing reason never excludes
        if (symptom.pattern is not None and symptom.pattern.search(message)) or (symptom.codes & code_values):
            return Match(symptom.check, symptom.cause, symptom.fix, codes, windows_only=symptom.windows_only,
                         confidence=symptom.confidence)
    return None


def match_text(message: str, reason: str = "", where: str = "events") -> Match | None:
    """The catalogue entry whose text claims the message, without the structural matcher."""
    if not message:
        return None
    codes = find_codes(message)
    return _text_match(message, reason, where, codes, False) or _text_match(message, reason, where, codes, True)


def match_structure(message: str, reason: str = "", where: str = "events") -> Match | None:
    """The check the message's error chain maps to (knowledge/error_chains.yaml), or None."""
    found = structure.classify(message, reason)
    if found is None:
        return None
    rule, _chain = found
    symptom = _by_check().get(rule.check)
    if symptom is not None and where not in symptom.where:
        return None
    cause = rule.cause or (symptom.cause if symptom else "")
    # A rule that matched on the operation and the component alone places the failure; only a code or a text it
    # names ties it to that entry's cause.
    sure = (rule.codes or rule.text is not None) and (symptom is None or symptom.confidence == CONFIDENCE_CAUSE)
    return Match(rule.check, cause, symptom.fix if symptom else "", find_codes(message), windows_only=True,
                 structural=True, confidence=CONFIDENCE_CAUSE if sure else CONFIDENCE_UNSURE)


def match_model(message: str, reason: str = "", where: str = "events", writer: str = "",
                context: str = "") -> Match | None:
    """The subsystem check the model places the message in (doctor/signatures/model.py), or None when it finds
    neither an operation, a component nor a Windows condition. A node log line counts only when it reports a
    failure. `context` ("node" or "pod"): what the message is about, where its place says (a node's event)."""
    if model.restates(message):
        return None
    reading = model.read(message, reason, context or ("node" if where in ("condition", "log") else "pod"), writer)
    if not reading.identified:
        return None
    if where == "log" and not model.is_error_level(message) and not model.says_it_failed(message) and not (
            (model.is_failure_line(message) or reading.condition or reading.codes)
            and (reading.operation or reading.condition or model.names_a_layer(reading)
                 or not model.has_level(message))):
        return None  # a progress line, or one logged below error level that only waits or retries
    return Match(reading.check, reading.cause(), "", find_codes(message), windows_only=True, structural=True,
                 placed=True, confidence=CONFIDENCE_CAUSE if reading.established else CONFIDENCE_UNSURE)


def match(message: str, reason: str = "", where: str = "events", writer: str = "", context: str = "") -> Match | None:
    """The catalogue entry claiming the text, else the model's subsystem check, else a generic Windows result,
    else None. `writer` names the log a line came from (where="log"); `context` what an event is about ("node"
    for a Node's event: the same reading its finding's words come from)."""
    if not message:
        return None
    return _match(message, reason, where, writer, context)


def match_anywhere(message: str, reason: str = "", where: str = "events") -> Match | None:
    """The first catalogue entry claiming the text that means the same on any node (no Windows-only entry, no
    structural or model reading): what an object that neither runs on nor targets Windows shows."""
    if not message:
        return None
    codes = find_codes(message)
    return (_text_match(message, reason, where, codes, False, anywhere=True)
            or _text_match(message, reason, where, codes, True, anywhere=True))


@lru_cache(maxsize=4096)
def _match(message: str, reason: str, where: str, writer: str, context: str = "") -> Match | None:
    # A cluster repeats its messages (every pod of a crashing Deployment, every event of a failing sandbox):
    # each distinct text is matched once. Matches are frozen, so sharing them is safe.
    codes = find_codes(message)
    found = (_text_match(message, reason, where, codes, False) or match_structure(message, reason, where)
             or _text_match(message, reason, where, codes, True))
    placed = match_model(message, reason, where, writer, context)
    if found is not None:
        # An entry that recognises the failure but not its cause yields where the message's own words are the
        # cause (an ext4 fsType in a CSI mount failure is a Linux-only setting, not a driver to upgrade).
        # (the model states a cause only where a condition's own words are it: doctor/signatures/model.py)
        if found.confidence == CONFIDENCE_UNSURE and placed is not None and placed.confidence == CONFIDENCE_CAUSE:
            return placed
        # An unsure entry whose candidates lie elsewhere than the subsystem the line's own writer settles (a
        # "network not found" in kube-proxy's log is about Services): the model's placement, which reads the writer.
        decided = model.writer_decides(writer) if found.confidence == CONFIDENCE_UNSURE else None
        if decided and placed is not None and decided not in subsystems(found.check):
            return placed
        return found
    if placed is not None:
        return placed
    if _RUNTIME_MARKERS.search(message):
        return Match(GENERIC_RUNTIME, "the Windows container runtime reported an error no catalogue entry knows",
                     "", codes, generic=True, confidence=CONFIDENCE_UNSURE)
    if codes:
        return Match(GENERIC_CODE, "the message carries a Windows error code", "", codes, generic=True,
                     confidence=CONFIDENCE_UNSURE)
    return None


def unrecognised(message: str) -> Match:
    """The fallback for a Windows warning nothing claims: reported (info) with every code the message carries,
    also the ones it names only by their text, so nothing Windows-related is silently dropped."""
    return Match(UNRECOGNISED, "no catalogue entry or error-chain rule recognises this Windows warning", "",
                 structure.parse(message).codes if message else (), generic=True, confidence=CONFIDENCE_UNSURE)


def fails_on_the_way_to_start(check: str) -> bool:
    """Whether the catalogue entry is a failure on the way to a pod's first start (its operations)."""
    symptom = _by_check().get(check)
    return symptom is not None and any(model.starts_pod(op) for op in symptom.operations)


def linux_workload_check(check: str) -> bool:
    """Whether the catalogue entry is a failure a Linux workload shows on a Windows node."""
    symptom = _by_check().get(check)
    return symptom is not None and symptom.linux_workload


def subsystems(check: str) -> frozenset[str]:
    """Every subsystem the check's answer points to: its own, and for an unsure entry the ones its candidate
    causes lie in (spans); empty for the generic fallbacks."""
    own = subsystem(check)
    spans = (span for symptom in catalogue() if symptom.check == check for span in symptom.spans)
    return frozenset({*((own,) if own else ()), *spans})


def subsystem(check: str) -> str | None:
    """The subsystem of the node stack a check's failures belong to: the catalogue entry's, the model's own
    checks' (windows-<subsystem>-failure); None for the generic fallbacks."""
    symptom = _by_check().get(check)
    if symptom is not None and symptom.subsystem:
        return symptom.subsystem
    return model.subsystem_of_check(check)


def cause(check: str) -> str:
    return next((s.cause for s in catalogue() if s.check == check), "")
