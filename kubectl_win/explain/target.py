"""Which OS a pod spec is meant for: spec.os.name when set, otherwise inferred from its placement and images.

The scheduler ignores spec.os.name, so a pod reaches Windows nodes through nodeSelector, node affinity,
tolerations of Windows taints or a RuntimeClass; Windows images and windowsOptions are strong hints too.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_win.knowledge import load
from kubectl_win.manifests.objects import iter_containers
from kubectl_win.wellknown import BUILD_LABEL, OS_LABELS, windows_taint_keys

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class Target:
    os: str | None  # "windows", "linux", another explicit spec.os.name value, or None when nothing says
    explicit: bool  # True when spec.os.name says so (the API server then validates for that OS)
    reasons: tuple[str, ...] = ()

    @property
    def windows(self) -> bool:
        return self.os == "windows"

    def because(self) -> str:
        return ", ".join(self.reasons)


def infer_target(spec: dict[str, Any], metadata: dict[str, Any] | None = None) -> Target:
    """The OS a pod spec targets, with the evidence for it."""
    os_field = spec.get("os")
    if isinstance(os_field, dict) and os_field.get("name") is not None:
        return Target(str(os_field["name"]), True, (f"spec.os.name={os_field['name']}",))
    placed = _placement_os(spec)
    if placed is not None:
        return placed
    hints = _windows_hints(spec)
    if hints:
        return Target("windows", False, tuple(hints))
    return Target(None, False, ())


def _placement_os(spec: dict[str, Any]) -> Target | None:
    """OS from nodeSelector or required node affinity; None when placement does not say."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        for label in OS_LABELS:
            value = selector.get(label)
            if isinstance(value, str) and value.lower() in ("windows", "linux"):
                return Target(value.lower(), False, (f"nodeSelector {label}={value}",))
        if BUILD_LABEL in selector:
            return Target("windows", False, (f"nodeSelector {BUILD_LABEL}={selector[BUILD_LABEL]}",))
    affinity_os = _affinity_os(spec)
    if affinity_os:
        return affinity_os
    return None


def _affinity_os(spec: dict[str, Any]) -> Target | None:
    try:
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    except (KeyError, TypeError):
        return None
    if not isinstance(terms, list):
        return None
    found: set[str] = set()
    reasons = []
    for term in terms:
        expressions = term.get("matchExpressions") if isinstance(term, dict) else None
        for expr in expressions if isinstance(expressions, list) else []:
            if not isinstance(expr, dict):
                continue
            key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
            if key in OS_LABELS and operator == "In" and isinstance(values, list):
                oses = {str(v).lower() for v in values} & {"windows", "linux"}
                found |= oses
                if oses:
                    reasons.append(f"node affinity {key} In [{', '.join(sorted(oses))}]")
            elif key == BUILD_LABEL and operator in ("In", "Exists"):
                found.add("windows")
                reasons.append(f"node affinity on {BUILD_LABEL}")
    if len(found) == 1:
        return Target(found.pop(), False, tuple(reasons))
    return None  # both or neither: affinity does not pin an OS


def _windows_hints(spec: dict[str, Any]) -> list[str]:
    hints = []
    for toleration in spec.get("tolerations") or []:
        if isinstance(toleration, dict) and is_windows_toleration(toleration):
            hints.append(
                f"tolerates the Windows taint {toleration.get('key')}={toleration.get('value', '')}".rstrip("=")
            )
            break
    runtime_class = spec.get("runtimeClassName")
    if isinstance(runtime_class, str) and "windows" in runtime_class.lower():
        hints.append(f"runtimeClassName {runtime_class}")
    security = spec.get("securityContext")
    if isinstance(security, dict) and isinstance(security.get("windowsOptions"), dict):
        hints.append("spec.securityContext.windowsOptions is set")
    for list_name, index, container in iter_containers(spec):
        context = container.get("securityContext")
        if isinstance(context, dict) and isinstance(context.get("windowsOptions"), dict):
            hints.append(f"{list_name}[{index}] sets windowsOptions")
            break
    for list_name, index, container in iter_containers(spec):
        image = container.get("image")
        if isinstance(image, str) and is_windows_image(image):
            hints.append(f"{list_name}[{index}] runs the Windows image {image}")
            break
    return hints


def is_windows_toleration(toleration: dict[str, Any]) -> bool:
    """A toleration for one of the Windows taint schemes (os=Win1809, node.kubernetes.io/os=windows, ...)."""
    key = toleration.get("key")
    if key not in windows_taint_keys():
        return False
    if toleration.get("operator") == "Exists":
        return True  # tolerates every value of the OS taint key: only Windows nodes carry one
    return str(toleration.get("value") or "").lower().startswith("win")


def is_windows_image(image: str) -> bool:
    data = load("windows_builds")
    lowered = image.lower()
    if any(lowered.startswith(prefix) for prefix in data["windows_image_prefixes"]):
        return True
    return any(marker in lowered for marker in data["windows_image_markers"])
