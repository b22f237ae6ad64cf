"""Check templates: the code behind the rules in field_rules.yaml (templates are code, checks are data).

Each template takes a rule and a PodContext and returns (path, severity, message, hint) tuples; a
template whose finding is enforced by someone other than the rule's `enforced_by` appends that enforcer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

from kubectl_win.explain.context import MISSING, Hit, PodContext, get
from kubectl_win.explain.hostprocess_users import hostprocess_user_problem
from kubectl_win.explain.placement import os_selector_gap
from kubectl_win.explain.rules import Rule
from kubectl_win.manifests.objects import Path, format_path, iter_containers
from kubectl_win.versions import format_version, parse_version
from kubectl_win.wellknown import OS_LABEL

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

Result = tuple[Path, str, str, str] | tuple[Path, str, str, str, "str | None"]
Template = Callable[[Rule, PodContext], Iterator[Result]]

SET_OS_HINT = "Set spec.os.name: windows so the API server validates the pod for Windows"


def triggered(trigger: str, value: Any) -> Any:
    """The part of value that fires the trigger (a truthy marker or the matching key), or None."""
    if value is MISSING or value is None:
        return None
    if trigger == "present":
        return True
    if trigger == "true":
        return True if value is True else None
    if trigger == "non-empty":
        return True if isinstance(value, list | dict | str) and len(value) > 0 else None
    if trigger.startswith("equals:"):
        return True if str(value) == trigger[len("equals:") :] else None
    if trigger.startswith("not-equals:"):
        return True if str(value) != trigger[len("not-equals:") :] else None
    if trigger.startswith("key-prefix:"):
        prefix = trigger[len("key-prefix:") :]
        if isinstance(value, dict):
            for key in value:
                if str(key).startswith(prefix):
                    return str(key)
    return None


def _fired(rule: Rule, ctx: PodContext, containers: tuple[str, ...] | None = None) -> Iterator[tuple[Hit, Path]]:
    """The hits whose value fires the rule's trigger; a key-prefix trigger points the path at the key."""
    assert rule.check is not None
    for location in rule.check.at:
        if not ctx.may_hold(location):
            continue  # every trigger needs a value, and none of this scope's objects has the key
        for hit in ctx.hits(location, containers):
            fired = triggered(rule.check.trigger, hit.value)
            if fired is None:
                continue
            if isinstance(fired, str):
                yield Hit(hit.path + (fired,), hit.value[fired]), hit.path + (fired,)
            else:
                yield hit, hit.path


def _relative(path: Path, ctx: PodContext) -> str:
    """The path relative to the pod spec, for messages: securityContext.privileged, not spec.template..."""
    base = ctx.spec_path if path[: len(ctx.spec_path)] == ctx.spec_path else ctx.metadata_path[:-1]
    rel = path[len(base) :]
    if rel and rel[0] in ("containers", "initContainers", "ephemeralContainers") and len(rel) > 2:
        rel = rel[2:]
    return format_path(rel) or format_path(path)


def _with_value(path: Path, ctx: PodContext, value: Any) -> str:
    text = _relative(path, ctx)
    if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) < 40):
        rendered = str(value).lower() if isinstance(value, bool) else str(value)
        return f"{text}: {rendered}"
    return text


def forbidden(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if not ctx.windows:
        return
    assert rule.check is not None
    enforced = ctx.explicit_windows and ctx.version >= parse_version(rule.since)
    for hit, path in _fired(rule, ctx):
        what = _with_value(path, ctx, hit.value)
        if enforced:
            yield path, "error", f"{what} cannot be set for a windows pod: {rule.reason}", rule.instead
        elif ctx.explicit_windows:
            yield (
                path,
                rule.check.inferred,
                f"{what} is ignored on Windows nodes ({rule.reason}); the API server rejects it from "
                f"Kubernetes {rule.since}, not in {format_version(ctx.version)}",
                rule.instead,
                rule.enforced_by_node,
            )
        else:
            because = f" (it targets Windows: {ctx.target.because()})" if ctx.target.reasons else ""
            yield (
                path,
                rule.check.inferred,
                f"{what} is ignored on Windows nodes: {rule.reason}",
                f"{rule.instead} {SET_OS_HINT}{because}.",
                rule.enforced_by_node,
            )


def runtime(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    assert rule.check is not None
    if not ctx.windows or (rule.check.unless == "hostprocess" and ctx.hostprocess):
        return
    for hit, path in _fired(rule, ctx, rule.check.container_lists):
        here = _with_value(path, ctx, hit.value)
        yield path, rule.check.severity, f"{rule.summary.rstrip('.')} (here: {here})", rule.instead


def missing(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    assert rule.check is not None
    if not ctx.windows:
        return
    for location in rule.check.at:
        for hit in ctx.hits(location, rule.check.container_lists):
            if hit.value is MISSING or hit.value is None:
                yield (
                    hit.path,
                    rule.check.severity,
                    f"{_relative(hit.path, ctx)} is not set: {rule.reason}",
                    rule.instead,
                )


def linux_forbidden(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if not (ctx.target.explicit and ctx.target.os == "linux") or ctx.version < parse_version(rule.since):
        return
    for _hit, path in _fired(rule, ctx):
        yield path, "error", f"{_relative(path, ctx)} cannot be set for a linux pod", rule.instead


VALID_OS = ("linux", "windows")


def os_name(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    """spec.os as the API server validates it (validateOS): a present spec.os needs a name, reported at
    spec.os.name ("Required value"); any name but linux or windows, case included, is reported at spec.os
    itself ("Unsupported value")."""
    os_field = get(ctx.spec, ("os",))
    if os_field is MISSING or os_field is None or ctx.version < parse_version(rule.since):
        return
    supported = ", ".join(f'"{v}"' for v in VALID_OS)
    if not isinstance(os_field, dict):
        yield (ctx.spec_path + ("os",), "error",
               f"{format_path(ctx.spec_path + ('os',))}: must be a mapping with a name ({supported}), "
               f"not {type(os_field).__name__}", rule.instead)
        return
    value = os_field.get("name")
    if value is None or value == "":
        path = ctx.spec_path + ("os", "name")
        yield path, "error", f"{format_path(path)}: Required value: {rule.reason}", rule.instead
    elif not isinstance(value, str) or value not in VALID_OS:
        path = ctx.spec_path + ("os",)
        shown = value if isinstance(value, str) else str(value)
        yield (path, "error", f'{format_path(path)}: Unsupported value: "{shown}": supported values: {supported}',
               rule.instead)


def pod_os_label(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if not ctx.windows:
        return
    labels = ctx.metadata.get("labels")
    value = labels.get(OS_LABEL) if isinstance(labels, dict) else None
    if value is not None and str(value) != "windows":
        path = ctx.metadata_path + ("labels", OS_LABEL)
        yield path, "error", f"pod label kubernetes.io/os={value} on a Windows pod: {rule.reason}", rule.instead


def hostprocess_consistent(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    pod_value = get(ctx.spec, ("securityContext", "windowsOptions", "hostProcess"))
    if pod_value is MISSING or pod_value is None:
        return
    for list_name, index, container in iter_containers(ctx.spec):
        value = get(container, ("securityContext", "windowsOptions", "hostProcess"))
        if value is not MISSING and value is not None and value != pod_value:
            path = ctx.spec_path + (list_name, index, "securityContext", "windowsOptions", "hostProcess")
            yield (
                path,
                "error",
                f"hostProcess is {str(value).lower()} here but {str(pod_value).lower()} for the pod: {rule.reason}",
                rule.instead,
            )


def hostprocess_all(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    flags = ctx.hostprocess_containers()
    if any(flag for *_, flag in flags) and not all(flag for *_, flag in flags):
        others = ", ".join(f"{name}[{index}]" for name, index, flag in flags if not flag)
        yield ctx.spec_path, "error", f"{others} are not HostProcess: {rule.reason}", rule.instead


def hostprocess_host_network(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if ctx.hostprocess and ctx.spec.get("hostNetwork") is not True:
        yield ctx.spec_path + ("hostNetwork",), "error", f"hostNetwork is not true: {rule.reason}", rule.instead


# runAsUserName rules from validateWindowsSecurityContextOptions.
_USER_FORBIDDEN = set('"/\\:;|=,+*?<>@[]')
_NETBIOS_FORBIDDEN = set('\\/:*?"<>|')
# Patterns are compiled on first use: most runs never need them, and compiling costs start-up time.
_PATTERNS = {
    "dns_name": (r"^(?=.{1,255}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                 r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"),
    "dns1123_subdomain": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    # Images that run as ContainerAdministrator unless told otherwise (Server Core based).
    "admin_image": r"(?i)servercore|windows/server:|windows/server$|/iis|dotnet/framework",
}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


def run_as_user_name_problem(name: str) -> str | None:
    """Why the API server would reject this runAsUserName, or None."""
    if not name:
        return "it must not be empty"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "it must not contain control characters"
    if name.count("\\") > 1:
        return "it may contain at most one backslash (DOMAIN\\USER)"
    domain, _, user = name.rpartition("\\")
    if "\\" in name:
        if not domain:
            return "the domain before the backslash is empty"
        if len(domain) >= 256:
            return "the domain is 256 characters or longer"
        netbios = len(domain) <= 15 and not domain.startswith(".") and not set(domain) & _NETBIOS_FORBIDDEN
        if not netbios and not _pattern("dns_name").match(domain):
            return f"the domain {domain!r} is neither a NetBIOS nor a DNS name"
    if not user:
        return "the user name is empty"
    if len(user) > 104:
        return "the user name is longer than 104 characters"
    if set(user) <= {".", " "}:
        return "the user name consists only of dots and spaces"
    bad = sorted(set(user) & _USER_FORBIDDEN)
    if bad:
        return f"the user name contains {' '.join(bad)}"
    return None


def run_as_user_name(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    for hit, path in _fired(rule, ctx):
        problem = run_as_user_name_problem(str(hit.value)) if isinstance(hit.value, str) else "it must be a string"
        if problem:
            yield path, "error", f"runAsUserName {hit.value!r} is invalid: {problem}", rule.instead


def gmsa_name(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    for hit, path in _fired(rule, ctx):
        value = str(hit.value)
        if len(value) > 253 or not _pattern("dns1123_subdomain").match(value):
            yield path, "error", f"gmsaCredentialSpecName {value!r} is not a DNS-1123 subdomain", rule.instead


def gmsa_spec(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    for hit, path in _fired(rule, ctx):
        value = str(hit.value)
        if not value:
            yield path, "error", "gmsaCredentialSpec is empty", rule.instead
        elif len(value.encode("utf-8")) > 64 * 1024:
            yield path, "error", "gmsaCredentialSpec is larger than 64 KiB", rule.instead


def stop_signal(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if not ctx.windows:
        return
    for hit, path in _fired(rule, ctx):
        if not rule.gate_on_by_default(ctx.version):
            # The API server drops the field: harmless for SIGTERM (what a Windows container gets anyway).
            if hit.value == "SIGTERM" or (ctx.target.explicit and not ctx.explicit_windows):
                continue
            yield (
                path,
                "warning",
                f"stopSignal {hit.value} is dropped by the API server unless the {rule.feature_gate} feature gate "
                f"is enabled (off by default in {format_version(ctx.version)}); where it is: {rule.reason}",
                rule.instead,
                None,
            )
        elif not ctx.target.explicit:
            yield path, "error", f"stopSignal {hit.value} needs spec.os.name: {rule.reason}", rule.instead
        elif ctx.explicit_windows and hit.value not in ("SIGTERM", "SIGKILL"):
            yield (
                path,
                "error",
                f"stopSignal {hit.value} is not supported on Windows (only SIGTERM and SIGKILL)",
                rule.instead,
            )




def run_as_non_root_admin(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    if not ctx.windows or ctx.hostprocess:
        return
    pod_context = ctx.spec.get("securityContext") if isinstance(ctx.spec.get("securityContext"), dict) else {}
    for list_name, index, container in iter_containers(ctx.spec):
        non_root = _effective(container, pod_context, ("runAsNonRoot",))
        if non_root is not True:
            continue
        user = _effective(container, pod_context, ("windowsOptions", "runAsUserName"))
        path = ctx.spec_path + (list_name, index, "securityContext", "runAsNonRoot")
        if isinstance(user, str) and user.lower() == "containeradministrator":
            yield (
                path,
                "error",
                f"runAsNonRoot is true but the container runs as ContainerAdministrator: {rule.reason}",
                rule.instead,
            )
        elif user in (MISSING, None) and _pattern("admin_image").search(str(container.get("image", ""))):
            yield (
                path,
                "warning",
                f"runAsNonRoot is true and {container.get('image')} runs as ContainerAdministrator by default: "
                f"{rule.reason}",
                rule.instead,
            )


def _effective(container: dict[str, Any], pod_context: dict[str, Any], path: tuple[str, ...]) -> Any:
    value = get(container, ("securityContext",) + path)
    return value if value not in (MISSING, None) else get(pod_context, path)


def os_selector(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    """explain/placement.py's rule on the pod template, with the RuntimeClasses the context knows: for a template
    that targets Windows itself (doctor judges the same templates), not one only assumed to."""
    if not ctx.target.windows:
        return
    spec = ctx.spec
    selector = spec.get("nodeSelector")
    selector = {str(k): str(v) for k, v in selector.items()} if isinstance(selector, dict) else {}
    terms = get(spec, ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                       "nodeSelectorTerms"))
    node_name, runtime_class = spec.get("nodeName"), spec.get("runtimeClassName")
    gap = os_selector_gap(selector, terms if isinstance(terms, list) else None,
                          node_name if isinstance(node_name, str) else None,
                          runtime_class if isinstance(runtime_class, str) else None,
                          ctx.runtime_classes, ctx.all_runtime_classes)
    if gap is None:
        return
    why = ctx.target.because() or "assumed Windows"
    yield (ctx.spec_path + ("nodeSelector",), gap.severity,
           f"targets Windows ({why}) but has no kubernetes.io/os=windows node selector or affinity{gap.note()}; "
           "the scheduler ignores spec.os.name, so its pods can land on Linux nodes", rule.instead)


_RUN_AS = ("securityContext", "windowsOptions", "runAsUserName")


def hostprocess_user(rule: Rule, ctx: PodContext) -> Iterator[Result]:
    """Each HostProcess container's effective runAsUserName (its own, else the pod's) against the accounts a
    HostProcess container can run as; reported where the name is set."""
    if not ctx.hostprocess:
        return
    pod_user = get(ctx.spec, _RUN_AS)
    flags = {(name, index): flag for name, index, flag in ctx.hostprocess_containers()}
    for list_name, index, container in iter_containers(ctx.spec):
        if not flags.get((list_name, index)):
            continue
        value, path = get(container, _RUN_AS), ctx.spec_path + (list_name, index) + _RUN_AS
        if value is MISSING or value is None:
            value, path = pod_user, ctx.spec_path + _RUN_AS
        if not isinstance(value, str) or run_as_user_name_problem(value):
            continue  # unset (the runtime's default), or invalid (windows-run-as-user-name-invalid says so)
        problem = hostprocess_user_problem(value)
        if problem:
            yield path, "error", f"runAsUserName {value!r} cannot run a HostProcess container: {problem}", rule.instead


TEMPLATES: dict[str, Template] = {
    "forbidden": forbidden,
    "runtime": runtime,
    "missing": missing,
    "linux-forbidden": linux_forbidden,
    "os-name": os_name,
    "pod-os-label": pod_os_label,
    "hostprocess-consistent": hostprocess_consistent,
    "hostprocess-all": hostprocess_all,
    "hostprocess-host-network": hostprocess_host_network,
    "run-as-user-name": run_as_user_name,
    "gmsa-name": gmsa_name,
    "gmsa-spec": gmsa_spec,
    "stop-signal": stop_signal,
    "run-as-non-root-admin": run_as_non_root_admin,
    "os-selector": os_selector,
    "hostprocess-user": hostprocess_user,
}
