"""Rule evaluation: one object in, findings out. Pure functions shared by explain, doctor and scaffold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache

from kubectl_win.explain.context import PodContext
from kubectl_win.explain.rules import Rule, checks
from kubectl_win.explain.target import infer_target
from kubectl_win.explain.templates import TEMPLATES
from kubectl_win.findings import NO_FIX, Finding, Fix, ObjectRef
from kubectl_win.manifests.objects import Path, format_path, pod_templates
from kubectl_win.policy import ignores_from_annotations
from kubectl_win.versions import NEWEST_KNOWN, Version, in_range, max_version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

Locate = Callable[[Path], "int | None"]


def lint_object(
    obj: dict[str, Any],
    *,
    k8s_version: Version = NEWEST_KNOWN,
    assume_windows: bool = False,
    file: str | None = None,
    locate: Locate | None = None,
    runtime_classes: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Finding]:
    """Findings for one pod-bearing object ([] for other kinds and for pods that do not target Windows)."""
    return lint_object_detailed(obj, k8s_version=k8s_version, assume_windows=assume_windows, file=file, locate=locate,
                                runtime_classes=runtime_classes)[0]


@cache
def _rules_for(version: Version) -> tuple[Rule, ...]:
    """The rules that apply at a version (`forbidden` reads `since` itself: before it, ignored not rejected)."""
    selected = []
    for rule in checks():
        assert rule.check is not None
        since = rule.field_since if rule.check.template == "forbidden" else max_version(rule.since, rule.field_since)
        if in_range(version, since, rule.until):
            selected.append(rule)
    return tuple(selected)


def lint_object_detailed(
    obj: dict[str, Any],
    *,
    k8s_version: Version = NEWEST_KNOWN,
    assume_windows: bool = False,
    file: str | None = None,
    locate: Locate | None = None,
    rules: tuple[Rule, ...] | None = None,
    runtime_classes: Mapping[str, Mapping[str, str]] | None = None,
    all_runtime_classes: bool = False,
) -> tuple[list[Finding], bool]:
    """(findings, whether any pod template was treated as a Windows pod); `rules` replaces the rules in
    effect at the version (the admission policy's own set); `runtime_classes`: the nodeSelector of each
    RuntimeClass seen beside the object (a RuntimeClass not among them is unknown, not absent, unless
    `all_runtime_classes`: they are every RuntimeClass of the cluster)."""
    findings: list[Finding] = []
    templates = pod_templates(obj)
    treated_as_windows = False
    if not templates:
        return findings, treated_as_windows
    ref = ObjectRef.of(obj)
    object_meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    for template in templates:
        target = infer_target(template.spec, template.metadata)
        windows = target.windows or (assume_windows and not (target.explicit and target.os == "linux"))
        treated_as_windows = treated_as_windows or windows
        ctx = PodContext(template.spec, template.metadata, template.spec_path, target, windows, k8s_version,
                         runtime_classes or {}, all_runtime_classes)
        ignores = ignores_from_annotations(object_meta, template.metadata)
        seen: set[tuple[str, Path]] = set()
        for rule in _rules_for(k8s_version) if rules is None else rules:
            assert rule.check is not None
            for path, severity, message, hint, *enforcer in TEMPLATES[rule.check.template](rule, ctx):
                if (rule.id, path) in seen:
                    continue
                seen.add((rule.id, path))
                findings.append(
                    Finding(
                        id=rule.id,
                        severity=severity,
                        object=ref,
                        path=format_path(path),
                        message=message,
                        fix=Fix(note=hint) if hint else NO_FIX,
                        file=file,
                        line=locate(path) if locate else None,
                        since=rule.since,
                        source=rule.source,
                        enforced_by=enforcer[0] if enforcer else rule.enforced_by,
                        object_ignores=ignores,
                    )
                )
    return findings, treated_as_windows
