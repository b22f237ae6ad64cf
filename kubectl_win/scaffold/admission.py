"""`kubectl win scaffold policy`: explain's field rules as ValidatingAdmissionPolicies (CEL, no webhook).

A policy's CEL is type-checked against the schema of each kind it matches, so a Pod's spec and a
workload's pod template cannot share one expression; there is one policy per place the pod spec sits
(Pods; Deployments, StatefulSets, DaemonSets, ReplicaSets and Jobs; CronJobs), each with the same
validations over its pod spec. The optional checks (tolerations for the Windows nodes' taints,
HostProcess pods outside the listed namespaces) are policies of their own, so a team can bind them with
another action or leave them out. Pure functions: the command reads the cluster, this module only builds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubectl_win.explain.rules import Rule
from kubectl_win.scaffold import cel
from kubectl_win.scaffold.options import Taint
from kubectl_win.versions import Version, format_version, parse_version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

API_VERSION = "admissionregistration.k8s.io/v1"
NAME = "kubectl-win"
ACTIONS = ("Warn", "Audit", "Deny")
SEVERITIES = ("info", "warning", "error")
# The first minor where ValidatingAdmissionPolicy is GA (on by default): the policy loads on every cluster
# that has the API. Fields added later are only checked when --k8s-version (or the cluster) says so,
# since CEL naming a field the server's schema lacks fails to compile.
DEFAULT_VERSION = "1.30"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "admission-policy"}


@dataclass(frozen=True)
class PodSpecPlace:
    """Where the pod spec sits in the objects one policy matches."""

    suffix: str  # policy name suffix
    rules: tuple[tuple[str, tuple[str, ...]], ...]  # (API group, resources)
    spec: str  # CEL path to the pod spec
    meta: str  # CEL path to the pod metadata
    prefix: str  # the spec's field path, for messages


PLACES = (
    PodSpecPlace("pods", (("", ("pods",)),), "object.spec", "object.metadata", "spec"),
    PodSpecPlace("workloads", (("apps", ("deployments", "statefulsets", "daemonsets", "replicasets")),
                               ("batch", ("jobs",))),
                 "object.spec.template.spec", "object.spec.template.metadata", "spec.template.spec"),
    PodSpecPlace("cronjobs", (("batch", ("cronjobs",)),), "object.spec.jobTemplate.spec.template.spec",
                 "object.spec.jobTemplate.spec.template.metadata", "spec.jobTemplate.spec.template.spec"),
)


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyOptions:
    action: str = "Warn"
    k8s_version: Version = field(default_factory=lambda: parse_version(DEFAULT_VERSION))
    min_severity: str = "warning"
    namespace_selector: tuple[LabelRequirement, ...] = ()
    windows_taints: tuple[Taint, ...] = ()
    hostprocess_namespaces: tuple[str, ...] = ()
    include_system_namespaces: bool = False  # else knowledge/system_namespaces.yaml is left out


def policy_rules(version: Version, min_severity: str = "info") -> tuple[Rule, ...]:
    """The checked rules in effect at the version whose finding can reach min_severity, expressible in
    CEL and not marked as left out of the policy."""
    from kubectl_win.explain.lint import _rules_for

    floor = SEVERITIES.index(min_severity)
    return tuple(_as_admitted(rule) for rule in _rules_for(version)
                 if rule.admission is None and cel.expressible(rule)
                 and SEVERITIES.index(policy_severity(rule)) >= floor)


def _as_admitted(rule: Rule) -> Rule:
    """The rule as the policy checks it (its admission_trigger in place of the check's trigger)."""
    from dataclasses import replace

    if rule.admission_trigger is None or rule.check is None:
        return rule
    return replace(rule, check=replace(rule.check, trigger=rule.admission_trigger))


def policy_severity(rule: Rule) -> str:
    """The severity explain gives a finding of the rule on a pod that targets Windows by its placement
    (the pods the API server does not validate for Windows itself)."""
    assert rule.check is not None
    if rule.check.template == "forbidden":
        return rule.check.inferred
    if rule.check.template in ("runtime", "missing"):
        return rule.check.severity
    return "error" if rule.check.template == "pod-os-label" else "warning"


def left_out(version: Version) -> list[tuple[Rule, str]]:
    """(rule, why) for the checked rules in effect that the policy does not carry."""
    from kubectl_win.explain.lint import _rules_for

    out = []
    for rule in _rules_for(version):
        if rule.admission is not None:
            out.append((rule, rule.admission))
        elif not cel.expressible(rule):
            out.append((rule, "no CEL translation for its check template"))
    return out


def policy_objects(opts: PolicyOptions) -> list[dict[str, Any]]:
    """Every policy and its binding, in the order `kubectl apply` should create them."""
    objects: list[dict[str, Any]] = []
    rules = policy_rules(opts.k8s_version, opts.min_severity)
    for place in PLACES:
        validations = [cel.validation(rule, place.prefix).entry(place.prefix) for rule in rules]
        objects += _pair(f"{NAME}-fields-{place.suffix}", place, validations, opts,
                         "explain's Windows field rules")
    if opts.windows_taints:
        for place in PLACES:
            objects += _pair(f"{NAME}-tolerations-{place.suffix}", place,
                             [_toleration(taint, place.prefix) for taint in opts.windows_taints], opts,
                             "tolerations for the Windows nodes' taints")
    if opts.hostprocess_namespaces:
        for place in PLACES:
            objects += _pair(f"{NAME}-hostprocess-{place.suffix}", place,
                             [_hostprocess(opts.hostprocess_namespaces, place.prefix)], opts,
                             "HostProcess pods only in the listed namespaces")
    return objects


def _pair(name: str, place: PodSpecPlace, validations: list[dict[str, str]], opts: PolicyOptions,
          what: str) -> list[dict[str, Any]]:
    annotations = {f"{NAME}.io/checks": what,
                   f"{NAME}.io/kubernetes-version": format_version(opts.k8s_version)}
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(LABELS), "annotations": annotations},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                 "resources": list(resources)} for group, resources in place.rules]},
            "matchConditions": _match_conditions(place, opts),
            "variables": [_at(variable, place) for variable in cel.target_variables()],
            "validations": [_at(validation, place) for validation in validations],
        },
    }
    match: dict[str, Any] = {}
    namespaces = opts.namespace_selector + (() if opts.include_system_namespaces else (system_namespace_names(),))
    if namespaces:
        match["namespaceSelector"] = label_selector(namespaces)
    binding: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(LABELS)},
        "spec": {"policyName": name, "validationActions": [opts.action]},
    }
    if match:
        binding["spec"]["matchResources"] = match
    return [policy, binding]


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace (1.22+)


def system_namespace_names() -> LabelRequirement:
    """The binding's requirement that leaves out the platform's namespaces, by their exact names."""
    from kubectl_win.knowledge import load

    return LabelRequirement(NAMESPACE_NAME_LABEL, "NotIn", tuple(e["name"] for e in load("system_namespaces")["names"]))


def _match_conditions(place: PodSpecPlace, opts: PolicyOptions) -> list[dict[str, str]]:
    """What a request must be for the policy to judge it at all."""
    old_spec = "oldObject" + place.spec.removeprefix("object")
    conditions = [
        # An object on its way out is not worth stopping (a finalizer removal must get through).
        {"name": "not-being-deleted", "expression": "!has(object.metadata.deletionTimestamp)"},
        # A new object, or a pod spec that changed: a label or annotation put on a running pod (or a controller)
        # that predates the policy is not refused for what it already was.
        {"name": "created-or-pod-spec-changed",
         "expression": f"request.operation == 'CREATE' || {old_spec} != {place.spec}"},
    ]
    if not opts.include_system_namespaces:
        from kubectl_win.knowledge import load

        prefixes = [e["prefix"] for e in load("system_namespaces")["prefixes"]]
        conditions.append({"name": "not-in-a-system-namespace", "expression": " && ".join(
            f"!request.namespace.startsWith({cel.quote(prefix)})" for prefix in prefixes)})
    return conditions


def _at(entry: dict[str, str], place: PodSpecPlace) -> dict[str, str]:
    """The entry with cel.SPEC and cel.META spelled out as the place's paths. Written out rather than kept
    as variables: the server type-checks an expression against the matched kinds' schemas only through
    `object`, and a variable's value reads as dynamic."""
    parent, _, last = place.meta.rpartition(".")
    meta = place.meta if place.meta == "object.metadata" else f"{parent}.?{last}"
    return {key: value.replace(cel.SPEC, place.spec).replace(cel.META, meta) if key != "message" else value
            for key, value in entry.items()}


def label_selector(requirements: tuple[LabelRequirement, ...]) -> dict[str, Any]:
    labels = {r.key: r.values[0] for r in requirements if r.operator == "In" and len(r.values) == 1}
    expressions = [{"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                   for r in requirements if not (r.operator == "In" and len(r.values) == 1)]
    selector: dict[str, Any] = {}
    if labels:
        selector["matchLabels"] = labels
    if expressions:
        selector["matchExpressions"] = expressions
    return selector


def _toleration(taint: Taint, prefix: str) -> dict[str, str]:
    value = taint.value or ""
    tolerated = (f"{cel.SPEC}.?tolerations.orValue([]).exists(t, "
                 f"(t.?effect.orValue('') == '' || t.effect == {cel.quote(taint.effect)}) && "
                 f"(t.?operator.orValue('Equal') == 'Exists' ? "
                 f"(t.?key.orValue('') == '' || t.key == {cel.quote(taint.key)}) : "
                 f"(t.?key.orValue('') == {cel.quote(taint.key)} && t.?value.orValue('') == {cel.quote(value)})))")
    toleration = taint.toleration()
    shown = ", ".join(f"{k}: {v}" for k, v in toleration.items())
    text = (f"{prefix}.tolerations: a Windows pod without a toleration for the Windows nodes' taint {taint}; "
            f"the scheduler never places it on them. Add {{{shown}}} [windows-toleration-missing]")
    return {"expression": f"!({cel.WINDOWS}) || {tolerated}", "message": text,
            "messageExpression": f"{cel.OBJECT} + ': ' + {cel.quote(text)}", "reason": "Invalid"}


def _hostprocess(namespaces: tuple[str, ...], prefix: str) -> dict[str, str]:
    text = (f"{prefix}.securityContext.windowsOptions.hostProcess: HostProcess pods run as the host and may run "
            f"only in the namespaces {', '.join(namespaces)} [windows-hostprocess-namespace]")
    return {"expression": f"!({cel.HOSTPROCESS}) || request.namespace in {cel.string_list(namespaces)}",
            "message": text, "messageExpression": f"{cel.OBJECT} + ': ' + {cel.quote(text)}", "reason": "Forbidden"}


def parse_namespace_selector(text: str) -> tuple[LabelRequirement, ...]:
    """--namespace-selector in kubectl's -l syntax, as LabelSelector requirements (UsageError if unreadable)."""
    from kubectl_win.errors import UsageError
    from kubectl_win.images.selector import parse_selector

    try:
        parsed = parse_selector(text)
    except ValueError as exc:
        raise UsageError(f"--namespace-selector: {exc}") from None
    if not parsed:
        raise UsageError("--namespace-selector: empty selector")
    operators = {"=": "In", "!=": "NotIn", "in": "In", "notin": "NotIn", "exists": "Exists", "!": "DoesNotExist"}
    return tuple(LabelRequirement(key, operators[op], values) for key, op, values in parsed)


def cluster_taints(nodes: list[dict[str, Any]]) -> tuple[Taint, ...]:
    """The NoSchedule and NoExecute taints of the cluster's Windows nodes (what a Windows pod must tolerate)."""
    from kubectl_win.scaffold.placement import is_windows_node, node_taints

    found: dict[Taint, None] = {}
    for node in nodes:
        if is_windows_node(node):
            for taint in node_taints(node):
                if taint.effect in ("NoSchedule", "NoExecute"):
                    found.setdefault(taint, None)
    return tuple(found)


def policy_options(*, action: str = "Warn", k8s_version: str | None = None, min_severity: str = "warning",
                   namespace_selector: str | None = None, windows_taint: list[str] | None = None,
                   hostprocess_namespace: list[str] | None = None, nodes: list[dict[str, Any]] | None = None,
                   server_version: dict[str, Any] | None = None, include_system_namespaces: bool = False
                   ) -> PolicyOptions:
    """Validated `scaffold policy` values (the flags' texts); nodes and the /version answer when read from the
    cluster. Every bad value is a UsageError."""
    from kubectl_win.errors import UsageError
    from kubectl_win.scaffold import options as valid
    from kubectl_win.versions import NEWEST_KNOWN

    text = k8s_version
    if text is None and server_version is not None:
        text = f"{server_version.get('major', '1')}.{str(server_version.get('minor', '')).rstrip('+')}"
    try:
        version = parse_version(text or DEFAULT_VERSION)
    except ValueError as exc:
        raise UsageError(f"--k8s-version: {exc}") from None
    if not parse_version(DEFAULT_VERSION) <= version <= (NEWEST_KNOWN[0], NEWEST_KNOWN[1] + 1):
        raise UsageError(f"--k8s-version {format_version(version)}: ValidatingAdmissionPolicy v1 needs 1.30 or "
                         f"later, and kubectl-win knows up to {format_version(NEWEST_KNOWN)}")
    if action not in ACTIONS or min_severity not in SEVERITIES:
        raise UsageError(f"--action is one of {', '.join(ACTIONS)}; --min-severity one of {', '.join(SEVERITIES)}")
    taints = tuple(dict.fromkeys(valid.taint(t) for t in windows_taint or ()))
    if not taints and nodes is not None:
        taints = cluster_taints(nodes)
    namespaces = tuple(dict.fromkeys(valid.dns1123_label(ns, "--hostprocess-namespace")
                                     for ns in hostprocess_namespace or ()))
    return PolicyOptions(
        action=action,
        k8s_version=version,
        min_severity=min_severity,
        namespace_selector=parse_namespace_selector(namespace_selector) if namespace_selector else (),
        windows_taints=taints,
        hostprocess_namespaces=namespaces,
        include_system_namespaces=include_system_namespaces,
    )
