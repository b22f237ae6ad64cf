"""Does a pod template's placement keep it on nodes of one OS? The one rule explain and doctor both read.

The scheduler ignores spec.os.name: only a nodeSelector or required node affinity on kubernetes.io/os (or the
windows-build label, which only Windows nodes carry), its own or merged in from its RuntimeClass's scheduling
block, keeps a Windows pod off Linux nodes. explain sees the RuntimeClasses of the files it reads; doctor those
of the cluster. A RuntimeClass neither can see might carry the selector: that is said, not guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubectl_win.wellknown import BUILD_LABEL, OS_LABELS

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any


def pins_os(node_selector: Mapping[str, str], required_terms: Sequence[Any] | None, os_name: str) -> bool:
    """The selector, or every required node-affinity term, requires nodes of this OS."""
    if any(str(node_selector.get(label, "")).lower() == os_name for label in OS_LABELS):
        return True
    if os_name == "windows" and BUILD_LABEL in node_selector:
        return True
    if not required_terms:
        return False
    return all(_term_pins_os(term, os_name) for term in required_terms)


def _term_pins_os(term: Any, os_name: str) -> bool:
    expressions = term.get("matchExpressions") if isinstance(term, dict) else None
    for expr in expressions if isinstance(expressions, list) else ():
        if not isinstance(expr, dict):
            continue
        values = [str(v).lower() for v in expr.get("values") or ()]
        if expr.get("key") in OS_LABELS and expr.get("operator") == "In" and values == [os_name]:
            return True
        if os_name == "windows" and expr.get("key") == BUILD_LABEL and expr.get("operator") in ("In", "Exists"):
            return True
    return False


@dataclass(frozen=True, slots=True)
class SelectorGap:
    """A Windows pod template nothing keeps off Linux nodes. `unseen`: the RuntimeClass it names, which might
    carry the selector but whose scheduling could not be read (the finding is then advice, not a warning)."""

    unseen: str | None = None

    @property
    def severity(self) -> str:
        return "info" if self.unseen else "warning"

    def note(self) -> str:
        """What the caller adds to the message: nothing, or the RuntimeClass that could not be read."""
        if not self.unseen:
            return ""
        return (f", unless RuntimeClass {self.unseen} (not read) carries one in its scheduling.nodeSelector: "
                f"kubectl get runtimeclass {self.unseen} -o jsonpath='{{.scheduling.nodeSelector}}'")


def os_selector_gap(node_selector: Mapping[str, str], required_terms: Sequence[Any] | None, node_name: str | None,
                    runtime_class: str | None, runtime_classes: Mapping[str, Mapping[str, str]],
                    all_runtime_classes: bool) -> SelectorGap | None:
    """None when the template's pods can only go to Windows nodes (or name their node, so no scheduler is
    involved); else the gap. `runtime_classes`: the nodeSelector of each RuntimeClass known; `all_runtime_classes`:
    they are all the cluster has (doctor after reading them), so one not among them does not exist."""
    if node_name or pins_os(node_selector, required_terms, "windows"):
        return None
    if runtime_class:
        selector = runtime_classes.get(runtime_class)
        if selector is None:
            return SelectorGap(None if all_runtime_classes else runtime_class)
        if pins_os({**selector, **node_selector}, required_terms, "windows"):
            return None
    return SelectorGap()


def runtime_class_selector(runtime_class: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(name, scheduling.nodeSelector) of a RuntimeClass object, as text; empty where a part is missing."""
    metadata = runtime_class.get("metadata")
    scheduling = runtime_class.get("scheduling")
    selector = scheduling.get("nodeSelector") if isinstance(scheduling, dict) else None
    return (str(metadata.get("name") or "") if isinstance(metadata, dict) else "",
            {str(k): str(v) for k, v in selector.items()} if isinstance(selector, dict) else {})
