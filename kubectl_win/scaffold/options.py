"""Validation of every value a user gives scaffold: each check returns the clean value or raises UsageError."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kubectl_win.builds import Build, resolve_build
from kubectl_win.errors import UsageError

WORKLOAD_KINDS = ("deployment", "statefulset", "daemonset", "job", "cronjob")
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_CPU = "500m"
DEFAULT_MEMORY = "1Gi"
# A HostProcess node agent (a log shipper, an exporter, a CNI or CSI helper): small, and never CPU-capped.
HOSTPROCESS_CPU = "100m"
HOSTPROCESS_MEMORY = "256Mi"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# The image reference grammar of distribution/reference (domain, path components, tag, digest).
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*"
    r"(?::[\w][\w.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
)
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Taint:
    key: str
    value: str | None
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value is not None else f"{self.key}:{self.effect}"

    def toleration(self) -> dict[str, str]:
        if self.value is None:
            return {"key": self.key, "operator": "Exists", "effect": self.effect}
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


@dataclass(frozen=True)
class PlacementOptions:
    build: Build | None = None
    taints: tuple[Taint, ...] = ()  # explicit --taint values; empty means the default scheme
    from_cluster: bool = False


@dataclass(frozen=True)
class WorkloadOptions:
    kind: str
    name: str
    image: str
    namespace: str | None = None
    ports: tuple[int, ...] = ()
    replicas: int = 1
    cpu: str = DEFAULT_CPU
    memory: str = DEFAULT_MEMORY
    placement: PlacementOptions = field(default_factory=PlacementOptions)
    runtime_class: str | None = None
    gmsa: str | None = None
    run_as_user_name: str | None = None
    service: str | None = None
    hostprocess: bool = False
    schedule: str = "0 * * * *"


def dns1123_label(value: str, what: str) -> str:
    if len(value) > 63 or not _DNS1123_LABEL.match(value):
        raise UsageError(f"invalid {what} {value!r}: must be a DNS-1123 label (lowercase letters, digits and '-', "
                         "starting and ending with a letter or digit, at most 63 characters)")
    return value


def dns1123_subdomain(value: str, what: str) -> str:
    if len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
        raise UsageError(f"invalid {what} {value!r}: must be a DNS-1123 subdomain (lowercase letters, digits, "
                         "'-' and '.', at most 253 characters)")
    return value


def workload_name(value: str, kind: str, service: bool = False) -> str:
    # Pod names get a hash suffix, and CronJob names feed Job names (52 characters leave room for it).
    dns1123_label(value, "name")
    if kind == "cronjob" and len(value) > 52:
        raise UsageError(f"invalid name {value!r}: a CronJob name must be at most 52 characters")
    if service and not value[0].isalpha():
        raise UsageError(f"invalid name {value!r}: a Service name must start with a letter (DNS-1035 label)")
    return value


def image_reference(value: str) -> str:
    name = value.partition("@")[0]
    if ":" in name.rpartition("/")[2]:
        name = name.rpartition(":")[0]  # drop the tag; the 255 limit is on the repository name
    if len(name) > 255 or not _IMAGE.match(value):
        raise UsageError(f"invalid image reference {value!r} (expected e.g. "
                         "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022)")
    return value


def quantity(value: str, what: str) -> str:
    """A positive Kubernetes quantity; memory may not use millis."""
    from kubectl_win.doctor.quantity import parse_quantity

    parsed = parse_quantity(value)
    if parsed is None:
        example = "500m or 2" if what == "cpu" else "512Mi or 2Gi"
        raise UsageError(f"invalid {what} quantity {value!r} (expected e.g. {example})")
    if parsed[0] <= 0:
        raise UsageError(f"invalid {what} quantity {value!r}: must be greater than zero")
    if what == "memory" and parsed[1] == "m":
        raise UsageError(f"invalid memory quantity {value!r}: 'm' means millibytes; use Mi for mebibytes")
    return value.strip()


def build_name(value: str) -> Build:
    try:
        return resolve_build(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def taint(value: str) -> Taint:
    """kubectl's taint syntax: key=value:Effect or key:Effect."""
    spec, sep, effect = value.rpartition(":")
    if not sep or effect not in TAINT_EFFECTS:
        raise UsageError(f"invalid taint {value!r} (expected key=value:Effect with Effect one of "
                         f"{', '.join(TAINT_EFFECTS)})")
    key, eq, taint_value = spec.partition("=")
    _qualified_key(key, value)
    if eq and (len(taint_value) > 63 or not _LABEL_VALUE.match(taint_value)):
        raise UsageError(f"invalid taint {value!r}: the value must be a label value")
    return Taint(key, taint_value if eq else None, effect)


def _qualified_key(key: str, whole: str) -> None:
    if not _is_qualified_key(key):
        raise UsageError(f"invalid taint {whole!r}: the key must be a qualified name like os or example.com/os")


def _is_qualified_key(key: str) -> bool:
    """Kubernetes' qualified name: NAME or PREFIX/NAME (a DNS subdomain of at most 253 characters, a name of 63)."""
    prefix, slash, name = key.rpartition("/")
    ok = bool(name) and len(name) <= 63 and _QUALIFIED_NAME.match(name) is not None
    return ok and (not slash or (len(prefix) <= 253 and _DNS1123_SUBDOMAIN.match(prefix) is not None))


def label(value: str, what: str = "--label") -> tuple[str, str]:
    """KEY=VALUE with Kubernetes' label syntax (apimachinery validation: a qualified name, and a value of at most
    63 characters that may be empty)."""
    key, eq, label_value = value.partition("=")
    if not eq or not _is_qualified_key(key) or len(label_value) > 63 or not _LABEL_VALUE.match(label_value):
        raise UsageError(f"invalid {what} {value!r}: expected KEY=VALUE, a key like release or example.com/team and "
                         "a value of at most 63 letters, digits, '-', '_' or '.' (starting and ending with a letter "
                         "or digit)")
    return key, label_value


def port(value: int) -> int:
    if not 1 <= value <= 65535:
        raise UsageError(f"invalid port {value}: must be between 1 and 65535")
    return value


def replicas(value: int) -> int:
    if value < 0:
        raise UsageError(f"invalid replicas {value}: must be 0 or more")
    return value


def run_as_user_name(value: str, hostprocess: bool) -> str:
    """The API server's runAsUserName rules and, for a HostProcess pod, the accounts it can run as: explain's
    rules (windows-run-as-user-name-invalid, windows-hostprocess-user), so scaffold never writes what explain
    flags."""
    from kubectl_win.explain.hostprocess_users import canonical, hostprocess_user_problem
    from kubectl_win.explain.templates import run_as_user_name_problem

    shown = f"'{value}'" if value.isprintable() else repr(value)  # repr() doubles backslashes
    problem = run_as_user_name_problem(value)
    if problem:
        raise UsageError(f"invalid run-as-user-name {shown}: {problem} (expected USER or DOMAIN\\USER)")
    if hostprocess:
        problem = hostprocess_user_problem(value)
        if problem:
            raise UsageError(f"invalid run-as-user-name {shown} for a HostProcess pod: {problem}")
        return canonical(value) or value
    return value


def cron_schedule(value: str) -> str:
    fields = value.split()
    if not (fields and (len(fields) == 5 or (len(fields) == 1 and value.startswith("@")))):
        raise UsageError(f"invalid schedule {value!r}: expected five cron fields, e.g. '0 * * * *'")
    return value
