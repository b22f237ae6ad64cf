"""Rule evaluation: one object in, findings out. Pure functions shared by explain, doctor and scaffold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubectl_win.explain.context import PodContext
from kubectl_win.explain.rules import checks
from kubectl_win.explain.target import infer_target
from kubectl_win.explain.templates import TEMPLATES
from kubectl_win.findings import Finding, ObjectRef
from kubectl_win.manifests import Path, format_path, pod_templates
from kubectl_win.policy import ignores_from_annotations
from kubectl_win.versions import NEWEST_KNOWN, Version, in_range, max_version

Locate = Callable[[Path], "int | None"]


def lint_object(
    obj: dict[str, Any],
    *,
    k8s_version: Version = NEWEST_KNOWN,
    assume_windows: bool = False,
    file: str | None = None,
    locate: Locate | None = None,
) -> list[Finding]:
    """Findings for one pod-bearing object ([] for other kinds and for pods that do not target Windows)."""
    findings: list[Finding] = []
    templates = pod_templates(obj)
    if not templates:
        return findings
    ref = ObjectRef.of(obj)
    object_meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    for template in templates:
        target = infer_target(template.spec, template.metadata)
        windows = target.windows or (assume_windows and not (target.explicit and target.os == "linux"))
        ctx = PodContext(template.spec, template.metadata, template.spec_path, target, windows, k8s_version)
        ignores = ignores_from_annotations(object_meta, template.metadata)
        seen: set[tuple[str, Path]] = set()
        for rule in checks():
            assert rule.check is not None
            # `forbidden` reads `since` itself (before it, the field is ignored rather than rejected).
            since = rule.field_since if rule.check.template == "forbidden" else max_version(rule.since, rule.field_since)
            if not in_range(k8s_version, since, rule.until):
                continue
            for path, severity, message, hint in TEMPLATES[rule.check.template](rule, ctx):
                if (rule.id, path) in seen:
                    continue
                seen.add((rule.id, path))
                findings.append(Finding(
                    id=rule.id,
                    severity=severity,
                    object=ref,
                    path=format_path(path),
                    message=message,
                    hint=hint,
                    file=file,
                    line=locate(path) if locate else None,
                    since=rule.since,
                    source=rule.source,
                    object_ignores=ignores,
                ))
    return findings
