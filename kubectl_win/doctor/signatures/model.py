"""The model of the Windows node stack (knowledge/failure_model.yaml): a failure message -> who reported it
(component), what was being done (operation), on what (object) and with which Windows condition, placed in
a subsystem of the node (network, dns, proxy, volume, image, runtime, node, resources, identity; or api, the
API server refusing the object before any node sees it), with the cause in one sentence where the message
shows it (else a plain "the message does not say why") and the next steps that fit that subsystem on that node.

The catalogue (knowledge/symptoms.yaml, knowledge/error_chains.yaml) names specific root causes; this reads
any failure by its structure, so a text nobody has seen before still gets its place, its likely cause and
where to look, and the generic fallback is left for a message in which none of the four can be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Any

from kubectl_win.findings import CONFIDENCE_CAUSE, Finding, Fix
from kubectl_win.knowledge import load
from kubectl_win.wincodes import Decoded, codes_in_text, find_codes

SUBSYSTEMS = ("network", "dns", "proxy", "volume", "image", "runtime", "node", "resources", "identity", "api")
CHECK_PREFIX = "windows-"
CHECK_SUFFIX = "-failure"
# {on_node}: " on <node>", or nothing where no node is involved yet (a pod the scheduler could not place).
MESSAGE = ("{object}: {reason}: {subsystem}: {component} could not {operation}{on_node}{where}: {cause}. "
           "Message: {excerpt}")
# A node log line is read only when it reports a failure (klog E/W lines, logrus/zap error and warning levels,
# or failure words): component logs are mostly progress.
_LOG_FAILURE = re.compile(
    r"^[EWF]\d{4} |level=(error|warn|warning|fatal)|\"level\":\s*\"(error|warn|warning|fatal)\"|"
    r"\b(ERROR|WARN(ING)?|FATAL)\b|"
    r"\b(fail(ed|ure|s)?|error|unable|cannot|can't|could not|refused|denied|timed[- ]?out|timeout|not found|invalid|"
    r"not (available|ready|connected|configured|supported|allowed|authorized)|unavailable|does not exist|no such|"
    r"exited|exit status|aborted|retrying|missing|is nil|no \w+ (found|available)|too long|waiting (for|to)|"
    r"deprecated|could not be|exception|FullyQualifiedErrorId|CategoryInfo|does not support|"
    r"already (been )?(closed|stopped|exited)|unexpectedly|did not|not recognized|needs to|must|no longer|lost|"
    r"rejected|skipping|giving up|panic|fatal|insufficient|exceeded|is full|busy|conflict|corrupt|mismatch|"
    r"incompatible|fault(ing|ed)?|succeeded\s*:\s*false)\b",
    re.IGNORECASE)


UNPLACED = "windows-failure"  # neither the cause nor the subsystem is settled by the message


def check_id(subsystem: str) -> str:
    return f"{CHECK_PREFIX}{subsystem}{CHECK_SUFFIX}"


def is_model_check(check: str) -> bool:
    """Whether the check is the model's: a subsystem's (windows-<subsystem>-failure) or the unplaced one."""
    return check == UNPLACED or subsystem_of_check(check) is not None


def subsystem_of_check(check: str) -> str | None:
    """'windows-volume-failure' -> 'volume'; None for any other check."""
    if check.startswith(CHECK_PREFIX) and check.endswith(CHECK_SUFFIX):
        middle = check[len(CHECK_PREFIX):-len(CHECK_SUFFIX)]
        return middle if middle in SUBSYSTEMS else None
    return None


@dataclass(frozen=True)
class _Component:
    id: str
    title: str
    subsystem: str
    pattern: re.Pattern[str]
    logs: str | None
    agent: str | None
    next: tuple[dict[str, Any], ...]
    decides: bool
    weak: bool
    named: tuple[tuple[str, re.Pattern[str]], ...]  # (cni:flannel, its pattern), (csi:smb, ...)
    log_names: frozenset[str] = frozenset()  # the names its log goes by (a node log, a bundle member)


@dataclass(frozen=True)
class _Operation:
    id: str
    phrase: str
    subsystem: str
    pattern: re.Pattern[str] | None
    reasons: frozenset[str]
    weak: bool
    starts_pod: bool = False  # on the way to a pod's first start: pull, mount, sandbox, create, start


@dataclass(frozen=True)
class _Condition:
    id: str
    meaning: str
    subsystem: str | None
    codes: frozenset[str]
    pattern: re.Pattern[str] | None
    causes: dict[str, str]
    # operation -> the subsystem this condition puts that operation's failure in ("component": the subsystem of the
    # component that failed, as for credentials the API server refuses, which are that component's)
    moves: dict[str, str]
    # Words that name the condition without saying what it is about ("not found", "EOF", "version"): found only by
    # them, the condition is no evidence of a cause.
    weak: re.Pattern[str] | None = None
    # subsystem -> what the message must also say for the cause to hold there (the object the cause is about)
    ties: dict[str, re.Pattern[str]] = field(default_factory=dict)
    self_evident: bool = False  # the message's own words are the cause (an API rejection, a Linux-only flag)
    decides: bool = False  # its subsystem wins over the operation's (an API-server rejection is no node's failure)
    # What the message names that the cause quotes ({what}, {field}, {user}, ...): a regex with named groups.
    names: re.Pattern[str] | None = None
    linux_workload: bool = False  # what a Linux workload shows on a Windows node (doctor/checks/misplaced.py)


@dataclass(frozen=True)
class _Model:
    subsystems: dict[str, dict[str, Any]]
    components: tuple[_Component, ...]
    operations: tuple[_Operation, ...]
    objects: tuple[tuple[str, str, re.Pattern[str], str | None], ...]  # id, phrase, pattern, subsystem
    conditions: tuple[_Condition, ...]


def _any(patterns: list[str] | None) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None


def _causes(condition: dict[str, Any]) -> dict[str, str]:
    """A condition's cause per subsystem: `causes` (one text each), or one `cause` for the subsystems `cause_in`
    names (every subsystem when it names none)."""
    shared = condition.get("cause")
    every = {s: shared for s in condition.get("cause_in") or SUBSYSTEMS} if shared else {}
    return {**every, **dict(condition.get("causes") or {})}


@cache
def _model() -> _Model:
    data = load("failure_model")
    components = []
    for c in data["components"]:
        named: list[tuple[str, re.Pattern[str]]] = []
        for binary in c.get("binaries") or ():
            named.append((f"cni:{binary}", re.compile(rf"(?<![\w-]){re.escape(binary)}(?![\w-])", re.IGNORECASE)))
        for driver, pattern in (c.get("drivers") or {}).items():
            named.append((f"csi:{driver}", re.compile(pattern, re.IGNORECASE)))
        components.append(_Component(c["id"], c["title"], c["subsystem"], _any(c["patterns"]),  # type: ignore[arg-type]
                                     c.get("logs"), c.get("agent"), tuple(c.get("next") or ()), bool(c.get("decides")),
                                     bool(c.get("weak")), tuple(named),
                                     frozenset(str(n).lower() for n in c.get("log_names") or ())))
    operations = tuple(_Operation(o["id"], o["phrase"], o["subsystem"], _any(o.get("patterns")),
                                  frozenset(o.get("reasons") or ()), bool(o.get("weak")),
                                  bool(o.get("starts_pod"))) for o in data["operations"])
    objects = tuple((o["id"], o["phrase"], _any(o["patterns"]), o.get("subsystem")) for o in data["objects"])
    conditions = tuple(_Condition(c["id"], c["meaning"], c.get("subsystem"), frozenset(c.get("codes") or ()),
                                  _any(c.get("patterns")), _causes(c), dict(c.get("moves") or {}),
                                  _any(c.get("weak")),
                                  {k: re.compile(v, re.IGNORECASE) for k, v in (c.get("ties") or {}).items()},
                                  bool(c.get("self_evident")), bool(c.get("decides")),
                                  re.compile(c["names"], re.IGNORECASE) if c.get("names") else None,
                                  bool(c.get("linux_workload")))
                       for c in data["conditions"])
    return _Model({s["id"]: s for s in data["subsystems"]}, tuple(components), operations, objects,  # type: ignore[arg-type]
                  conditions)


def _core(name: str) -> str:
    """HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED) -> ERROR_ACCESS_DENIED."""
    return name.partition("(")[2].rstrip(")") or name


_CNI_TYPE = re.compile(r"""plugin type=\\?["']([\w.-]+)""")


@dataclass(frozen=True)
class Reading:
    """Where a failure sits in the model. Any of the parts may be unknown; `identified` says whether one is known."""

    subsystem: str
    component: str | None  # the one that reported it (the deepest layer found)
    components: tuple[str, ...]
    operation: str | None
    object: str | None
    condition: str | None
    code: Decoded | None  # the Windows code that names the condition, when one does
    codes: tuple[Decoded, ...]
    # How the condition was found: "code" (a Windows code), "text" (its own words), "weak" (a word that names it
    # without saying what it is about), "" (none found).
    evidence: str = ""
    tied: bool = True  # the message names the object the condition's cause in this subsystem is about
    # Whether the subsystem follows from the message's own words (an operation, a component that decides, a
    # condition's subsystem or a component below the kubelet it names), not only from whose log it is or a default.
    settled: bool = True
    named: tuple[tuple[str, str], ...] = ()  # what the condition's `names` found in the message, for its cause
    # Whether anything the message names points to its subsystem (an operation, a component, the object, a
    # condition that has one), not only the default place of a pod's or a node's message.
    grounded: bool = True

    @property
    def identified(self) -> bool:
        return bool(self.operation or self.components or self.condition)

    @property
    def check(self) -> str:
        """The subsystem's check; the unplaced one when neither the cause nor the subsystem is settled."""
        return check_id(self.subsystem) if self.settled or self.established else UNPLACED

    def component_title(self) -> str:
        if self.subsystem == "api" and not names_a_layer(self):
            return "the API server"
        if self.component is None:
            return "a node component"
        if self.component == "container-process":
            return "the container's process"
        if self.component.startswith(("cni:", "csi:")):
            kind, _, name = self.component.partition(":")
            return f"the {name} {'CNI plugin' if kind == 'cni' else 'CSI driver'}"
        info = _component(self.component)
        return info.title if info else self.component

    def operation_phrase(self) -> str:
        if self.subsystem == "api":
            return "admit the object"
        if self.operation == "run":
            return "keep running"
        info = next((o for o in _model().operations if o.id == self.operation), None)
        return info.phrase if info else "complete its operation"

    @property
    def established(self) -> bool:
        """Whether the message shows the cause: its condition is one whose words are the cause (a Linux-only flag,
        an API-server rejection, a path Windows cannot hold; knowledge/failure_model.yaml: self_evident), named by the
        Windows code the operation returned or by its own words, tied to a known operation and to the object the
        cause is about, and a cause for this subsystem (causes, ties). A condition word elsewhere in the text is not;
        nor is a code whose condition has several causes (a timeout, an access denied, a registry's refusal): on
        fresh failures such codes named the wrong cause more often than the right one (docs/doctor.md, "Cause or
        unsure: how sure doctor is")."""
        condition = _condition_by_id(self.condition)
        return (condition is not None and condition.self_evident and self.evidence in ("code", "text")
                and self.tied and self.subsystem in condition.causes)

    def unsure(self) -> str:
        """The honest sentence: the message does not say why; what it does say, in plain words."""
        condition = _condition_by_id(self.condition)
        code = f" ({self.code.hex} {self.code.name})" if self.code else ""
        said = (self.code.meaning.rstrip(".") if self.code is not None else
                condition.meaning if condition is not None else "")
        what = self.object_phrase()
        reports = f"; it reports that {said}{code}" if said else ""
        # The condition's usual cause here stays a candidate: the message does not tie it to this failure.
        # Only a condition the message names (its code or its words) and ties to the object offers one.
        usual = condition.causes.get(self.subsystem) if condition is not None and self.tied and \
            self.evidence in ("code", "text") and self.grounded else None
        candidate = f"; one candidate: {usual.format_map(self._quoted()).rstrip('.')}" if usual else ""
        return f"the message does not say why{reports}{what}{candidate}; the next steps tell the causes apart"

    def _quoted(self) -> _Quoted:
        """What a cause's text is filled with: what the condition's `names` found, and {component}, who reported it
        (a cause about the program itself names it)."""
        return _Quoted(self.named, component=self.component_title())

    def object_phrase(self) -> str:
        info = next((o for o in _model().objects if o[0] == self.object), None)
        return f" (about {info[1]})" if info is not None else ""

    def cause(self) -> str:
        """One sentence: who could not do what, and the cause the condition gives in this subsystem when the
        message establishes it; otherwise that the message does not say why."""
        if not self.established:
            return self.unsure()
        condition = _condition_by_id(self.condition)
        code = f" ({self.code.hex} {self.code.name})" if self.code else ""
        if condition is not None:
            why = (condition.causes.get(self.subsystem) or condition.meaning).format_map(self._quoted())
            why += _field_rule(dict(self.named).get("field"), dict(self.named).get("value", ""))
            why += _removed_api(dict(self.named).get("kind"), dict(self.named).get("apiversion"))
        elif self.code is not None:
            why = self.code.hint or self.code.meaning.rstrip(".")
        else:
            where = self.component_title() if self.component else "the node component"
            return f"no Windows condition is named; {where}'s own log says why"
        return f"{why.rstrip('.')}{code}"

    def names_its_cause(self) -> bool:
        """Whether the cause is the condition's own for this subsystem (a code's generic hint would blur it)."""
        condition = next((c for c in _model().conditions if c.id == self.condition), None)
        return condition is not None and self.subsystem in condition.causes

    def labels(self) -> dict[str, str]:
        """The finding's values: subsystem, component, operation, cause."""
        subsystem = self.subsystem if self.check != UNPLACED else \
            f"subsystem not settled (perhaps {self.subsystem})" if self.grounded else "subsystem not settled"
        # (with_known_bug reads this phrase back when a known bug settles the place)
        return {"subsystem": subsystem, "component": self.component_title(),
                "operation": self.operation_phrase(), "cause": self.cause()}


def _removed_api(kind: str | None, version: str | None) -> str:
    """When and by what a built-in API the message names was removed (knowledge/failure_model.yaml
    removed_apis); empty for any other."""
    if not kind or not version:
        return ""
    entry = next((e for e in load("failure_model").get("removed_apis") or ()
                  if e["version"] == version and kind in e["kinds"]), None)
    if entry is None:
        return ""
    return f"; {kind} in {version} was removed in Kubernetes {entry['removed_in']}: use {entry['use']}"


def _field_rule(field: str | None, value: str = "") -> str:
    """What explain's rule for a field the API server named says Windows does with it, and what to do instead
    (one answer for `explain FIELD` and for the rejection doctor reads); for a whole securityContext rejected,
    the rule of a setting under it that the quoted value names (Privileged:true); empty for a field no rule
    covers."""
    if not field:
        return ""
    from kubectl_win.errors import UsageError
    from kubectl_win.explain.field_query import find_fields, normalize
    from kubectl_win.versions import parse_version

    try:
        matches = [m.rule for m in find_fields(field, parse_version("1.99"))]
    except UsageError:
        return ""
    wanted = normalize(field)
    named = [r for r in matches if value and any(
        normalize(f) != wanted and _set_in(normalize(f).rsplit(".", 1)[-1], value) for f in r.fields)]
    ranked = sorted((r for r in named or matches if r.status in ("rejected", "unsupported")),
                    key=lambda r: r.status != "rejected")  # what the API server rejects, then what Windows lacks
    rule = ranked[0] if ranked else None
    if rule is None:
        return ""
    return f"; explain {rule.id}: {rule.summary.rstrip('.')}; {rule.instead.rstrip('.')}"


def _set_in(name: str, value: str) -> bool:
    """Whether a quoted object sets the field: named, and not as nil (a Go struct dump names every field, the
    unset ones as Name:(*T)(nil))."""
    return re.search(rf"\b{re.escape(name)}\"?\s*:(?!\s*(\(\*[^)]*\))?\(?nil\b)(?!\s*false\b)", value,
                     re.IGNORECASE) is not None


class _Quoted(dict):  # type: ignore[type-arg]
    """What a cause quotes from the message; what it did not find reads as the message's own words."""

    def __missing__(self, key: str) -> str:
        return "what the message names"


def starts_pod(operation: str | None) -> bool:
    """Whether the operation lies on the way to a pod's first start (pull, mount, sandbox, create, start)."""
    return any(o.id == operation and o.starts_pod for o in _model().operations)


def linux_workload_condition(cid: str | None) -> bool:
    """Whether the condition is one a Linux workload shows on a Windows node (a Linux shell, user, path, chown)."""
    condition = _condition_by_id(cid)
    return condition is not None and condition.linux_workload


def _condition_by_id(cid: str | None) -> _Condition | None:
    return next((c for c in _model().conditions if c.id == cid), None) if cid else None


def agents_in(reading: Reading) -> frozenset[str]:
    """The node agents (components' `agent`: kube_proxy, cni, ...) among the components a reading found."""
    return frozenset(c.agent for c in map(_component, reading.components) if c is not None and c.agent)


def _component(cid: str) -> _Component | None:
    return next((c for c in _model().components if c.id == cid), None)


def read(message: str, reason: str = "", context: str = "pod", writer: str = "") -> Reading:
    """The message's place in the model; context ('pod' or 'node') decides only when nothing else does. `writer`
    names the log a line came from (kubelet, azure-vnet, calico-node, ...): the component whose log it is."""
    return _read(message or "", reason or "", context, writer or "")


def _components_in(text: str) -> tuple[list[_Component], list[str]]:
    found = [c for c in _model().components if c.pattern.search(text)]
    names: list[str] = []
    for component in found:
        named = [cid for cid, pattern in component.named if pattern.search(text)]
        if component.id == "cni":
            named = [f"cni:{m.group(1)}" for m in _CNI_TYPE.finditer(text)] + named
        names.extend(dict.fromkeys(named) or [component.id])
    return found, names


@lru_cache(maxsize=4096)
def _read(message: str, reason: str, context: str, writer: str) -> Reading:
    model = _model()
    operation = next((o for o in model.operations if o.pattern is not None and o.pattern.search(message)), None)
    if operation is None and reason:
        operation = next((o for o in model.operations if reason in o.reasons), None)
    found, names = _components_in(message)
    writer_component = _writer_component(writer)
    if writer_component is not None and writer_component not in found:
        # the log's writer reported the line, unless the line names a layer below it
        by_name = writer.lower() in writer_component.log_names
        written_name = writer_component.id if by_name else _components_in(writer)[1][0]
        if any(not c.weak for c in found):
            found, names = [*found, writer_component], [*names, written_name]
        else:
            found, names = [writer_component, *found], [written_name, *names]
    found_object = next((o for o in model.objects if o[2].search(message)), None)
    obj = found_object[0] if found_object else None
    numeric = find_codes(message)
    seen = {c.code for c in numeric}
    codes = numeric + tuple(c for c in codes_in_text(message) if c.code not in seen)
    condition, code, evidence = _condition(message, codes)
    subsystem, named_place = _subsystem(operation, found, condition, found_object[3] if found_object else None, context)
    grounded = named_place or obj is not None  # an object the message names (an address, a path) is its own ground
    # A log whose writer belongs to another subsystem than the line's words settles neither place.
    settled = _settled(subsystem, message, operation, found, condition) and not (
        writer_component is not None and not writer_component.weak and writer_component.subsystem != subsystem)
    if condition is not None and condition.decides and condition.subsystem:
        subsystem, settled = condition.subsystem, True
    if condition is not None and operation is not None and operation.id in condition.moves:
        subsystem = condition.moves[operation.id]
        if subsystem == "component":  # the failing component's own place (the kubelet's list is the node's)
            owner = _strong(found) or (found[0] if found else None)
            subsystem = owner.subsystem if owner else operation.subsystem
    tie = condition.ties.get(subsystem) if condition is not None else None
    quoted = condition.names.search(message) if condition is not None and condition.names is not None else None
    named = tuple((k, " ".join(v.split())) for k, v in quoted.groupdict().items() if v) if quoted else ()
    return Reading(subsystem, names[0] if names else None, tuple(dict.fromkeys(names)),
                   operation.id if operation else None, obj, condition.id if condition else None, code, codes,
                   evidence, tie is None or bool(tie.search(message)), settled, named, grounded)


def _settled(subsystem: str, message: str, operation: _Operation | None, found: list[_Component],
             condition: _Condition | None) -> bool:
    """Whether the failure's place is settled: two things the message names (its operation, a component below
    the kubelet, a condition that has a subsystem; or the log of a component that decides its subsystem, such as
    kube-proxy's) point to `subsystem` and nothing it names points elsewhere. One of them alone, or a default,
    does not settle it."""
    in_text = {c.id for c in _components_in(message)[0]}
    votes = [operation.subsystem] if operation is not None else []
    votes += [c.subsystem for c in found if (c.id in in_text and not c.weak) or c.decides]
    if condition is not None and condition.subsystem:
        votes.append(condition.subsystem)
    return len(votes) >= 2 and all(v == subsystem for v in votes)


def writer_decides(writer: str) -> str | None:
    """The subsystem a log's writer settles by itself (a `decides` component: kube-proxy's own log is about
    Services), or None."""
    component = _writer_component(writer)
    return component.subsystem if component is not None and component.decides else None


def _writer_component(writer: str) -> _Component | None:
    """The component whose log a line came from: by the names its log goes by, else by its name's patterns."""
    if not writer:
        return None
    components = _model().components
    return next((c for c in components if writer.lower() in c.log_names), None) or next(
        (c for c in components if c.pattern.search(writer)), None)


def _condition(message: str, codes: tuple[Decoded, ...]) -> tuple[_Condition | None, Decoded | None, str]:
    """The condition, the code that names it, and how it was found ("code", "text", "weak" or "")."""
    known = [c for c in codes if not c.name.startswith("(unknown")]
    for condition in _model().conditions:
        # A condition whose own words are the cause (the Linux /etc/resolv.conf, a Linux shell) is more specific
        # than the generic Windows code the same line carries (ERROR_FILE_NOT_FOUND).
        if condition.self_evident and condition.pattern is not None and condition.pattern.search(message):
            own = next((code for code in known if _core(code.name) in condition.codes), None)
            return condition, own, "code" if own is not None else "text"
    for condition in _model().conditions:
        for code in known:
            if _core(code.name) in condition.codes:
                return condition, code, "code"
    for condition in _model().conditions:
        if condition.pattern is not None and condition.pattern.search(message):
            return condition, None, "text"  # named by its text: a code elsewhere in the message is not its code
    for condition in _model().conditions:
        if condition.weak is not None and condition.weak.search(message):
            return condition, None, "weak"
    return None, known[0] if known else None, "code" if known else ""


def _strong(components: list[_Component]) -> _Component | None:
    """The first component that is not `weak` (the kubelet and containerd are: every chain passes through them)."""
    return next((c for c in components if not c.weak), None)


def _subsystem(operation: _Operation | None, components: list[_Component], condition: _Condition | None,
               object_subsystem: str | None, context: str) -> tuple[str, bool]:
    """The subsystem, and whether anything the message names points there (False: the default place)."""
    if operation is not None and not operation.weak:
        return operation.subsystem, True
    decider = next((c for c in components if c.decides), None)
    if decider is not None:
        return decider.subsystem, True
    if condition is not None and condition.subsystem:
        return condition.subsystem, True
    strong = _strong(components)
    if strong is not None:
        return strong.subsystem, True
    if object_subsystem:
        return object_subsystem, True
    if operation is not None:
        return operation.subsystem, True
    if components:
        return components[0].subsystem, True
    return ("node" if context == "node" else "runtime"), False


@cache
def _restating() -> re.Pattern[str] | None:
    return _any((load("failure_model").get("restating") or {}).get("patterns"))


def restates(message: str) -> bool:
    """Whether the message only restates an earlier failure (a restart back-off), which the model does not place."""
    pattern = _restating()
    return bool(pattern is not None and pattern.search(message))


def names_a_layer(reading: Reading) -> bool:
    """Whether the reading names a component below the kubelet and containerd (every chain passes them)."""
    return any((info := _component(c.partition(":")[0])) is not None and not info.weak for c in reading.components)


_ERROR_LEVEL = re.compile(r"^[EF]\d{4} |level=(error|fatal)\b|\"level\":\s*\"(error|fatal)\"", re.IGNORECASE)


_ANY_LEVEL = re.compile(r"^[IWEF]\d{4} |level=\w+|\"level\":", re.IGNORECASE)


def has_level(line: str) -> bool:
    """Whether the line carries its writer's log level (without one, its words decide)."""
    return bool(_ANY_LEVEL.search(line))


def is_error_level(line: str) -> bool:
    """Whether the line is logged at error level (klog E/F, logrus and zap error/fatal): a failure by its writer."""
    return bool(_ERROR_LEVEL.search(line))


_STRONG_FAILURE = re.compile(r"\b(fail(ed|ure)?|error|unable to|cannot|can't|could not|refused|denied|timed[- ]?out|"
                             r"invalid)\b", re.IGNORECASE)


def says_it_failed(line: str) -> bool:
    """Whether the line's own words say something failed (not only that something waits or retries)."""
    return bool(_STRONG_FAILURE.search(line))


def fold_key(found: Any, line: str, writer: str = "") -> str:
    """How a log's findings fold: a catalogue entry per check, a placed failure per place in the model (its
    subsystem, component, operation and condition), so two different failures of one subsystem stay two."""
    if not getattr(found, "placed", False):
        return str(found.check)
    reading = read(line, "", "node", writer)
    return "\x00".join((found.check, reading.component or "", reading.operation or "", reading.condition or ""))


def is_failure_line(line: str) -> bool:
    """Whether a node log line reports a failure (the model reads only those)."""
    return bool(_LOG_FAILURE.search(line))


def read_exit(exit_code: int, reason: str = "") -> Reading:
    """A terminated container's exit code that is no Windows status (1, 2, 255, ...): its own process failed. An
    OOMKilled reason puts it in resources."""
    condition = "out-of-memory" if reason == "OOMKilled" else "crashed"
    # OOMKilled is the kubelet's own verdict; a bare exit code does not say why the process ended.
    return Reading("resources" if condition == "out-of-memory" else "runtime", "container-process",
                   ("container-process",), "run", None, condition, None, (),
                   "text" if condition == "out-of-memory" else "")


def subsystem_info(subsystem: str) -> dict[str, Any]:
    return _model().subsystems[subsystem]


def catalogue_entries() -> list[dict[str, Any]]:
    """One catalogue check per subsystem (kubectl_win/catalog.py, family "model"): id, title, remediation, sources;
    and the unplaced one."""
    out = [{"id": UNPLACED, "subsystem": "", "title": "A Windows failure whose cause and subsystem the message does "
                                                       "not settle",
            "remediation": "The message does not say why or where; follow the next steps the finding gives for its "
                           "node, which tell the candidate causes apart.",
            "sources": ["knowledge/failure_model.yaml (components, operations, conditions)"]}]
    for subsystem in SUBSYSTEMS:
        info = subsystem_info(subsystem)
        out.append({"id": check_id(subsystem), "subsystem": subsystem, "title": info["title"],
                    "remediation": f"The failure is in the {subsystem} subsystem ({info['meaning']}); follow the "
                                   f"next steps the finding gives for its node.",
                    "sources": list(info.get("sources") or ())})
    return out


# --- next steps -------------------------------------------------------------------------------------------

AgentPods = dict[str, tuple[str, str]]  # agent kind -> (namespace, pod) on the node


def next_steps(reading: Reading, node: str | None, agents: AgentPods | None = None) -> Fix:
    """The commands a user pastes next for this failure on this node: the reporting component's log and agent
    pod first, then what the subsystem needs, at most four; a note with what the Windows code means."""
    steps: list[dict[str, Any]] = []
    for cid in reading.components[:2]:
        info = _component(cid.partition(":")[0] if ":" in cid else cid)
        if info is None or info.weak:
            continue
        if info.logs:
            steps.append({"logs": info.logs})
        if info.agent:
            steps.append({"agent": info.agent})
        steps.extend(info.next)
    steps.extend(subsystem_info(reading.subsystem).get("next") or ())
    for cid in reading.components:
        info = _component(cid.partition(":")[0] if ":" in cid else cid)
        if info is not None and info.weak and info.logs:
            steps.append({"logs": info.logs})
    commands: list[tuple[str, ...]] = []
    for step in steps:
        argv = _command(step, node, agents or {})
        if argv is not None and argv not in commands:
            commands.append(argv)
    code = reading.code
    if code is not None and not reading.established:  # what the code means, not a cause it often has
        hints = [f"{code.hex} {code.name}: {code.meaning}"] if code.meaning else []
    else:
        hints = [f"{code.hex} {code.name}: {code.hint}"] if code is not None and code.hint and \
            not reading.names_its_cause() else []
    reporter = _component(reading.component.partition(":")[0]) if reading.component else None
    on_node = reading.subsystem != "api" and (reporter is None or bool(
        reporter.logs or reporter.agent in ("cni", "csi_node", "csi_proxy", "kube_proxy")))
    where = f" on {node}" if node and on_node else ""
    note = (f"Start with {reading.component_title()}{where}, the commands in order. "
            f"The {reading.subsystem} subsystem is {subsystem_info(reading.subsystem)['meaning']}.")
    return Fix(commands=tuple(commands[:4]), note=" ".join([note, *[h.rstrip('.') + '.' for h in hints]]))


def _command(step: dict[str, Any], node: str | None, agents: AgentPods) -> tuple[str, ...] | None:
    target = node or "NODE"
    if "logs" in step:
        return ("kubectl", "win", "logs", target, str(step["logs"]), "--since", "1h")
    if step.get("hns"):
        return ("kubectl", "win", "hns", target)
    if step.get("configz"):
        return ("kubectl", "get", "--raw", f"/api/v1/nodes/{target}/proxy/configz")
    if step.get("describe"):
        return ("kubectl", "describe", "node", target)
    if "agent" in step:
        kind = str(step["agent"])
        if kind in agents:
            namespace, pod = agents[kind]
            return ("kubectl", "logs", "-n", namespace, pod, "--all-containers", "--since", "1h")
        if kind == "gmsa_webhook":
            return None  # it runs on Linux nodes; the subsystem's own steps find it
        return ("kubectl", "get", "pods", "-A", "-o", "wide", "--field-selector", f"spec.nodeName={target}")
    if "command" in step:
        return tuple(str(arg).replace("{node}", target) for arg in step["command"])
    return None


# --- known bugs -----------------------------------------------------------------------------------------------

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+~]?(alpha|beta|rc)\.?(\d+))?", re.IGNORECASE)
_PRE = {"alpha": 0, "beta": 1, "rc": 2}


def version_key(text: str) -> tuple[int, ...] | None:
    """'containerd://2.0.0-rc.1' -> (2, 0, 0, 0, 2, 1); a release sorts after its pre-releases."""
    found = _VERSION.search(text or "")
    if found is None:
        return None
    major, minor, patch, pre, number = found.groups()
    tail = (0, _PRE[pre.lower()], int(number or 0)) if pre else (1, 0, 0)
    return (int(major), int(minor), int(patch or 0), *tail)


@dataclass(frozen=True)
class KnownBug:
    id: str
    component: str  # "containerd" or "kubernetes" (the node's kubelet version)
    since: str | None
    below: str | None
    builds: frozenset[int]
    pattern: re.Pattern[str]
    ties: re.Pattern[str] | None
    does: str
    fixed_in: str
    sources: tuple[str, ...]
    kind: str = "bug"  # or "removed": a flag or API the version no longer has; "change": a release's new behaviour

    def affects(self, versions: dict[str, str], build: int | None) -> bool | None:
        """Whether a node running these versions (component -> version text) and build has the bug; None when
        doctor does not know the component's version there."""
        have = version_key(versions.get(self.component, ""))
        if have is None:
            return None
        if self.builds and build is not None and build not in self.builds:
            return False
        low, high = version_key(self.since or ""), version_key(self.below or "")
        return (low is None or have >= low) and (high is None or have < high)

    def sentence(self, running: str = "") -> str:
        on = f" ({running})" if running else ""
        if self.kind == "removed":
            return f"a removal{on}: {self.does}; {self.fixed_in} [{self.sources[0]}]"
        if self.kind == "change":
            return f"a change of behaviour{on}: {self.does}; {self.fixed_in} [{self.sources[0]}]"
        return f"a known bug{on}: {self.does}; fixed in {self.fixed_in} [{self.sources[0]}]"


@cache
def known_bugs() -> tuple[KnownBug, ...]:
    return tuple(KnownBug(b["id"], b["component"], (b.get("versions") or {}).get("from"),
                          (b.get("versions") or {}).get("below"), frozenset(b.get("builds") or ()),
                          re.compile(b["pattern"], re.IGNORECASE),
                          re.compile(b["ties"], re.IGNORECASE) if b.get("ties") else None, b["does"], b["fixed_in"],
                          tuple(b["sources"]), str(b.get("kind") or "bug"))
                 for b in load("failure_model").get("known_bugs") or ())


def known_bug(message: str) -> KnownBug | None:
    """The known bug whose failure the message shows (its words, and what they must be about), if any."""
    return next((b for b in known_bugs() if b.pattern.search(message)
                 and (b.ties is None or b.ties.search(message))), None)


_UNSETTLED = re.compile(r"subsystem not settled \(perhaps (\w+)\)")


def with_known_bug(found: Finding, message: str, node: str | None = None, versions: dict[str, str] | None = None,
                   build: int | None = None, cause: str = "") -> Finding:
    """The finding with the known bug its message shows: the cause (and its confidence) when the node runs an
    affected version (versions: component -> version text, as doctor knows them; `cause`: the sentence of the
    model's finding it replaces), a step to check when the version is not known, unchanged when the node runs
    a fixed one or no known bug fits."""
    bug = known_bug(message)
    if bug is None:
        return found
    affects = bug.affects(versions or {}, build)
    if affects is False:
        return found
    fix = found.fix
    if affects:
        sentence = bug.sentence(f"{node} runs {bug.component} {(versions or {})[bug.component]}")
        if cause:  # the model's sentence: its cause becomes the bug, and the bug's place settles the subsystem
            found = replace(found, message=found.message.replace(cause, sentence, 1))
            unsettled = _UNSETTLED.search(found.message)
            if found.id == UNPLACED and unsettled is not None:
                found = replace(found, id=check_id(unsettled.group(1)),
                                message=found.message.replace(unsettled.group(0), unsettled.group(1), 1))
        note = f"This is {sentence}. {fix.note}".strip()
        return replace(found, confidence=CONFIDENCE_CAUSE, fix=Fix(commands=fix.commands, note=note,
                                                                   judgement=fix.judgement))
    note = f"{fix.note} If the node runs an affected {bug.component} version, this is {bug.sentence()}.".strip()
    return replace(found, fix=Fix(commands=fix.commands, note=note, judgement=fix.judgement))
