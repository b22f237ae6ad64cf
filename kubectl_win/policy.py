"""Suppression shared by explain and doctor: the kubectl-win.io/ignore annotation and a config file.

Config file (`--config PATH`, default `.kubectl-win.yaml` in the working directory):

    checks:
      disable: [windows-memory-limit-missing]
      severity: {windows-node-untainted: error}
    exclude:
      - namespace: kube-system              # every check, every object in kube-system
      - kind: DaemonSet
        name: "calico-*"                    # shell-style patterns
        checks: [windows-host-network-ignored]
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field, replace

from kubectl_win.errors import InputError
from kubectl_win.findings import SEVERITY_RANK, Finding

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

IGNORE_ANNOTATION = "kubectl-win.io/ignore"
DEFAULT_CONFIG = ".kubectl-win.yaml"
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def ignores_from_annotations(*metadatas: Any) -> frozenset[str]:
    """Check ids listed in kubectl-win.io/ignore on any of the given metadata blocks ('all' or '*' = every check)."""
    ids: set[str] = set()
    for meta in metadatas:
        if not isinstance(meta, dict):
            continue
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            value = annotations.get(IGNORE_ANNOTATION)
            if isinstance(value, str):
                ids.update(part.strip() for part in value.split(",") if part.strip())
    return frozenset(ids)


@dataclass(frozen=True, slots=True)
class Exclusion:
    namespace: str | None = None
    kind: str | None = None
    name: str | None = None
    checks: frozenset[str] = frozenset()

    def matches(self, finding: Finding) -> bool:
        ref = finding.object
        if self.checks and finding.id not in self.checks:
            return False
        for pattern, value in ((self.namespace, ref.namespace), (self.kind, ref.kind), (self.name, ref.name)):
            if pattern is not None and not fnmatch.fnmatchcase(value or "", pattern):
                return False
        return True


@dataclass(frozen=True, slots=True)
class Policy:
    disabled: frozenset[str] = frozenset()
    severity: dict[str, str] = field(default_factory=dict)
    exclusions: tuple[Exclusion, ...] = ()

    def apply(self, findings: list[Finding]) -> list[Finding]:
        kept = []
        for finding in findings:
            if finding.id in self.disabled:
                continue
            ignores = finding.object_ignores
            if ignores and (finding.id in ignores or "all" in ignores or "*" in ignores):
                continue
            if any(exclusion.matches(finding) for exclusion in self.exclusions):
                continue
            override = self.severity.get(finding.id)
            kept.append(replace(finding, severity=override) if override else finding)
        return kept


def load_policy(path: str | None) -> Policy:
    """Read the config file; a missing default file means no suppression, a missing explicit one is an error."""
    explicit = path is not None
    path = path or DEFAULT_CONFIG
    if not os.path.exists(path):
        if explicit:
            raise InputError(f"config file not found: {path}")
        return Policy()
    import yaml

    from kubectl_win.manifests.inputs import read_input_text
    from kubectl_win.manifests.yamlsafe import yaml_load

    text = read_input_text(path, "config", MAX_CONFIG_BYTES)
    try:
        data = yaml_load(text) or {}
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: nesting or an alias bomb
        raise InputError(f"cannot read config {path}: {_one_line(exc)}") from None
    return parse_policy(data, path)


def parse_policy(data: Any, origin: str = "config") -> Policy:
    if not isinstance(data, dict):
        raise InputError(f"{origin}: expected a mapping at the top level")
    checks = data.get("checks") or {}
    if not isinstance(checks, dict):
        raise InputError(f"{origin}: 'checks' must be a mapping")
    disabled = checks.get("disable") or []
    if not isinstance(disabled, list) or not all(isinstance(item, str) for item in disabled):
        raise InputError(f"{origin}: 'checks.disable' must be a list of check ids")
    severity = checks.get("severity") or {}
    if not isinstance(severity, dict):
        raise InputError(f"{origin}: 'checks.severity' must map check ids to error|warning|info")
    for check_id, level in severity.items():
        if level not in SEVERITY_RANK:
            raise InputError(f"{origin}: severity for {check_id!r} must be error, warning or info, not {level!r}")
    exclusions = []
    for index, item in enumerate(data.get("exclude") or []):
        if not isinstance(item, dict) or not set(item) <= {"namespace", "kind", "name", "checks"}:
            raise InputError(f"{origin}: exclude[{index}] must be a mapping of namespace, kind, name, checks")
        exclusions.append(
            Exclusion(
                namespace=_opt_str(item.get("namespace")),
                kind=_opt_str(item.get("kind")),
                name=_opt_str(item.get("name")),
                checks=frozenset(item.get("checks") or ()),
            )
        )
    return Policy(frozenset(disabled), dict(severity), tuple(exclusions))


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
