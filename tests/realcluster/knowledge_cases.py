"""Pod specs that exercise each of explain's checked field rules, for comparison with a real API server.

Each case is a (label, spec, metadata) triple built from a minimal pod; `wrap` puts the same pod into a
Pod, a Deployment or a CronJob, and `with_os` sets spec.os.name (windows, linux, or unset). A case is
chosen so that the only thing a server could reject is the rule's field: everything else is valid on
every OS, so a rejection that explain does not predict (or the reverse) is a disagreement.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from kubectl_win.explain.rules import Rule, checks

IMAGE = "mcr.microsoft.com/windows/nanoserver:ltsc2022"
Case = tuple[str, dict[str, Any], dict[str, Any]]
OS_VARIANTS = ("windows", "linux", "unset")
KINDS = ("Pod", "Deployment", "CronJob")


def base_spec() -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": IMAGE}]}


# Values that fire a rule's trigger, and (where there is one) a value that must not: keyed by the path
# inside the rule's scope. Each list's items are tried one by one.
VALUES: dict[tuple[str, ...], list[Any]] = {
    ("hostPID",): [True, False],
    ("hostIPC",): [True, False],
    ("shareProcessNamespace",): [False, True],
    ("hostUsers",): [True],
    ("resources",): [{"limits": {"cpu": "1", "memory": "1Gi"}}],
    ("securityContext", "sysctls"): [[{"name": "kernel.shm_rmid_forced", "value": "0"}], []],
    ("securityContext", "fsGroup"): [2000],
    ("securityContext", "fsGroupChangePolicy"): ["OnRootMismatch"],
    ("securityContext", "supplementalGroups"): [[2000], []],
    ("securityContext", "supplementalGroupsPolicy"): ["Strict"],
    ("securityContext", "seLinuxChangePolicy"): ["Recursive"],  # MountOption needs SELinuxMount (off in 1.34)
    ("securityContext", "runAsUser"): [1000],
    ("securityContext", "runAsGroup"): [1000],
    ("securityContext", "seLinuxOptions"): [{"level": "s0:c123,c456"}],
    ("securityContext", "seccompProfile"): [{"type": "RuntimeDefault"}],
    ("securityContext", "appArmorProfile"): [{"type": "RuntimeDefault"}],
    ("securityContext", "privileged"): [False, True],
    ("securityContext", "allowPrivilegeEscalation"): [False],
    ("securityContext", "capabilities"): [{"drop": ["ALL"]}],
    ("securityContext", "readOnlyRootFilesystem"): [True, False],
    ("securityContext", "procMount"): ["Default"],
    ("securityContext", "windowsOptions"): [{"runAsUserName": "ContainerUser"}],
    ("hostNetwork",): [True],
    ("dnsPolicy",): ["ClusterFirstWithHostNet"],
    ("emptyDir", "medium"): ["Memory"],
    ("volumeDevices",): [[{"name": "v", "devicePath": "/dev/xvdb"}]],
    ("mountPropagation",): ["HostToContainer"],
    ("terminationMessagePath",): ["/tmp/message"],
    ("nfs",): [{"server": "nfs.example.invalid", "path": "/export"}],
    ("secret", "defaultMode"): [0o440],
    ("configMap", "defaultMode"): [0o440],
    ("projected", "defaultMode"): [0o440],
    ("downwardAPI", "defaultMode"): [0o440],
    ("resizePolicy",): [[{"resourceName": "cpu", "restartPolicy": "NotRequired"}]],
    ("emptyDir", "mode"): [0o700],
    ("bindMountOptions",): [["ro"]],
    ("resources", "limits", "memory"): ["256Mi"],
    # Rules no API server enforces (the scheduler ignores spec.os; the runtime refuses a HostProcess user):
    # the server accepts every case, and explain predicts no rejection.
    ("nodeSelector",): [{"disktype": "ssd"}, {"kubernetes.io/os": "windows"}],
    ("securityContext", "windowsOptions", "runAsUserName"): ["ContainerUser", "NT AUTHORITY\\SYSTEM"],
}
# Mapping keys for key-prefix triggers (annotations).
KEYS = {
    # Huge pages need a cpu or memory request beside them; requests default to the limits.
    "hugepages-": ("hugepages-2Mi", "2Mi"),
    "container.apparmor.security.beta.kubernetes.io/": ("container.apparmor.security.beta.kubernetes.io/c",
                                                        "runtime/default"),
    "experimental.windows.kubernetes.io/isolation-type": ("experimental.windows.kubernetes.io/isolation-type",
                                                          "hyperv"),
}


def _set(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for step in path[:-1]:
        target = target.setdefault(step, {})
    target[path[-1]] = value


def _placed(scope: str, path: tuple[str, ...], value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    spec, meta = base_spec(), {}
    container = spec["containers"][0]
    if scope == "pod":
        _set(spec, path, value)
    elif scope == "container":
        _set(container, path, value)
        if path == ("volumeDevices",):
            spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]
    elif scope == "volume":
        volume: dict[str, Any] = {"name": "v"}
        _set(volume, path, value)
        if "secret" in volume:
            volume["secret"]["secretName"] = "s"
        if "configMap" in volume:
            volume["configMap"]["name"] = "c"
        if "projected" in volume:
            volume["projected"]["sources"] = []
        spec["volumes"] = [volume]
    elif scope == "mount":
        mount: dict[str, Any] = {"name": "v", "mountPath": "/data"}
        _set(mount, path, value)
        container["volumeMounts"] = [mount]
        spec["volumes"] = [{"name": "v", "emptyDir": {}}]
    elif scope == "metadata":
        _set(meta, path, value)
    return spec, meta


def _generic(rule: Rule) -> Iterator[Case]:
    assert rule.check is not None
    for location in rule.check.at:
        trigger = rule.check.trigger
        if trigger.startswith("key-prefix:"):
            key, value = KEYS[trigger.removeprefix("key-prefix:")]
            mapping = {key: value, "memory": "128Mi"} if key.startswith("hugepages-") else {key: value}
            spec, meta = _placed(location.scope, location.path, mapping)
            if location.path == ("resources", "requests") and key.startswith("hugepages-"):
                spec["containers"][0]["resources"]["limits"] = dict(mapping)  # huge pages need limits = requests
            yield f"{location.scope}:{'.'.join(location.path)}[{key}]", spec, meta
            continue
        values = VALUES.get(location.path)
        if values is None:
            raise KeyError(f"no test value for {rule.id} at {location.path}: add one to VALUES")
        for value in values:
            spec, meta = _placed(location.scope, location.path, value)
            yield f"{location.scope}:{'.'.join(location.path)}={value!r}", spec, meta


def _host_process(pod: bool = True, host_network: bool = True) -> dict[str, Any]:
    """A HostProcess pod (pod-level flag) with hostNetwork, or parts of one."""
    spec = base_spec()
    if pod:
        spec["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                      "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    if host_network:
        spec["hostNetwork"] = True
    return spec


def _container_option(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec = base_spec()
    _set(spec["containers"][0], path, value)
    return spec


def _pod_option(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec = base_spec()
    _set(spec, path, value)
    return spec


def _hostprocess_consistent(rule: Rule) -> Iterator[Case]:
    spec = _host_process()
    spec["containers"][0]["securityContext"] = {"windowsOptions": {"hostProcess": False}}
    yield "pod true, container false", spec, {}
    spec = _host_process()
    spec["containers"][0]["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    yield "pod true, container true", spec, {}


def _hostprocess_all(rule: Rule) -> Iterator[Case]:
    spec = _host_process(pod=False)
    spec["containers"][0]["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                                   "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    spec["containers"].append({"name": "d", "image": IMAGE})
    yield "one of two containers", spec, {}
    spec = _host_process(pod=False)
    for name in ("c", "d"):
        if name == "d":
            spec["containers"].append({"name": "d", "image": IMAGE})
        spec["containers"][-1]["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                                        "runAsUserName": "NT AUTHORITY\\SYSTEM"}}
    yield "both containers", spec, {}


def _hostprocess_host_network(rule: Rule) -> Iterator[Case]:
    yield "hostNetwork unset", _host_process(host_network=False), {}
    spec = _host_process(host_network=False)
    spec["hostNetwork"] = False
    yield "hostNetwork false", spec, {}
    yield "hostNetwork true", _host_process(), {}


USER_NAMES = ["ContainerUser", "NT AUTHORITY\\NETWORK SERVICE", "CONTOSO\\svc-web", "contoso.example.com\\web",
              "", "a\\b\\c", "\\user", "CONTOSO\\", "bad:user", "bad@user", "..", "x" * 105, "D" * 256 + "\\user",
              "tab\tuser"]


def _run_as_user_name(rule: Rule) -> Iterator[Case]:
    for name in USER_NAMES:
        yield f"pod {name[:20]!r}", _pod_option(("securityContext", "windowsOptions", "runAsUserName"), name), {}
    for name in ("ContainerAdministrator", "a\\b\\c"):
        yield (f"container {name!r}", _container_option(("securityContext", "windowsOptions", "runAsUserName"),
                                                        name), {})


def _gmsa_name(rule: Rule) -> Iterator[Case]:
    for name in ("webapp1", "Not_Valid", "a" * 254):
        yield f"pod {name[:20]!r}", _pod_option(("securityContext", "windowsOptions", "gmsaCredentialSpecName"),
                                                name), {}
    yield ("container 'UPPER'", _container_option(("securityContext", "windowsOptions", "gmsaCredentialSpecName"),
                                                  "UPPER"), {})


def _gmsa_spec(rule: Rule) -> Iterator[Case]:
    for label, value in (("'{}'", "{}"), ("empty", ""), ("65 KiB", "x" * (65 * 1024))):
        yield f"pod {label}", _pod_option(("securityContext", "windowsOptions", "gmsaCredentialSpec"), value), {}
    yield "container empty", _container_option(("securityContext", "windowsOptions", "gmsaCredentialSpec"), ""), {}


def _stop_signal(rule: Rule) -> Iterator[Case]:
    for signal in ("SIGTERM", "SIGKILL", "SIGUSR1"):
        yield f"stopSignal {signal}", _container_option(("lifecycle", "stopSignal"), signal), {}


def _os_name(rule: Rule) -> Iterator[Case]:
    # The os variants add windows, linux and unset; these are the values the API server must refuse.
    for value in ("Windows", "darwin", ""):
        yield f"os.name {value!r}", _pod_option(("os",), {"name": value}), {}
    yield "os: {}", _pod_option(("os",), {}), {}


def _pod_os_label(rule: Rule) -> Iterator[Case]:
    for value in ("linux", "windows"):
        yield f"label kubernetes.io/os={value}", base_spec(), {"labels": {"kubernetes.io/os": value}}


def _run_as_non_root_admin(rule: Rule) -> Iterator[Case]:
    for user in ("ContainerAdministrator", "ContainerUser"):
        spec = _container_option(("securityContext",), {"runAsNonRoot": True,
                                                         "windowsOptions": {"runAsUserName": user}})
        yield f"runAsNonRoot with {user}", spec, {}


SPECIAL: dict[str, Callable[[Rule], Iterator[Case]]] = {
    "hostprocess-consistent": _hostprocess_consistent,
    "hostprocess-all": _hostprocess_all,
    "hostprocess-host-network": _hostprocess_host_network,
    "run-as-user-name": _run_as_user_name,
    "gmsa-name": _gmsa_name,
    "gmsa-spec": _gmsa_spec,
    "stop-signal": _stop_signal,
    "os-name": _os_name,
    "pod-os-label": _pod_os_label,
    "run-as-non-root-admin": _run_as_non_root_admin,
}


def cases(rule: Rule) -> list[Case]:
    assert rule.check is not None
    make = SPECIAL.get(rule.check.template, _generic)
    return list(make(rule))


def checked_rules() -> list[Rule]:
    return list(checks())


def with_os(spec: dict[str, Any], os_name: str) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    if os_name != "unset" and "os" not in spec:
        spec["os"] = {"name": os_name}
    return spec


def wrap(kind: str, spec: dict[str, Any], meta: dict[str, Any], name: str = "knowledge") -> dict[str, Any]:
    """The pod spec as a Pod, a Deployment's template or a CronJob's job template."""
    labels = {"app": name, **meta.get("labels", {})}
    pod_meta = {**copy.deepcopy(meta), "labels": labels}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **pod_meta}, "spec": spec}
    if kind == "Deployment":
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": pod_meta, "spec": spec}}}
    job_spec = {**spec, "restartPolicy": "OnFailure"}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": "*/5 * * * *",
                     "jobTemplate": {"spec": {"template": {"metadata": pod_meta, "spec": job_spec}}}}}


COLLECTIONS = {"Pod": "/api/v1/namespaces/{ns}/pods", "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
               "CronJob": "/apis/batch/v1/namespaces/{ns}/cronjobs"}
