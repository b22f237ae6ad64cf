"""explain's field rules as CEL, for the ValidatingAdmissionPolicy of `kubectl win scaffold policy`.

Each check template of kubectl_win/explain/templates.py that can be said in CEL has a translator here;
a rule whose template has none, or that CEL cannot judge the way explain does, carries `admission: WHY`
in knowledge/field_rules.yaml and the policy leaves it out (tests/test_scaffold_policy.py fails on a
checked rule that is neither). The target test (is this pod meant for Windows?) mirrors
kubectl_win/explain/target.py step by step, from the same well-known labels and knowledge lists.

CEL here reads a pod spec at SPEC and its metadata at META, placeholders the policy spells out as the pod
spec's path in each kind (kubectl_win/scaffold/admission.py), so one set of expressions serves Pods and
every workload's pod template. Optional chaining (`a.?b.orValue(x)`) keeps
every expression type-checked against the server's schema without `has()` ladders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubectl_win.explain.rules import Location, Rule
from kubectl_win.explain.templates import _PATTERNS
from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL, OS_LABELS, windows_taint_keys

SPEC = "__pod_spec__"
META = "__pod_metadata__"
WINDOWS = "variables.windows"
HOSTPROCESS = "variables.hostProcess"
OBJECT = "variables.object"


def quote(text: str) -> str:
    """A CEL string literal (single quotes; backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", " ") + "'"


def string_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(quote(item) for item in items) + "]"


# The server's type checker does not know ResourceRequirements' `limits` and `requests` (maps of quantities,
# "undefined field 'limits'" in status.typeChecking); a chain through them starts from dyn(), which the
# checker leaves alone and the evaluation reads like any other value.
_UNTYPED = (("resources", "limits"), ("resources", "requests"))


def chain(base: str, path: Sequence[str]) -> str:
    """An optional chain to path under base: object fields with `.?`, map keys with `[?'key']`."""
    out = f"dyn({base})" if tuple(path[:2]) in _UNTYPED else base
    for step in path:
        out += f".?{step}" if step.isidentifier() else f"[?{quote(step)}]"
    return out


@dataclass(frozen=True)
class Validation:
    """One entry of spec.validations: fails when `fires` is true."""

    rule_id: str
    fires: str  # CEL: true when the pod breaks the rule
    paths: str  # CEL list(string): the field paths that break it (for the message)
    message: str  # what explain says, after the paths

    def entry(self, spec_prefix: str) -> dict[str, str]:
        text = f"{self.message} [{self.rule_id}]"
        return {
            "expression": f"!({self.fires})",
            # The object's name first: kubectl prints a warning text it has printed before only once.
            "messageExpression": f"{OBJECT} + ': ' + ({self.paths}).join(', ') + ': ' + {quote(text)}",
            "message": f"{spec_prefix}: {text}",
            "reason": "Invalid",
        }


# ---- where a location's values are, and which of them fire a trigger ----

def _trigger(trigger: str, value: str) -> str:
    """CEL: the optional `value` fires the trigger (explain's templates.triggered)."""
    if trigger == "present":
        return f"{value}.hasValue()"
    if trigger == "true":
        return f"{value}.orValue(false) == true"
    if trigger == "non-empty":
        return f"({value}.hasValue() && size({value}.value()) > 0)"
    if trigger.startswith("equals:"):
        return f"{value}.orValue('') == {quote(trigger.removeprefix('equals:'))}"
    if trigger.startswith("not-equals:"):
        return f"({value}.hasValue() && {value}.value() != {quote(trigger.removeprefix('not-equals:'))})"
    if trigger.startswith("key-prefix:"):
        prefix = quote(trigger.removeprefix("key-prefix:"))
        return f"({value}.hasValue() && {value}.value().exists(k, k.startsWith({prefix})))"
    raise ValueError(f"no CEL for trigger {trigger!r}")


def _dotted(path: Sequence[str]) -> str:
    return "".join(f".{step}" if step.isidentifier() else f"['{step}']" for step in path)


def _index(list_expr: str, var: str) -> str:
    return f"string({list_expr}.indexOf({var}))"


def _container_lists(lists: Sequence[str]) -> list[str]:
    return [name for name in ("containers", "initContainers", "ephemeralContainers") if name in lists]


def location_hits(location: Location, condition: Callable[[str], str], prefix: str,
                  lists: Sequence[str]) -> tuple[str, str]:
    """(CEL bool: some place of the location fires, CEL list(string): the paths that do).

    condition maps a CEL optional (the value at the location) to a CEL bool."""
    scope, path = location.scope, location.path
    if scope == "pod":
        fires = condition(chain(SPEC, path))
        return fires, f"({fires} ? [{quote(prefix + _dotted(path))}] : [])"
    if scope == "metadata":
        fires = condition(chain(META, path))
        meta_prefix = prefix.removesuffix(".spec") + ".metadata" if prefix != "spec" else "metadata"
        return fires, f"({fires} ? [{quote(meta_prefix + _dotted(path))}] : [])"
    if scope == "volume":
        volumes = f"{SPEC}.?volumes.orValue([])"
        cond = condition(chain("v", path))
        paths = (f"{volumes}.filter(v, {cond}).map(v, {quote(prefix + '.volumes[')} + "
                 f"{_index(SPEC + '.volumes', 'v')} + {quote(']' + _dotted(path))})")
        return f"{volumes}.exists(v, {cond})", paths
    fires_parts, path_parts = [], []
    for name in _container_lists(lists):
        containers = f"{SPEC}.?{name}.orValue([])"
        head = f"{quote(prefix + '.' + name + '[')} + {_index(SPEC + '.' + name, 'c')}"
        if scope == "container":
            cond = condition(chain("c", path))
            fires_parts.append(f"{containers}.exists(c, {cond})")
            path_parts.append(f"{containers}.filter(c, {cond}).map(c, {head} + {quote(']' + _dotted(path))})")
        else:  # mount: one string per container, its mounts' paths joined (CEL has no flatten everywhere)
            cond = condition(chain("m", path))
            mounts = "c.?volumeMounts.orValue([])"
            fires_parts.append(f"{containers}.exists(c, {mounts}.exists(m, {cond}))")
            path_parts.append(f"{containers}.filter(c, {mounts}.exists(m, {cond})).map(c, {mounts}.filter(m, {cond})"
                              f".map(m, {head} + '].volumeMounts[' + {_index('c.volumeMounts', 'm')} + "
                              f"{quote(']' + _dotted(path))}).join(', '))")
    return "(" + " || ".join(fires_parts) + ")", " + ".join(path_parts)


def _fired(rule: Rule, prefix: str, condition: Callable[[str], str] | None = None) -> tuple[str, str]:
    assert rule.check is not None
    check = rule.check
    cond = condition or (lambda value: _trigger(check.trigger, value))
    parts = [location_hits(loc, cond, prefix, check.container_lists) for loc in check.at]
    return " || ".join(p[0] for p in parts), " + ".join(p[1] for p in parts)


# ---- the templates ----

def _forbidden(rule: Rule, prefix: str) -> Validation:
    fires, paths = _fired(rule, prefix)
    return Validation(rule.id, f"{WINDOWS} && ({fires})", paths,
                      f"ignored on Windows nodes: {rule.reason}. {rule.instead}")


def _runtime(rule: Rule, prefix: str) -> Validation:
    assert rule.check is not None
    fires, paths = _fired(rule, prefix)
    guard = f"{WINDOWS} && !{HOSTPROCESS}" if rule.check.unless == "hostprocess" else WINDOWS
    return Validation(rule.id, f"{guard} && ({fires})", paths, f"{rule.summary.rstrip('.')}. {rule.instead}")


def _missing(rule: Rule, prefix: str) -> Validation:
    fires, paths = _fired(rule, prefix, lambda value: f"!{value}.hasValue()")
    return Validation(rule.id, f"{WINDOWS} && ({fires})", paths, f"not set: {rule.reason}. {rule.instead}")


def _pod_os_label(rule: Rule, prefix: str) -> Validation:
    value = f"{chain(META, ('labels', OS_LABEL))}.orValue('windows')"
    meta = "metadata" if prefix == "spec" else prefix.removesuffix(".spec") + ".metadata"
    return Validation(rule.id, f"{WINDOWS} && {value} != 'windows'",
                      f"[{quote(meta + '.labels[' + OS_LABEL + ']')}]",
                      f"a pod label kubernetes.io/os other than windows on a Windows pod: {rule.reason}. "
                      f"{rule.instead}")


def _run_as_non_root_admin(rule: Rule, prefix: str) -> Validation:
    pod_non_root = f"{SPEC}.?securityContext.?runAsNonRoot.orValue(false)"
    pod_user = f"{SPEC}.?securityContext.?windowsOptions.?runAsUserName.orValue('')"
    non_root = f"c.?securityContext.?runAsNonRoot.orValue({pod_non_root})"
    user = f"c.?securityContext.?windowsOptions.?runAsUserName.orValue({pod_user})"
    admin_image = _PATTERNS["admin_image"]
    cond = (f"{non_root} && ({user}.lowerAscii() == 'containeradministrator' || "
            f"({user} == '' && c.?image.orValue('').matches({quote(admin_image)})))")
    fires, paths = [], []
    for name in _container_lists(("containers", "initContainers", "ephemeralContainers")):
        containers = f"{SPEC}.?{name}.orValue([])"
        fires.append(f"{containers}.exists(c, {cond})")
        paths.append(f"{containers}.filter(c, {cond}).map(c, {quote(prefix + '.' + name + '[')} + "
                     f"{_index(SPEC + '.' + name, 'c')} + '].securityContext.runAsNonRoot')")
    return Validation(rule.id, f"{WINDOWS} && !{HOSTPROCESS} && ({' || '.join(fires)})", " + ".join(paths),
                      f"runAsNonRoot is true and the container runs as ContainerAdministrator: {rule.reason}. "
                      f"{rule.instead}")


TRANSLATORS: dict[str, Callable[[Rule, str], Validation]] = {
    "forbidden": _forbidden,
    "runtime": _runtime,
    "missing": _missing,
    "pod-os-label": _pod_os_label,
    "run-as-non-root-admin": _run_as_non_root_admin,
}


def expressible(rule: Rule) -> bool:
    return rule.check is not None and rule.check.template in TRANSLATORS


def validation(rule: Rule, prefix: str) -> Validation:
    assert rule.check is not None
    return TRANSLATORS[rule.check.template](rule, prefix)


# ---- is the pod meant for Windows? (explain/target.py) ----

def target_variables() -> list[dict[str, str]]:
    """spec.variables after `spec` and `meta`: the OS the pod targets, decided as explain decides it."""
    selector = f"{SPEC}.?nodeSelector"
    labels = string_list(OS_LABELS)
    terms = f"{SPEC}.?affinity.?nodeAffinity.?requiredDuringSchedulingIgnoredDuringExecution.?nodeSelectorTerms"

    def affinity(os_name: str) -> str:
        by_os = (f"(e.key in {labels} && e.operator == 'In' && "
                 f"e.?values.orValue([]).exists(v, v.lowerAscii() == '{os_name}'))")
        if os_name == "windows":
            by_os += f" || (e.key == {quote(BUILD_LABEL)} && e.operator in ['In', 'Exists'])"
        return f"{terms}.orValue([]).exists(t, t.?matchExpressions.orValue([]).exists(e, {by_os}))"

    from kubectl_win.knowledge import load

    builds = load("windows_builds")
    prefixes = string_list(builds["windows_image_prefixes"])
    markers = string_list(builds["windows_image_markers"])
    taint_keys = string_list(sorted(windows_taint_keys()))

    def any_container(cond: str) -> str:
        return " || ".join(f"{SPEC}.?{name}.orValue([]).exists(c, {cond})"
                           for name in ("containers", "initContainers", "ephemeralContainers"))

    image = "c.?image.orValue('').lowerAscii()"
    hints = " || ".join([
        f"{SPEC}.?tolerations.orValue([]).exists(t, t.?key.orValue('') in {taint_keys} && "
        "(t.?operator.orValue('') == 'Exists' || t.?value.orValue('').lowerAscii().startsWith('win')))",
        f"{SPEC}.?runtimeClassName.orValue('').lowerAscii().contains('windows')",
        f"{SPEC}.?securityContext.?windowsOptions.hasValue()",
        any_container("c.?securityContext.?windowsOptions.hasValue()"),
        any_container(f"{prefixes}.exists(p, {image}.startsWith(p)) || {markers}.exists(m, {image}.contains(m))"),
    ])
    placement = (
        f"variables.selectorOS.size() > 0 ? variables.selectorOS[0] : "
        f"{selector}[?{quote(BUILD_LABEL)}].hasValue() ? 'windows' : "
        f"(variables.affinityWindows && !variables.affinityLinux) ? 'windows' : "
        f"(variables.affinityLinux && !variables.affinityWindows) ? 'linux' : ''"
    )
    hostprocess = (f"{SPEC}.?securityContext.?windowsOptions.?hostProcess.orValue(false) || "
                   + any_container("c.?securityContext.?windowsOptions.?hostProcess.orValue(false)"))
    return [
        {"name": "object", "expression": "object.kind + '/' + object.metadata.?name.orValue("
                                         "object.metadata.?generateName.orValue(''))"},
        {"name": "selectorOS",
         "expression": f"{labels}.map(l, {selector}[?l].orValue('').lowerAscii())"
                       ".filter(v, v == 'windows' || v == 'linux')"},
        {"name": "affinityWindows", "expression": affinity("windows")},
        {"name": "affinityLinux", "expression": affinity("linux")},
        {"name": "placementOS", "expression": placement},
        {"name": "windows",
         "expression": f"{SPEC}.?os.hasValue() ? {SPEC}.os.name == 'windows' : "
                       f"variables.placementOS != '' ? variables.placementOS == 'windows' : ({hints})"},
        {"name": "hostProcess", "expression": hostprocess},
    ]
