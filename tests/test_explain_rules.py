"""The Windows field rules, family by family, with the API server's presence semantics."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_win.explain import infer_target, lint_object
from kubectl_win.explain.rules import check_ids
from kubectl_win.explain.templates import run_as_user_name_problem

LIMITS = {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}}


def pod(
    spec: dict[str, Any] | None = None,
    *,
    os: str | None = "windows",
    container: dict[str, Any] | None = None,
    selector: bool | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Pod with one well-formed Windows container, plus the given spec and container fields; a pod for Windows
    (os windows) selects Windows nodes unless `selector` is False."""
    body: dict[str, Any] = {
        "containers": [
            {"name": "app", "image": "example.com/app:1", "resources": copy.deepcopy(LIMITS), **(container or {})}
        ]
    }
    if os:
        body["os"] = {"name": os}
    if selector or (selector is None and os == "windows"):
        body["nodeSelector"] = {"kubernetes.io/os": "windows"}
    body.update(spec or {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", **(metadata or {})},
        "spec": body,
    }


def found(obj: dict[str, Any], **kwargs: Any) -> list[tuple[str, str, str]]:
    return [(f.id, f.severity, f.path) for f in lint_object(obj, **kwargs)]


def ids(obj: dict[str, Any], **kwargs: Any) -> set[str]:
    return {f.id for f in lint_object(obj, **kwargs)}


# One firing case per check id: (spec fields, container fields, os, selector, metadata, version).
FIRING: dict[str, dict[str, Any]] = {
    "windows-host-pid": {"spec": {"hostPID": True}},
    "windows-host-ipc": {"spec": {"hostIPC": True}},
    "windows-share-process-namespace": {"spec": {"shareProcessNamespace": False}},
    "windows-host-users": {"spec": {"hostUsers": True}},
    "windows-pod-level-resources": {"spec": {"resources": {"limits": {"memory": "1Gi"}}}},
    "windows-sysctls": {"spec": {"securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]}}},
    "windows-fs-group": {"spec": {"securityContext": {"fsGroup": 2000}}},
    "windows-fs-group-change-policy": {"spec": {"securityContext": {"fsGroupChangePolicy": "OnRootMismatch"}}},
    "windows-supplemental-groups": {"spec": {"securityContext": {"supplementalGroups": []}}},
    "windows-supplemental-groups-policy": {"spec": {"securityContext": {"supplementalGroupsPolicy": "Strict"}}},
    "windows-selinux-change-policy": {"spec": {"securityContext": {"seLinuxChangePolicy": "Recursive"}}},
    "windows-run-as-user": {"container": {"securityContext": {"runAsUser": 0}}},
    "windows-run-as-group": {"spec": {"securityContext": {"runAsGroup": 0}}},
    "windows-selinux-options": {"container": {"securityContext": {"seLinuxOptions": {}}}},
    "windows-seccomp-profile": {"spec": {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}},
    "windows-apparmor-profile": {"container": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}},
    "windows-privileged": {"container": {"securityContext": {"privileged": False}}},
    "windows-allow-privilege-escalation": {"container": {"securityContext": {"allowPrivilegeEscalation": False}}},
    "windows-capabilities": {"container": {"securityContext": {"capabilities": {}}}},
    "windows-read-only-root-filesystem": {"container": {"securityContext": {"readOnlyRootFilesystem": False}}},
    "windows-proc-mount": {"container": {"securityContext": {"procMount": "Default"}}},
    "windows-options-on-linux-pod": {"os": "linux", "spec": {"securityContext": {"windowsOptions": {}}}},
    "windows-os-name-invalid": {"os": "Windows"},
    "windows-pod-os-label": {"metadata": {"labels": {"kubernetes.io/os": "linux"}}},
    "windows-hostprocess-inconsistent": {
        "spec": {"hostNetwork": True, "securityContext": {"windowsOptions": {"hostProcess": True}}},
        "container": {"securityContext": {"windowsOptions": {"hostProcess": False}}},
    },
    "windows-hostprocess-not-all-containers": {
        "spec": {"hostNetwork": True, "initContainers": [{"name": "init", "image": "x", "resources": LIMITS}]},
        "container": {"securityContext": {"windowsOptions": {"hostProcess": True}}},
    },
    "windows-hostprocess-host-network": {"spec": {"securityContext": {"windowsOptions": {"hostProcess": True}}}},
    "windows-run-as-user-name-invalid": {
        "container": {"securityContext": {"windowsOptions": {"runAsUserName": "a\\b\\c"}}}
    },
    "windows-gmsa-name-invalid": {
        "spec": {"securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "gmsa-Webapp1"}}}
    },
    "windows-gmsa-spec-invalid": {"spec": {"securityContext": {"windowsOptions": {"gmsaCredentialSpec": ""}}}},
    "windows-stop-signal": {"container": {"lifecycle": {"stopSignal": "SIGINT"}}},
    "windows-run-as-non-root-administrator": {
        "container": {
            "securityContext": {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": "ContainerAdministrator"}}
        }
    },
    "windows-host-network-ignored": {"spec": {"hostNetwork": True}},
    "windows-dns-cluster-first-with-host-net": {"spec": {"dnsPolicy": "ClusterFirstWithHostNet"}},
    "windows-emptydir-memory": {"spec": {"volumes": [{"name": "v", "emptyDir": {"medium": "Memory"}}]}},
    "windows-hugepages": {"container": {"resources": {"limits": {"memory": "1Gi", "hugepages-2Mi": "100Mi"}}}},
    "windows-volume-devices": {"container": {"volumeDevices": [{"name": "v", "devicePath": "/dev/xvda"}]}},
    "windows-mount-propagation": {
        "container": {"volumeMounts": [{"name": "v", "mountPath": "C:\\d", "mountPropagation": "Bidirectional"}]}
    },
    "windows-termination-message-path": {"container": {"terminationMessagePath": "C:\\logs\\term.log"}},
    "windows-nfs-volume": {"spec": {"volumes": [{"name": "v", "nfs": {"server": "s", "path": "/x"}}]}},
    "windows-volume-default-mode": {
        "spec": {"volumes": [{"name": "v", "secret": {"secretName": "s", "defaultMode": 420}}]}
    },
    "windows-resize-policy": {"container": {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]}},
    "windows-apparmor-annotation": {
        "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}}
    },
    "windows-hyperv-isolation": {
        "metadata": {"annotations": {"experimental.windows.kubernetes.io/isolation-type": "hyperv"}}
    },
    "windows-emptydir-mode": {"spec": {"volumes": [{"name": "v", "emptyDir": {"mode": "0700"}}]}, "version": (1, 38)},
    "windows-bind-mount-options": {
        "container": {"volumeMounts": [{"name": "v", "mountPath": "C:\\d", "bindMountOptions": ["ro"]}]},
        "version": (1, 38),
    },
    "windows-memory-limit-missing": {"container": {"resources": {"limits": {"cpu": "1"}}}},
    "windows-workload-no-os-selector": {"selector": False},
    "windows-hostprocess-user": {
        "spec": {"hostNetwork": True,
                 "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "ContainerUser"}}},
    },
}


def _firing_pod(case: dict[str, Any]) -> dict[str, Any]:
    return pod(
        case.get("spec"), os=case.get("os", "windows"), container=case.get("container"), metadata=case.get("metadata"),
        selector=case.get("selector"),
    )


def test_every_check_has_a_firing_case() -> None:
    assert set(FIRING) == set(check_ids())


@pytest.mark.parametrize("check_id", sorted(FIRING))
def test_each_check_fires_alone(check_id: str) -> None:
    case = FIRING[check_id]
    assert ids(_firing_pod(case), k8s_version=case.get("version", (1, 37))) == {check_id}


def test_a_clean_windows_pod_has_no_findings() -> None:
    assert found(pod()) == []
    assert found(pod(os=None, selector=True)) == []


@pytest.mark.parametrize(
    "fields",
    [
        {"hostPID": False},
        {"hostIPC": False},
        {"securityContext": {"sysctls": []}},
        {"securityContext": {"runAsUser": None}},
        {"securityContext": {"runAsNonRoot": True}},
        {"volumes": [{"name": "v", "emptyDir": {"medium": ""}}]},
        {"dnsPolicy": "ClusterFirst"},
    ],
)
def test_values_the_api_server_accepts_are_quiet(fields: dict[str, Any]) -> None:
    assert found(pod(fields)) == []


@pytest.mark.parametrize(
    "container",
    [
        {"securityContext": {"runAsNonRoot": True, "windowsOptions": {"runAsUserName": "ContainerUser"}}},
        {"terminationMessagePath": "/dev/termination-log"},
        {"volumeMounts": [{"name": "v", "mountPath": "C:\\d", "mountPropagation": "None"}]},
        {"lifecycle": {"stopSignal": "SIGTERM"}},
        {"securityContext": {"windowsOptions": {"runAsUserName": "NT AUTHORITY\\SYSTEM"}}},
    ],
)
def test_container_values_windows_accepts_are_quiet(container: dict[str, Any]) -> None:
    assert found(pod(container=container)) == []


def test_explicit_windows_is_an_error_with_the_api_server_wording() -> None:
    [finding] = lint_object(pod(container={"securityContext": {"privileged": False}}))
    assert (finding.severity, finding.path) == ("error", "spec.containers[0].securityContext.privileged")
    assert "cannot be set for a windows pod" in finding.message
    assert "HostProcess" in finding.fix.note


def test_targeting_windows_without_os_is_a_warning_naming_why() -> None:
    [finding] = lint_object(pod(os=None, selector=True, container={"securityContext": {"privileged": True}}))
    assert finding.severity == "warning"
    assert "ignored on Windows nodes" in finding.message
    assert "spec.os.name: windows" in finding.fix.note
    assert "nodeSelector kubernetes.io/os=windows" in finding.fix.note


def test_pods_for_linux_or_nowhere_are_not_reported_unless_assumed() -> None:
    linux = pod(
        {"nodeSelector": {"kubernetes.io/os": "linux"}}, os=None, container={"securityContext": {"privileged": True}}
    )
    nowhere = pod(os=None, container={"securityContext": {"privileged": True}})
    assert found(linux) == [] and found(nowhere) == []
    assert ids(nowhere, assume_windows=True) == {"windows-privileged"}
    assert found(pod(os="linux", container={"securityContext": {"privileged": True}}), assume_windows=True) == []


@pytest.mark.parametrize(
    "version,severity",
    [
        ((1, 22), "warning"),  # no validation for spec.os yet: the field is merely ignored on Windows
        ((1, 23), "warning"),  # IdentifyPodOS alpha, off by default
        ((1, 24), "error"),  # on by default: the API server rejects it
        ((1, 37), "error"),
    ],
)
def test_rejection_starts_when_identify_pod_os_is_on(version: tuple[int, int], severity: str) -> None:
    obj = pod(container={"securityContext": {"privileged": False}})
    assert {(f.id, f.severity) for f in lint_object(obj, k8s_version=version)} == {("windows-privileged", severity)}


@pytest.mark.parametrize(
    "check_id,fields,before,at",
    [
        (
            "windows-apparmor-profile",
            {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}},
            (1, 29),
            (1, 30),
        ),
        ("windows-host-users", {"hostUsers": False}, (1, 24), (1, 25)),
        (
            "windows-supplemental-groups-policy",
            {"securityContext": {"supplementalGroupsPolicy": "Merge"}},
            (1, 30),
            (1, 31),
        ),
        (
            "windows-selinux-change-policy",
            {"securityContext": {"seLinuxChangePolicy": "MountOption"}},
            (1, 31),
            (1, 32),
        ),
    ],
)
def test_fields_added_later_are_gated_by_version(
    check_id: str, fields: dict[str, Any], before: tuple[int, int], at: tuple[int, int]
) -> None:
    assert found(pod(fields), k8s_version=before) == []
    assert {(f.id, f.severity) for f in lint_object(pod(fields), k8s_version=at)} == {(check_id, "error")}


def test_pod_level_resources_are_rejected_from_1_34_and_refused_by_the_kubelet_anyway() -> None:
    fields = {"resources": {"limits": {"cpu": "1"}}}
    assert found(pod(fields), k8s_version=(1, 31)) == []
    assert {f.severity for f in lint_object(pod(fields), k8s_version=(1, 33))} == {"error"}
    assert {f.severity for f in lint_object(pod(fields, os=None, selector=True))} == {"error"}


def test_stop_signal_is_dropped_while_its_feature_gate_is_off_by_default() -> None:
    """ContainerStopSignals is alpha through 1.37: kube-apiserver 1.34 and 1.37 drop the field instead of
    validating it (test_real_explain_knowledge), so another signal than SIGTERM is advice, not a rejection."""
    no_os = pod(os=None, selector=True, container={"lifecycle": {"stopSignal": "SIGTERM"}})
    assert ids(no_os) == set()
    [finding] = lint_object(pod(container={"lifecycle": {"stopSignal": "SIGINT"}}))
    assert (finding.id, finding.severity, finding.enforced_by) == ("windows-stop-signal", "warning", None)
    assert "ContainerStopSignals feature gate" in finding.message
    assert ids(pod(container={"lifecycle": {"stopSignal": "SIGINT"}}), k8s_version=(1, 32)) == set()


def test_init_and_ephemeral_containers_are_checked_with_their_own_paths() -> None:
    obj = pod(
        {
            "initContainers": [
                {"name": "i", "image": "x", "resources": LIMITS, "securityContext": {"privileged": False}}
            ],
            "ephemeralContainers": [{"name": "e", "image": "x", "securityContext": {"capabilities": {"add": ["X"]}}}],
        }
    )
    assert {(f.id, f.path) for f in lint_object(obj)} == {
        ("windows-privileged", "spec.initContainers[0].securityContext.privileged"),
        ("windows-capabilities", "spec.ephemeralContainers[0].securityContext.capabilities"),
    }


def test_hostprocess_pod_done_right_is_quiet_and_hostnetwork_is_not_flagged() -> None:
    obj = pod(
        {
            "hostNetwork": True,
            "securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
        }
    )
    assert found(obj) == []


def test_hostprocess_rules_apply_whatever_the_os() -> None:
    obj = pod({"securityContext": {"windowsOptions": {"hostProcess": True}}}, os=None, selector=True)
    assert ids(obj) == {"windows-hostprocess-host-network"}


def test_hugepages_path_names_the_resource_key() -> None:
    obj = pod(container={"resources": {"limits": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}}})
    [finding] = lint_object(obj)
    assert finding.path == "spec.containers[0].resources.limits.hugepages-1Gi"
    assert finding.severity == "error"


def test_server_core_image_with_run_as_non_root_warns() -> None:
    obj = pod(
        container={"image": "mcr.microsoft.com/windows/servercore:ltsc2022", "securityContext": {"runAsNonRoot": True}}
    )
    assert {(f.id, f.severity) for f in lint_object(obj)} == {("windows-run-as-non-root-administrator", "warning")}
    nano = pod(
        container={"image": "mcr.microsoft.com/windows/nanoserver:ltsc2022", "securityContext": {"runAsNonRoot": True}}
    )
    assert found(nano) == []


def test_memory_limit_is_not_asked_of_ephemeral_containers() -> None:
    obj = pod({"ephemeralContainers": [{"name": "debug", "image": "x"}]})
    assert found(obj) == []


@pytest.mark.parametrize(
    "name",
    [
        "ContainerUser",
        "NT AUTHORITY\\SYSTEM",
        "NT AUTHORITY\\Local service",
        "CONTOSO\\svc-web",
        "contoso.com\\svc",
        "a" * 104,
    ],
)
def test_valid_run_as_user_names(name: str) -> None:
    assert run_as_user_name_problem(name) is None


@pytest.mark.parametrize(
    "name", ["", "a\\b\\c", "\\user", "DOMAIN\\", "user@contoso", "x" * 105, "...", "bad*dom\\u", "tab\tname", "a:b"]
)
def test_invalid_run_as_user_names(name: str) -> None:
    assert run_as_user_name_problem(name)


KINDS = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_pod_bearing_kind_is_linted_at_its_own_path(kind: str) -> None:
    spec = pod(container={"securityContext": {"privileged": True}})["spec"]
    obj: dict[str, Any] = {"apiVersion": "x/v1", "kind": kind, "metadata": {"name": "w"}}
    node = obj
    path = KINDS[kind]
    for step in path[:-1]:
        node = node.setdefault(step, {})
    node[path[-1]] = spec
    [finding] = lint_object(obj)
    assert finding.path == ".".join(path) + ".containers[0].securityContext.privileged"


def test_other_kinds_are_ignored() -> None:
    assert lint_object({"kind": "Service", "spec": {"hostPID": True}}) == []
    assert lint_object({"kind": "Pod", "spec": "not a mapping"}) == []


@pytest.mark.parametrize(
    "spec,expected",
    [
        ({"nodeSelector": {"kubernetes.io/os": "windows"}}, "windows"),
        ({"nodeSelector": {"beta.kubernetes.io/os": "windows"}}, "windows"),
        ({"nodeSelector": {"node.kubernetes.io/windows-build": "10.0.17763"}}, "windows"),
        ({"nodeSelector": {"kubernetes.io/os": "linux"}}, "linux"),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}
                                    ]
                                }
                            ]
                        }
                    }
                }
            },
            "windows",
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "kubernetes.io/os", "operator": "In", "values": ["windows", "linux"]}
                                    ]
                                }
                            ]
                        }
                    }
                }
            },
            None,
        ),
        ({"tolerations": [{"key": "os", "value": "Win1809", "effect": "NoSchedule"}]}, "windows"),
        ({"tolerations": [{"operator": "Exists"}]}, None),
    ({"tolerations": [{"key": "os", "operator": "Exists", "effect": "NoSchedule"}]}, "windows"),
    ({"tolerations": [{"key": "os", "value": "linux", "effect": "NoSchedule"}]}, None),
        ({"runtimeClassName": "windows-2022"}, "windows"),
        ({"containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}, "windows"),
        ({"containers": [{"name": "c", "image": "nginx:1.27"}]}, None),
        ({"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}}}, "windows"),
        ({"os": {"name": "linux"}, "nodeSelector": {"kubernetes.io/os": "windows"}}, "linux"),
    ],
)
def test_target_inference(spec: dict[str, Any], expected: str | None) -> None:
    target = infer_target(spec)
    assert target.os == expected
    if expected:
        assert target.reasons


@pytest.mark.parametrize(
    ("os_field", "path", "wording"),
    [
        ({}, "spec.os.name", "spec.os.name: Required value"),
        ({"name": ""}, "spec.os.name", "spec.os.name: Required value"),
        ({"name": "Windows"}, "spec.os", 'spec.os: Unsupported value: "Windows": supported values: "linux", "windows"'),
        ({"name": "WINDOWS"}, "spec.os", 'Unsupported value: "WINDOWS"'),
        ({"name": "win"}, "spec.os", 'Unsupported value: "win"'),
        ({"name": 7}, "spec.os", 'Unsupported value: "7"'),
        ("windows", "spec.os", "spec.os: must be a mapping"),
    ],
)
def test_spec_os_is_checked_as_the_api_server_does(os_field: Any, path: str, wording: str) -> None:
    """validateOS in k8s.io/kubernetes pkg/apis/core/validation: an empty spec.os is 'Required value' at
    spec.os.name, another name (case matters) is 'Unsupported value' at spec.os."""
    [finding] = lint_object(pod({"os": os_field}, os=None))
    assert (finding.id, finding.severity, finding.path) == ("windows-os-name-invalid", "error", path)
    assert wording in finding.message


def test_spec_os_path_in_a_template_is_the_one_the_api_server_names() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
                  "spec": {"template": {"spec": pod({"os": {}}, os=None)["spec"]}}}
    [finding] = lint_object(deployment)
    assert finding.path == "spec.template.spec.os.name"
    assert finding.message.startswith("spec.template.spec.os.name: Required value")


@pytest.mark.parametrize("name", ["linux", "windows"])
def test_valid_spec_os_names_are_quiet(name: str) -> None:
    assert [f.id for f in lint_object(pod(os=name)) if f.id == "windows-os-name-invalid"] == []


# -- the missing OS selector: the rule doctor reports on workloads (explain/placement.py) --------------------------


def test_spec_os_alone_does_not_keep_a_windows_pod_off_linux_nodes() -> None:
    [finding] = lint_object(pod(selector=False))
    assert (finding.id, finding.severity, finding.path) == (
        "windows-workload-no-os-selector", "warning", "spec.nodeSelector")
    assert "spec.os.name=windows" in finding.message and "can land on Linux nodes" in finding.message
    assert "nodeSelector kubernetes.io/os=windows" in finding.fix.note


@pytest.mark.parametrize("spec", [
    {"nodeSelector": {"kubernetes.io/os": "windows"}},
    {"nodeSelector": {"node.kubernetes.io/windows-build": "10.0.20348"}},
    {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}]}]}}}},
    {"nodeName": "win-0"},  # no scheduler involved
])
def test_a_selector_affinity_or_node_name_satisfies_it(spec: dict[str, Any]) -> None:
    assert "windows-workload-no-os-selector" not in ids(pod(spec, selector=False))


def test_a_runtime_class_is_read_when_seen_and_named_when_not() -> None:
    obj = pod({"runtimeClassName": "win2022"}, selector=False)
    assert "windows-workload-no-os-selector" not in ids(
        obj, runtime_classes={"win2022": {"kubernetes.io/os": "windows"}})
    assert "windows-workload-no-os-selector" in ids(obj, runtime_classes={"win2022": {"kubernetes.io/arch": "amd64"}})
    [unseen] = [f for f in lint_object(obj) if f.id == "windows-workload-no-os-selector"]
    assert unseen.severity == "info" and "RuntimeClass win2022 (not read)" in unseen.message


def test_an_assumed_windows_pod_is_not_asked_for_a_selector() -> None:
    assert "windows-workload-no-os-selector" not in ids(pod(os=None, selector=False), assume_windows=True)


# -- who a HostProcess container can run as (knowledge/field_rules.yaml hostprocess_users) -------------------------


def hostprocess_pod(pod_user: str | None = None, container_user: str | None = None) -> dict[str, Any]:
    options: dict[str, Any] = {"hostProcess": True}
    if pod_user is not None:
        options["runAsUserName"] = pod_user
    container = {"securityContext": {"windowsOptions": {"runAsUserName": container_user}}} if container_user else None
    return pod({"hostNetwork": True, "securityContext": {"windowsOptions": options}}, container=container)


@pytest.mark.parametrize("user", ["ContainerUser", "containeradministrator", "CORP\\svc-agent", "WIN-NODE1\\admin",
                                  "NT AUTHORITY\\Guest"])
def test_a_hostprocess_pod_cannot_run_as_a_container_or_user_account(user: str) -> None:
    [finding] = lint_object(hostprocess_pod(user))
    assert (finding.id, finding.severity, finding.enforced_by) == ("windows-hostprocess-user", "error", "runtime")
    assert finding.path == "spec.securityContext.windowsOptions.runAsUserName"
    assert "NT AUTHORITY\\SYSTEM" in finding.message and "NT AUTHORITY\\SYSTEM" in finding.fix.note


@pytest.mark.parametrize("user", ["NT AUTHORITY\\SYSTEM", "nt authority\\local service", "NT AUTHORITY\\LocalService",
                                  "NT AUTHORITY\\NETWORK SERVICE", "hpc-agents", None])
def test_service_accounts_a_local_group_or_the_default_are_accepted(user: str | None) -> None:
    assert lint_object(hostprocess_pod(user)) == []


def test_the_container_value_overrides_the_pod_one_and_is_reported_where_set() -> None:
    assert lint_object(hostprocess_pod("ContainerUser", "NT AUTHORITY\\SYSTEM")) == []
    [finding] = lint_object(hostprocess_pod("NT AUTHORITY\\SYSTEM", "ContainerAdministrator"))
    assert finding.path == "spec.containers[0].securityContext.windowsOptions.runAsUserName"


def test_an_ordinary_windows_pod_may_run_as_container_user() -> None:
    assert lint_object(pod(container={"securityContext": {"windowsOptions": {"runAsUserName": "ContainerUser"}}})) == []
