"""Symptom folding: what events and container states say, matched against the known symptoms and folded into
one record per (check, object). A recognised symptom folds per check whatever the reason; an unrecognised
Windows warning folds per reason too. Events add up their counts and keep the newest message; container states
keep the first pod's message and count the pods that showed the same unrecognised state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kubectl_win.doctor.read.fields import as_count, as_dict, as_text
from kubectl_win.doctor.records import EventRecord, PodRecord
from kubectl_win.doctor.signatures import symptoms
from kubectl_win.findings import ObjectRef
from kubectl_win.redact import redact

# Container states that are not failures (a container on its way up) or only restate one (a back-off
# after the termination or pull error the container status already shows).
_NOT_FAILING = frozenset({"ContainerCreating", "PodInitializing", "Completed", "CrashLoopBackOff", "ImagePullBackOff"})
_ON_ITS_WAY = frozenset({"ContainerCreating", "PodInitializing", "Completed"})


class SymptomFolder:
    """The folded symptom records of one snapshot, in the order their keys first appeared."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, ObjectRef], EventRecord] = {}

    def records(self) -> tuple[EventRecord, ...]:
        return tuple(self._records.values())

    def add_event(self, obj: dict[str, Any], windows_related: Callable[[ObjectRef, str | None], bool]) -> bool:
        """Fold an Event (core/v1 or events.k8s.io/v1) if it shows a symptom doctor reports; whether it did.
        `windows_related(object, node)`: whether the object the event is about runs on or targets Windows."""
        reason = as_text(obj.get("reason"))
        message = as_text(obj.get("message")) or as_text(obj.get("note"))
        involved = obj.get("involvedObject") if isinstance(obj.get("involvedObject"), dict) else \
            obj.get("regarding") if isinstance(obj.get("regarding"), dict) else None
        if involved is None:
            return False
        ref = ObjectRef(as_text(involved.get("apiVersion")), as_text(involved.get("kind")),
                        as_text(involved.get("namespace")) or None, as_text(involved.get("name")))
        context = "node" if ref.kind == "Node" else "pod"
        # Read as the finding's words will be: a Node's event about the node, any other about its pod.
        found = symptoms.match(message, reason, "events", context=context)
        if found is None and as_text(obj.get("type")) != "Warning":
            return False
        source = as_dict(obj.get("source"))
        host = as_text(source.get("host")) or as_text(obj.get("reportingInstance")) or None
        if found is not None and found.windows_only and not windows_related(ref, host):
            # What the text means off Windows (a Windows image sent to a Linux node), if anything.
            found = symptoms.match_anywhere(message, reason, "events") or found
        if found is None or found.generic or found.windows_only:
            # The generic and Windows-only results only make sense for Windows objects; a Windows warning
            # nothing claims is still reported (windows-warning-unrecognised, folded by reason).
            if not (as_text(obj.get("type")) in ("", "Warning") and windows_related(ref, host)):
                return False
            if found is None:
                found = symptoms.unrecognised(message)
        series = as_dict(obj.get("series"))
        count = as_count(obj.get("count")) or as_count(series.get("count")) or 1
        key = (_fold_key(found.check, reason), ref)
        previous = self._records.get(key)
        self._records[key] = EventRecord(found.check, ref, reason, redact(" ".join(message.split())), host,
                                         count + (previous.count if previous else 0), codes=found.codes,
                                         confidence=found.confidence, labels=_labels(found, message, reason, context))
        return True

    def add_container_states(self, pod: PodRecord, on_windows: bool) -> None:
        """Fold what a pod's container states show, under its controller (or the pod when it has none)."""
        for state in pod.states:
            for where, reason, message in (("waiting", state.waiting_reason, state.waiting_message),
                                           ("terminated", state.terminated_reason, state.terminated_message)):
                found = symptoms.match(message, reason, where)
                if found is not None and found.placed and reason in _ON_ITS_WAY:
                    continue  # a container on its way up: the model places failures only
                if found is None:
                    if not (message and on_windows and reason not in _NOT_FAILING):
                        continue
                    found = symptoms.unrecognised(message)
                ref = pod.controller or pod.ref
                key = (_fold_key(found.check, reason), ref)
                previous = self._records.get(key)
                if previous is None:
                    self._records[key] = EventRecord(found.check, ref, reason, redact(message), pod.node, 1, pod.name,
                                                     codes=found.codes, confidence=found.confidence,
                                                     labels=_labels(found, message, reason, "pod"))
                elif found.check == symptoms.UNRECOGNISED:
                    self._records[key] = replace(previous, count=previous.count + 1)


def _labels(found: symptoms.Match, message: str, reason: str, context: str) -> tuple[tuple[str, str], ...]:
    """A placed failure's labels, read from the original text (the record keeps the redacted one)."""
    return tuple(symptoms.model.read(message, reason, context).labels().items()) if found.placed else ()


def _fold_key(check: str, reason: str) -> str:
    """Unrecognised warnings, and failures the model cannot place, fold per reason; a recognised symptom folds per
    check whatever the reason."""
    return f"{check}\x00{reason}" if check in (symptoms.UNRECOGNISED, symptoms.model.UNPLACED) else check
