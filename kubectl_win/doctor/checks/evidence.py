"""What the cluster decides about a failure text doctor read, the one reading events, container states,
`doctor --deep`'s log lines and a bundle's share: a Linux workload that landed on a Windows node fails for its
placement (doctor/checks/misplaced.py); a catalogue cause that presumes a context the pod does not show is unsure
(doctor/checks/presumed.py); an image-platform failure is a cause where the pod's target and the node's OS differ;
otherwise the text's own confidence stands."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_win.doctor.checks import misplaced, presumed
from kubectl_win.doctor.records import NodeRecord, PodRecord
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, Fix

PLATFORM_MISMATCH = "symptom-no-matching-platform"


@dataclass(frozen=True)
class Decided:
    confidence: str | None
    route: Fix | None = None  # the fix that replaces the entry's, where the cluster decides
    cause: str | None = None  # the cause sentence that replaces the model's, where the cluster decides


def decide(confidence: str | None, pod: PodRecord | None, node: NodeRecord | None, check: str, text: str,
           reason: str = "", context: str = "pod", writer: str = "") -> Decided:
    if check == PLATFORM_MISMATCH and node is not None and (not node.windows or (pod is not None
                                                                                   and not pod.target.windows)):
        # A pod that does not ask for Windows brought its image to a Windows node, or (only a message naming a
        # Windows image is claimed there) a Windows image came to a Linux node: which of the candidates it is (its
        # own fix says which way round, more precisely than the placement's).
        return Decided(CONFIDENCE_CAUSE)
    placed = misplaced.placement(pod, node, check, text, reason, context, writer)
    if placed is not None:
        route, sentence = placed
        return Decided(CONFIDENCE_CAUSE, route, sentence)
    otherwise = presumed.unsettled(check, pod, node)
    if otherwise is not None:
        return Decided(CONFIDENCE_UNSURE, Fix(note=otherwise + "."))
    return Decided(confidence)
