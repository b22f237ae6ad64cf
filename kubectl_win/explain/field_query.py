"""`kubectl win explain FIELD`: find the rules that speak about a field path, however the user spells it."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from kubectl_win.errors import UsageError
from kubectl_win.explain.rules import Rule, all_rules
from kubectl_win.versions import Version, format_version, in_range, parse_version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

# Leading words that name an object kind rather than a field (kubectl's names, short names and plurals).
KIND_WORDS = {
    "pod",
    "pods",
    "po",
    "podtemplate",
    "podtemplates",
    "deployment",
    "deployments",
    "deploy",
    "replicaset",
    "replicasets",
    "rs",
    "replicationcontroller",
    "replicationcontrollers",
    "rc",
    "statefulset",
    "statefulsets",
    "sts",
    "daemonset",
    "daemonsets",
    "ds",
    "job",
    "jobs",
    "cronjob",
    "cronjobs",
    "cj",
}
CONTAINER_WORDS = ("containers", "initcontainers", "ephemeralcontainers", "container")
_INDEX = re.compile(r"\[(?:\d+|\*|)\]")
_KEY = re.compile(r"\[['\"]?([^\]'\"]+)['\"]?\]")
_WORKLOAD_PREFIXES = ("spec.jobtemplate.spec.template.spec.", "spec.template.spec.", "template.spec.")


@dataclass(frozen=True, slots=True)
class FieldMatch:
    rule: Rule
    in_effect: bool  # the rule holds at the asked Kubernetes version
    exists: bool  # the field exists at that version


def normalize(path: str) -> str:
    """A canonical, case-folded spelling: 'deploy.spec.template.spec.containers[0].securityContext.privileged'
    -> 'spec.containers.securitycontext.privileged'."""
    text = _INDEX.sub("", path.strip())
    text = _KEY.sub(lambda m: "." + m.group(1), text).lower().strip(".")
    parts = text.split(".")
    if len(parts) > 1 and parts[0] in KIND_WORDS:
        parts = parts[1:]
    text = ".".join(parts)
    for prefix in _WORKLOAD_PREFIXES:
        if text.startswith(prefix):
            text = "spec." + text[len(prefix) :]
            break
    if not text.startswith(("spec.", "metadata.")) and text not in ("spec", "metadata"):
        text = "spec." + text
    for word in CONTAINER_WORDS:
        if text.startswith(f"spec.{word}.") or text == f"spec.{word}":
            text = "spec.containers" + text[len(f"spec.{word}") :]
            break
    return text


def find_fields(query: str, version: Version) -> list[FieldMatch]:
    """Rules about the field (exact path, then containing path, then by check id); UsageError if none."""
    rules = all_rules()
    wanted = normalize(query)
    by_id = [rule for rule in rules if rule.id == query.strip().lower()]
    exact = [rule for rule in rules if wanted in {normalize(field) for field in rule.fields}]
    if not exact:
        exact = [rule for rule in rules if any(normalize(field).startswith(wanted + ".") for field in rule.fields)]
    if not exact:  # a bare or partial name: 'privileged', 'securityContext.runAsUser'
        tail = "." + wanted.removeprefix("spec.")
        exact = [rule for rule in rules if any(normalize(field).endswith(tail) for field in rule.fields)]
    matches = by_id or exact
    if not matches:
        raise UsageError(_unknown(query, rules))
    return [
        FieldMatch(
            rule,
            in_range(version, rule.since, rule.until),
            rule.field_since is None or version >= parse_version(rule.field_since),
        )
        for rule in matches
    ]


def _unknown(query: str, rules: tuple[Rule, ...]) -> str:
    spellings: dict[str, str] = {}
    for rule in rules:
        spellings[rule.id] = rule.id
        for field in rule.fields:
            spellings[normalize(field)] = field
    wanted = normalize(query)
    close = difflib.get_close_matches(wanted, list(spellings), n=3, cutoff=0.6)
    if not close:  # compare the last segment too: 'privilegd' -> ...securityContext.privileged
        leaf = wanted.rsplit(".", 1)[-1]
        close = [key for key in spellings if difflib.SequenceMatcher(None, leaf, key.rsplit(".", 1)[-1]).ratio() > 0.8][
            :3
        ]
    hint = (
        f"; did you mean {', '.join(spellings[c] for c in close)}?"
        if close
        else " (run 'kubectl win explain --list' for every field kubectl-win knows)"
    )
    return f"no Windows rule for field {query!r}{hint}"


def field_payload(match: FieldMatch, version: Version) -> dict[str, Any]:
    rule = match.rule
    check = rule.check
    return {
        "id": rule.id,
        "fields": list(rule.fields),
        "status": rule.status,
        "summary": rule.summary,
        "reason": rule.reason,
        "instead": rule.instead,
        "since": rule.since,
        "fieldSince": rule.field_since,
        "until": rule.until,
        "k8sVersion": format_version(version),
        "inEffect": match.in_effect and match.exists,
        "checked": check is not None,
        "sources": list(rule.sources),
    }


def status_line(match: FieldMatch, version: Version) -> str:
    rule = match.rule
    v = format_version(version)
    if not match.exists:
        return f"{rule.status} (the field does not exist before Kubernetes {rule.field_since}; you asked about {v})"
    if rule.until and not match.in_effect and version >= parse_version(rule.until):
        return f"{rule.status} until Kubernetes {rule.until} (no longer in {v})"
    if not match.in_effect:
        return f"{rule.status} from Kubernetes {rule.since} (not yet in {v})"
    if rule.status == "rejected":
        return (
            f"rejected by the API server when spec.os.name=windows (since {rule.since}); "
            "ignored on Windows nodes when spec.os is unset"
        )
    return f"{rule.status} (since Kubernetes {rule.since})"
