"""How doctor answers a corpus of real failure messages, measured through doctor's own paths.

Each entry is placed on a Windows (or, for Linux controls, a Linux) object exactly as a cluster shows it: an
Event on its pod or node, a container's waiting state, a terminated state (its message or exit code), a node's
Ready=False condition, or a line of a node component's log (read as `kubectl win logs --analyse` and doctor
--deep read one). doctor then runs on the whole dump at once; an entry's answer is the finding on its object:

  specific  a catalogue entry answers (knowledge/symptoms.yaml, error_chains.yaml, exit codes)
  placed    the model of the node stack answers (windows-<subsystem>-failure, or windows-failure when the
            message settles neither the cause nor the subsystem)
  generic   only a generic fallback answers (windows-warning-unrecognised, windows-runtime-error,
            windows-error-code)
  none      nothing answers

and each answer is graded against the entry's key (`grade`): right, honest, wrong or silent (see docs/doctor.md,
"How answers are graded"). Subsystem agreement compares the subsystem an answer names (if it names one) with
the entry's expect.subsystem (the earlier corpus: the subsystem of the entry's class).

The figures of every corpus measured in a session are printed in pytest's terminal summary (tests/conftest.py).
Only aggregate figures are ever printed or put in an assertion message, so a held-out corpus is measured without
anyone reading its messages.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubectl_win.catalog import SYMPTOM_MESSAGE
from kubectl_win.doctor.signatures import symptoms
from kubectl_win.findings import CONFIDENCE_UNSURE, Finding
from tests.support.corpus_split import in_round_order
from tests.support.paths import TESTS

CORPUS_DIR = TESTS / "corpus"
GENERIC = symptoms.GENERIC
# Specific answers outside the symptom family: a decoded exit code, kube-proxy's own sync errors.
ANSWERS = frozenset({"symptom-ntstatus-exit", "hns-kube-proxy-sync-error"})
FIGURES: list[Figures] = []  # every corpus measured in this session, for the terminal summary
CONTROLS: list[str] = []  # what the Linux controls drew, for the terminal summary


def load(*paths: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in paths:
        out.extend(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return out


@dataclass
class Figures:
    corpus: str
    total: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    grades: Counter[str] = field(default_factory=Counter)
    agree: int = 0
    judged: int = 0  # entries with an expected subsystem and a named answer
    wrong_place: int = 0  # wrong answers that were unsure, but named another subsystem (the rest stated a cause)

    def percent(self, kind: str) -> float:
        return 100.0 * self.answers[kind] / self.total if self.total else 0.0

    @property
    def graded(self) -> int:
        return sum(self.grades[g] for g in GRADES)

    def rate(self, grade: str) -> float:
        """The share of the graded entries that got this grade, in percent."""
        return 100.0 * self.grades[grade] / self.graded if self.graded else 0.0

    @property
    def held_out(self) -> bool:
        return "held" in self.corpus

    @property
    def named(self) -> float:
        return self.percent("specific") + self.percent("placed")

    @property
    def agreement(self) -> float:
        return 100.0 * self.agree / self.judged if self.judged else 0.0

    def row(self) -> list[str]:
        return [self.corpus, str(self.graded), *(f"{self.grades[g]} ({self.rate(g):.1f}%)" for g in GRADES),
                f"{self.agreement:.1f}%" if self.judged else "-"]

    def counts(self) -> str:
        """For assertion messages: counts only, never a message."""
        return (f"{self.corpus}: {self.graded} graded of {self.total}, " +
                ", ".join(f"{g} {self.grades[g]}" for g in GRADES) +
                f"; specific {self.answers['specific']}, placed {self.answers['placed']}, generic "
                f"{self.answers['generic']}, none {self.answers['none']}, wrong by an unsure answer's subsystem "
                f"{self.wrong_place}, "
                f"subsystem agreement {self.agree}/{self.judged}")


HEADERS = ["corpus", "graded", "wrong", "right", "honest", "silent", "subsystem agreement"]


def _node(name: str, os_name: str = "windows", ready: bool = True, message: str = "",
          reason: str = "", **facts: Any) -> dict[str, Any]:
    from tests.support.kube_objects import node

    obj = node(name, os=os_name, ready=ready, **facts)
    if not ready:
        obj["status"]["conditions"][0]["message"] = message
        obj["status"]["conditions"][0]["reason"] = reason or "KubeletNotReady"
    return obj


# What a node of each platform carries that doctor reads the platform from (knowledge/platforms.yaml markers).
PLATFORM_MARKS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "aks": ({"kubernetes.azure.com/agentpool": "win", "kubernetes.azure.com/mode": "user"}, {}),
    "aks-engine": ({"kubernetes.azure.com/role": "agent", "agentpool": "win"}, {}),
    "eks": ({"eks.amazonaws.com/nodegroup": "win"}, {}),
    "gke": ({"cloud.google.com/gke-nodepool": "win"}, {}),
    "openshift": ({"node.openshift.io/os_id": "Windows"}, {}),
    "rke2": ({"cattle.io/os": "windows"}, {}),
    "capi": ({}, {"cluster.x-k8s.io/cluster-name": "c1"}),
    "kubeadm": ({}, {"kubeadm.alpha.kubernetes.io/cri-socket": "npipe:////./pipe/containerd-containerd"}),
}


def _node_facts(entry: dict[str, Any]) -> dict[str, Any]:
    """The node() arguments that show what the entry's thread says of its cluster (entry.cluster: node_build,
    platform, kubelet, containerd or runtime); empty when it says nothing."""
    facts = entry.get("cluster") or {}
    out: dict[str, Any] = {}
    if facts.get("node_build"):
        out["build"] = int(facts["node_build"])
    if facts.get("kubelet"):
        kubelet = str(facts["kubelet"])
        out["kubelet"] = kubelet if kubelet.startswith("v") else f"v{kubelet}"
    if facts.get("runtime") == "docker":
        out["runtime"] = "docker://19.3.14"
    elif facts.get("containerd"):
        out["runtime"] = f"containerd://{str(facts['containerd']).lstrip('v')}"
    if facts.get("platform") in PLATFORM_MARKS:
        labels, annotations = PLATFORM_MARKS[str(facts["platform"])]
        out["labels"], out["annotations"] = dict(labels), dict(annotations) or None
    return out


def dump_of(entries: list[dict[str, Any]], os_name: str = "windows") -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The objects of a cluster showing every entry, and per entry index the object it is on (a log line: the node
    whose log it is). An entry whose thread says what its cluster was (entry.cluster) gets a node of its own
    showing it (a node log's too: doctor --deep and logs --analyse read a line with its node's evidence), and a
    pod that the thread says is a Linux workload gets no Windows selector."""
    from tests.support.kube_objects import event, node, pod, windows_spec

    # The pod's image says nothing of its Windows build (no ltsc tag): an entry's thread rarely names the image, and
    # a made-up tag would be evidence doctor reads against the entry's node build.
    image = "registry.example.com/shop/app:1.0"
    spec = windows_spec(image) if os_name == "windows" else {"containers": [{"name": "app", "image": "nginx:1.27"}],
                                                        "nodeSelector": {"kubernetes.io/os": "linux"}}
    unselected = {"containers": [{"name": "app", "image": "img"}]}  # a Linux workload without an OS selector
    objs: list[dict[str, Any]] = [_node("host-0", os_name)]
    where: dict[int, str] = {}
    for index, entry in enumerate(entries):
        facts = _node_facts(entry) if os_name == "windows" else {}
        host = "host-0"
        if facts and (entry["where"] == "log" or (entry.get("context") != "node" and entry["where"] != "condition")):
            host = f"host-{index + 1:03d}"
            objs.append(node(host, **facts))
        # A client's output (kubectl exec, cp, logs) and an API server's rejection reach doctor as the Warning
        # event the same text makes on the pod (a controller's FailedCreate): read as one.
        kind = "event" if entry["where"] in ("client", "apiserver") else entry["where"]
        reason = entry.get("reason") or ("FailedCreate" if entry["where"] == "apiserver" else "")
        message = str(entry.get("message") or "")
        if kind == "log":
            where[index] = host  # the node whose log it is (doctor --deep and logs --analyse read it there)
            continue
        if kind == "condition" or (entry.get("context") == "node" and kind == "event"):
            name = f"node-{index:03d}"
            if kind == "condition":
                objs.append(_node(name, os_name, ready=False, message=message, reason=reason, **facts))
            else:
                objs.append(_node(name, os_name, **facts))
                objs.append(event(("Node", "", name), reason or "Warning", message, host=name))
            where[index] = f"Node/{name}"
            continue
        name = f"case-{index:03d}"
        status: dict[str, Any] = {"name": "app", "image": "img", "ready": False, "restartCount": 3, "state": {}}
        statuses = None
        if kind == "waiting":
            status["state"] = {"waiting": {"reason": reason or "CreateContainerError", "message": message}}
            statuses = [status]
        elif kind == "terminated":
            terminated: dict[str, Any] = {"exitCode": entry.get("exit_code", 1), "reason": reason or "Error"}
            if message:
                terminated["message"] = message
            status["lastState"] = {"terminated": terminated}
            statuses = [status]
        linux_workload = (entry.get("cluster") or {}).get("pod_os") == "linux" and os_name == "windows"
        objs.append(pod(name, unselected if linux_workload else spec, node=host, statuses=statuses))
        if kind == "event":
            objs.append(event(("Pod", "shop", name), reason, message, host=host, count=2))
        where[index] = f"shop/Pod/{name}"
    return objs, where


def _answer(found: list[Finding]) -> tuple[str, Finding | None]:
    """(specific | placed | generic | none, the answer's finding)."""
    from kubectl_win.catalog import catalog

    families = catalog()
    relevant = [f for f in found if f.id in GENERIC or f.id in ANSWERS or (f.id in families and (
        families[f.id].family in ("symptom", "model") or families[f.id].area == "events"))]
    relevant.sort(key=lambda f: f.id)
    specific = [f for f in relevant if f.id not in GENERIC and not symptoms.model.is_model_check(f.id)]
    if specific:
        return "specific", specific[0]
    placed = [f for f in relevant if symptoms.model.is_model_check(f.id)]
    if placed:
        return "placed", placed[0]
    generic = [f for f in relevant if f.id in GENERIC]
    if generic:
        return "generic", generic[0]
    return "none", None


def _subsystem_of(check: str | None) -> str | None:
    if check is None:
        return None
    if check == "symptom-ntstatus-exit":
        return "runtime"
    if check.startswith("hns-"):
        return "proxy" if "kube-proxy" in check else "network"
    return symptoms.subsystem(check)


def answer_findings(entries: list[dict[str, Any]], os_name: str = "windows") -> list[tuple[str, Finding | None]]:
    """Per entry (in order): how doctor answers it and with which finding."""
    from kubectl_win.doctor.checks.plan import run_checks
    from kubectl_win.doctor.deep import scan_lines
    from tests.support.kube_objects import snapshot_of

    objs, where = dump_of(entries, os_name)
    snapshot = snapshot_of(*objs)
    by_object: dict[str, list[Finding]] = {}
    for finding in run_checks(snapshot):
        by_object.setdefault(finding.object.display(), []).append(finding)
    out: list[tuple[str, Finding | None]] = []
    for index, entry in enumerate(entries):
        if entry["where"] == "log":
            found = scan_lines(where[index], str(entry.get("log") or "kubelet"), [str(entry["message"])],
                               snapshot=snapshot)
        else:
            found = by_object.get(where[index], [])
        out.append(_answer(found))
    return out


def answers(entries: list[dict[str, Any]], os_name: str = "windows") -> list[tuple[str, str | None]]:
    """Per entry (in order): how doctor answers it and with which check."""
    return [(kind, f.id if f else None) for kind, f in answer_findings(entries, os_name)]


# --- grading: right, honest, wrong, silent ----------------------------------------------------------------

GRADES = ("wrong", "right", "honest", "silent")


def own_words(finding: Finding) -> str:
    """What the answer itself says, without the message it quotes: the model's sentence up to "Message:", a
    catalogue entry's cause (its remediation, shown by explain and SARIF), the fix's note and commands."""
    from kubectl_win.catalog import catalog

    info = catalog().get(finding.id)
    said = finding.message.split(" Message: ", 1)[0] if info is not None and info.family == "model" else (
        "" if info is not None and info.message == SYMPTOM_MESSAGE else finding.message)
    cause = info.remediation if info is not None and info.family != "model" else ""
    # The model's note says where to start and what its subsystem covers: a description, not a cause.
    note = _DESCRIBES.sub("", finding.fix.note)
    return " ".join(part for part in (said, cause, note, finding.fix.judgement) if part)


_DESCRIBES = re.compile(r"Start with [^.]*, the commands in order\.|The \w+ subsystem is [^.]*\.")


def _patterns(value: Any) -> re.Pattern[str] | None:
    values = [value] if isinstance(value, str) else list(value or ())
    return re.compile("|".join(f"(?:{p})" for p in values), re.IGNORECASE) if values else None


def key_of(entry: dict[str, Any]) -> tuple[re.Pattern[str] | None, str | None]:
    """The entry's answer key: the patterns a right answer's words match (expect.right, written from the thread)
    or, for the earlier corpus, the catalogue entry its collector named (class)."""
    return _patterns((entry.get("expect") or {}).get("right")), entry.get("class")


# A round's own names for the places doctor calls otherwise: the API server's side is doctor's api subsystem, a
# platform's agents (AKS, EKS, GKE, OpenShift, RKE2) are the node's; a client's path (kubectl exec/cp/logs, a
# dashboard) ends in whichever part of the node answered it, so any subsystem fits it.
SUBSYSTEM_NAMES = {"apiserver": "api", "platform": "node", "client": None}


def grade(entry: dict[str, Any], kind: str, finding: Finding | None, expected_subsystem: str | None) -> str:
    """right: the answer states the cause the key names; honest: it says the message does not establish the
    cause, names a subsystem that is the expected one (or none) and gives next steps; wrong: any other cause or
    subsystem; silent: only a generic fallback, or nothing. ("ungraded": the entry has no key.)"""
    if finding is None or kind in ("generic", "none"):
        return "silent"
    subsystem = _subsystem_of(finding.id)
    expected_subsystem = SUBSYSTEM_NAMES.get(expected_subsystem or "", expected_subsystem)
    # An unsure catalogue answer whose candidates lie in several subsystems (symptoms.yaml: spans) names them all.
    named = symptoms.subsystems(finding.id) if finding.confidence == CONFIDENCE_UNSURE else frozenset()
    fits = subsystem is None or expected_subsystem is None or subsystem == expected_subsystem or \
        expected_subsystem in named
    if finding.confidence == CONFIDENCE_UNSURE:
        return "honest" if fits and finding.fix else "wrong"
    pattern, check = key_of(entry)
    if pattern is None and check is None:
        return "ungraded"
    if check is not None and finding.id == check:
        return "right"
    words = own_words(finding)
    wrong_if = _patterns((entry.get("expect") or {}).get("wrong_if"))  # a plausible wrong cause's wording
    if wrong_if is not None and wrong_if.search(words):
        return "wrong"
    return "right" if pattern is not None and pattern.search(words) else "wrong"


def expected_subsystems(entries: list[dict[str, Any]]) -> list[str | None]:
    """Each entry's subsystem: its expect.subsystem, or (the earlier corpus) its catalogue entry's."""
    return [(e.get("expect") or {}).get("subsystem") or (symptoms.subsystem(e["class"]) if e.get("class") else None)
            for e in entries]


def measure(name: str, entries: list[dict[str, Any]], expected: list[str | None] | None = None) -> Figures:
    """The figures of a corpus (and they are kept for the terminal summary)."""
    figures = Figures(name, total=len(entries))
    wanted = expected if expected is not None else expected_subsystems(entries)
    tally(figures, entries, wanted, answer_findings(entries))
    return keep(figures)


def tally(figures: Figures, entries: list[dict[str, Any]], wanted: list[str | None],
          answered: list[tuple[str, Finding | None]]) -> None:
    """Add each entry's graded answer to the figures."""
    for entry, want, (kind, finding) in zip(entries, wanted, answered, strict=True):
        figures.answers[kind] += 1
        graded = grade(entry, kind, finding, want)
        figures.grades[graded] += 1
        figures.wrong_place += graded == "wrong" and finding is not None and finding.confidence == CONFIDENCE_UNSURE
        if want and kind in ("specific", "placed") and finding is not None and _subsystem_of(finding.id):
            figures.judged += 1  # an answer that names a subsystem
            figures.agree += _subsystem_of(finding.id) == SUBSYSTEM_NAMES.get(want, want)


def keep(figures: Figures) -> Figures:
    """Keep the figures for the terminal summary (replacing an earlier measurement of the same corpus)."""
    FIGURES[:] = [f for f in FIGURES if f.corpus != figures.corpus] + [figures]
    return figures


def corpora() -> dict[str, list[Path]]:
    """Every graded corpus under tests/corpus by name: a directory of parts (failures/, held_out/) is one corpus,
    a file of a round (round3/held_out.yaml) is one; the earlier windows_messages.yaml and the Linux controls
    are measured by their own tests. A corpus counts when any entry carries an answer key (expect.right)."""
    out: dict[str, list[Path]] = {}
    for path in sorted(CORPUS_DIR.rglob("*.yaml"), key=lambda path: in_round_order(path.as_posix())):
        relative = path.relative_to(CORPUS_DIR)
        if relative.name in ("windows_messages.yaml", "linux_controls.yaml"):
            continue
        name = relative.parent.as_posix() if relative.parent.name in ("failures", "held_out") else \
            relative.with_suffix("").as_posix()
        out.setdefault(name, []).append(path)
    return {name: paths for name, paths in out.items()
            if any((e.get("expect") or {}).get("right") for e in load(*paths))}


def findings_on_linux(entries: list[dict[str, Any]]) -> int:
    """How many Linux control entries draw any finding (on their Linux object, or from their log line)."""
    from kubectl_win.doctor.checks.plan import run_checks
    from tests.support.kube_objects import snapshot_of

    objs, where = dump_of(entries, "linux")
    flagged = {f.object.display() for f in run_checks(snapshot_of(*objs))}
    drawn = 0
    for index, entry in enumerate(entries):
        if entry["where"] == "log":
            # doctor reads only Windows nodes' logs (kubectl win logs refuses a Linux node): a Linux log line
            # counts when a catalogue entry that is not Windows-only would claim it anywhere.
            found = symptoms.match(str(entry["message"]), "", "log")
            drawn += found is not None and not (found.generic or found.windows_only)
        else:
            drawn += where[index] in flagged
    return drawn


def note(corpus: str, text: str) -> None:
    """A line about a corpus for the terminal summary (replacing an earlier one about it)."""
    CONTROLS[:] = [line for line in CONTROLS if not line.startswith(f"{corpus}: ")] + [f"{corpus}: {text}"]


def model_alone(entries: list[dict[str, Any]], expected: list[str | None]) -> str:
    """How the model alone (no catalogue entry) reads a corpus: how many it identifies, how many it places in the
    expected subsystem (a check that the model is not fitted to the catalogue's texts)."""
    from kubectl_win.doctor.signatures import model

    readable = [(e, want) for e, want in zip(entries, expected, strict=True) if e.get("message")]
    readings = [(model.read(str(e["message"]), e.get("reason") or "",
                            "node" if e.get("context") == "node" or e["where"] in ("log", "condition") else "pod",
                            str(e.get("log") or "")), want) for e, want in readable]
    identified = sum(r.identified for r, _ in readings)
    agree = sum(r.subsystem == want for r, want in readings)
    return (f"the model alone: identifies {identified} of {len(readings)}, places {agree} "
            f"({100.0 * agree / len(readings):.1f}%) in the expected subsystem")


def summary_lines() -> list[str]:
    from tabulate import tabulate

    if not FIGURES and not CONTROLS:
        return []
    ordered = sorted(FIGURES, key=lambda f: (not f.held_out, in_round_order(f.corpus)))
    heads = [f"{f.corpus}: wrong {f.rate('wrong'):.1f}% ({f.grades['wrong']} of {f.graded}: "
             f"{f.grades['wrong'] - f.wrong_place} a wrong cause, {f.wrong_place} an unsure answer's subsystem), "
             f"right {f.rate('right'):.1f}%" for f in ordered if f.held_out]
    return ["How doctor answers the failure corpora, graded against each entry's key "
            "(tests/support/corpus_figures.py):", *heads,
            *(tabulate([f.row() for f in ordered], HEADERS).splitlines() if ordered else []), *CONTROLS]
