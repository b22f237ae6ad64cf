"""What the cluster decides about a failure text doctor read, the one reading events, container states,
`doctor --deep`'s log lines and a bundle's share: a Linux workload that landed on a Windows node fails for its
placement (doctor/checks/misplaced.py); a catalogue cause that presumes a context the pod does not show is unsure
(doctor/checks/presumed.py); an image-platform failure is a cause where the pod's target and the node's OS differ,
or where the registry's answer (doctor --check-images) says which of the message's candidates it is; otherwise
the text's own confidence stands."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kubectl_win.doctor.checks import image_platform, misplaced, no_windows_node, node_identity, presumed
from kubectl_win.doctor.records import NodeRecord, PodRecord
from kubectl_win.findings import CONFIDENCE_CAUSE, CONFIDENCE_UNSURE, Fix

PLATFORM_MISMATCH = "symptom-no-matching-platform"


@dataclass(frozen=True)
class Decided:
    confidence: str | None
    route: Fix | None = None  # the fix that replaces the entry's, where the cluster decides
    cause: str | None = None  # the cause sentence that replaces the model's, where the cluster decides
    said: str | None = None  # what the registry said, put before the finding's own fix
    settles: str | None = None  # the subsystem the cluster's evidence places the failure in

    def fix_of(self, fix: Fix) -> Fix:
        """The finding's fix with what the registry said before its note."""
        if not self.said:
            return fix
        return Fix(commands=fix.commands, note=" ".join(p for p in (self.said, fix.note) if p),
                   judgement=fix.judgement)


def decide(confidence: str | None, pod: PodRecord | None, node: NodeRecord | None, check: str, text: str,
           reason: str = "", context: str = "pod", writer: str = "",
           images: dict[str, Any] | None = None, windows: no_windows_node.WindowsNodes | None = None) -> Decided:
    """The confidence (and, where the cluster decides, the fix and cause) of a finding read from `text` on the
    pod (or node), whatever path the text came by. `images`: what registries said (doctor --check-images);
    `windows`: the cluster's Windows nodes and what decides whether one can take a pod (where doctor read them)."""
    unplaceable = no_windows_node.decide(pod, reason, text, windows)
    if unplaceable is not None:
        cause, fix = unplaceable
        return Decided(CONFIDENCE_CAUSE, fix, cause, settles="node")
    granted = node_identity.decide(node, text, reason, context, writer)
    if granted is not None:
        cause, fix = granted
        return Decided(CONFIDENCE_CAUSE, fix, cause, settles="proxy")
    decided = _decided(confidence, pod, node, check, text, reason, context, writer)
    if decided.route is not None or not images or node is None or not node.windows:
        return decided
    said = image_platform.registry_says(check, text, tuple(c.image for c in pod.containers if c.image) if pod else (),
                                        node.windows_build, images)
    return replace(decided, confidence=CONFIDENCE_CAUSE, said=said) if said else decided


def _decided(confidence: str | None, pod: PodRecord | None, node: NodeRecord | None, check: str, text: str,
             reason: str, context: str, writer: str) -> Decided:
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
