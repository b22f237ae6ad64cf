"""Every doctor check fires on a cluster that has its problem and stays quiet on the fixed cluster.

Each case builds a small cluster from a healthy base (one Linux node, one tainted, labelled Windows Server
2022 node with containerd 1.7, kube-proxy and Calico pods on it) and asserts on the findings the registry
returns: the id, the object and the exact values in message and hint.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubectl_win.catalog import doctor_checks as catalog
from kubectl_win.doctor.checks.plan import run_checks
from kubectl_win.findings import Finding
from tests.support.kube_objects import (
    at_revision,
    daemonset_pod,
    deployment_pod,
    event,
    gmsa,
    linux_spec,
    namespace,
    node,
    pod,
    runtime_class,
    service,
    snapshot_of,
    waiting,
    windows_spec,
    workload,
)
from tests.support.model_examples import EXAMPLES

HP = {"securityContext": {"windowsOptions": {"hostProcess": True, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
      "hostNetwork": True}
TOLERATE_ALL = [{"operator": "Exists"}]


def agents(node_name: str = "win-0") -> list[dict[str, Any]]:
    proxy = windows_spec("sigwindowstools/kube-proxy:v1.31.4-calico-hostprocess", toleration=False,
                         tolerations=TOLERATE_ALL, **HP)
    calico = windows_spec("docker.io/calico/node-windows:v3.28.2", toleration=False, tolerations=TOLERATE_ALL, **HP)
    return [daemonset_pod("kube-proxy-windows", node_name, proxy),
            daemonset_pod("calico-node-windows", node_name, calico, namespace="calico-system")]


def base(*extra: dict[str, Any], win: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [node("linux-0", os="linux"), win or node("win-0"), namespace("shop"), *agents(), *extra]


def run(objs: list[dict[str, Any]], **kw: Any) -> list[Finding]:
    return run_checks(snapshot_of(*objs, **kw))


@dataclass
class Case:
    check: str
    fire: Callable[[], list[dict[str, Any]]]
    quiet: Callable[[], list[dict[str, Any]]]
    expect: tuple[str, ...] = ()  # substrings of message or hint of the fired finding
    kw: dict[str, Any] | None = None
    quiet_kw: dict[str, Any] | None = None


def deploy(name: str, spec: dict[str, Any], node_name: str | None = "win-0", **pod_kw: Any) -> list[dict[str, Any]]:
    return [workload("Deployment", name, spec), deployment_pod(name, "abcde", spec, node=node_name, **pod_kw)]


def _failed_event_case(check: str, message: str, expect: tuple[str, ...], reason: str = "Failed") -> Case:
    """A Windows pod's event with the message fires the check; the pod's Started event does not."""
    return Case(check, lambda: base(event(("Pod", "shop", "web-1"), reason, message, host="win-0")),
                lambda: base(event(("Pod", "shop", "web-1"), "Started", "Started container app", host="win-0")),
                expect)


TWO_BUILDS = [node("win-2019", build=17763), *agents("win-2019")]

_TRUST = ('Failed to mount volume "data": plugin wrote: The trust relationship between this workstation and the '
          'domain is lost')
CASES = [
    Case("windows-nodes-missing", lambda: [node("linux-0", os="linux")], lambda: base(),
         ("1 nodes and none of them runs Windows",)),
    Case("windows-node-not-ready", lambda: base(win=node("win-0", ready=False)), lambda: base(),
         ("KubeletNotReady: container runtime is down", "kubectl describe node win-0")),
    Case("windows-node-cordoned", lambda: base(win=node("win-0", unschedulable=True)), lambda: base(),
         ("kubectl uncordon win-0",)),
    Case("windows-node-network-unavailable", lambda: base(win=node("win-0", network_unavailable=True)),
         lambda: base(), ("NoRouteCreated", "spec.nodeName=win-0")),
    Case("windows-build-label-missing", lambda: base(win=node("win-0", label=None)), lambda: base(),
         ("kubectl label node win-0 node.kubernetes.io/windows-build=10.0.20348",)),
    Case("windows-build-label-mismatch", lambda: base(win=node("win-0", label="10.0.17763")), lambda: base(),
         ("labelled node.kubernetes.io/windows-build=10.0.17763", "windows-build=10.0.20348 --overwrite")),
    Case("windows-build-unsupported", lambda: base(win=node("win-0", build=19042)), lambda: base(),
         ("version 20H2", "out of support")),
    Case("windows-build-unknown", lambda: base(win=node("win-0", build=22000)), lambda: base(),
         ("10.0.22000",)),
    Case("runtime-docker", lambda: base(win=node("win-0", runtime="docker://20.10.9")), lambda: base(),
         ("docker://20.10.9", "dockershim was removed", "--cri-socket npipe:////./pipe/containerd-containerd")),
    Case("runtime-containerd-outdated", lambda: base(win=node("win-0", runtime="containerd://1.5.13")),
         lambda: base(win=node("win-0", runtime="containerd://1.7.16")),
         ("containerd 1.5.13", "cannot run HostProcess", "wincat")),
    Case("runtime-unknown", lambda: base(win=node("win-0", runtime="cri-o://1.28.1")), lambda: base(),
         ("cri-o://1.28.1",)),
    Case("kubelet-newer-than-apiserver", lambda: base(win=node("win-0", kubelet="v1.32.1")),
         lambda: base(win=node("win-0", kubelet="v1.31.0")), ("kubelet v1.32.1", "(v1.31.4)")),
    Case("kubelet-too-old", lambda: base(win=node("win-0", kubelet="v1.27.16")),
         lambda: base(win=node("win-0", kubelet="v1.28.15")), ("4 minor versions older", "to 1.28 or later")),
    Case("windows-node-untainted", lambda: base(win=node("win-0", taints=[])), lambda: base(),
         ("kubectl taint nodes win-0 os=Win2022:NoSchedule",)),
    Case("linux-workload-can-land-on-windows",
         lambda: base(*deploy("cart", linux_spec(selector=False), "linux-0"), win=node("win-0", taints=[])),
         lambda: base(*deploy("cart", linux_spec(selector=True), "linux-0"), win=node("win-0", taints=[])),
         ("shop/Deployment/cart", "win-0",
          """kubectl patch deployment cart -n shop --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":"""
          """{"kubernetes.io/os":"linux"}}}}}'""")),
    Case("windows-workload-no-os-selector", lambda: base(*deploy("web", windows_spec(selector=False))),
         lambda: base(*deploy("web", windows_spec())),
         ("""'{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"windows"}}}}}'""",)),
    Case("windows-workload-missing-toleration", lambda: base(*deploy("web", windows_spec(toleration=False), None)),
         lambda: base(*deploy("web", windows_spec(), None)),
         ("taint os=windows:NoSchedule", '"tolerations":[{"key":"os","operator":"Equal","value":"windows",'
                                         '"effect":"NoSchedule"}]')),
    Case("windows-workload-no-matching-node",
         lambda: base(*deploy("web", windows_spec(nodeSelector={"kubernetes.io/os": "windows",
                                                               "node.kubernetes.io/windows-build": "10.0.17763"}),
                              None)),
         lambda: base(*deploy("web", windows_spec(nodeSelector={"kubernetes.io/os": "windows",
                                                               "node.kubernetes.io/windows-build": "10.0.20348"}),
                              None)),
         ("node.kubernetes.io/windows-build=10.0.17763", "builds present: 10.0.20348")),
    Case("pod-os-mismatch", lambda: base(*deploy("api", linux_spec(selector=True))),
         lambda: base(*deploy("api", windows_spec())),
         ("targets linux", "on windows node win-0", '"kubernetes.io/os":"linux"')),
    Case("image-build-mismatch",
         lambda: base(*deploy("web", windows_spec("mcr.microsoft.com/windows/servercore:ltsc2019"))),
         lambda: base(*deploy("web", windows_spec("mcr.microsoft.com/windows/servercore:ltsc2022"))),
         ("built for Windows Server 2019 (build 17763)", "runs build 20348",
          '"node.kubernetes.io/windows-build":"10.0.17763"')),
    Case("windows-os-retiring",
         lambda: base(win=node("win-0", build=17763, labels={"kubernetes.azure.com/cluster": "mc_rg_prod",
                                                              "kubernetes.azure.com/agentpool": "win19"})),
         lambda: base(win=node("win-0", build=26100, labels={"kubernetes.azure.com/cluster": "mc_rg_prod",
                                                              "kubernetes.azure.com/agentpool": "win25"})),
         ("AKS pool win19 (win-0) runs Windows Server 2019 (10.0.17763), which AKS retired on 2026-03-01",
          "Move the pool to Windows Server 2025 (10.0.26100)", "kubectl win images --target-build ltsc2025 -A")),
    Case("windows-update-known-problem", lambda: base(win=at_revision(node("win-0"), 2655)), lambda: base(),
         ("Node win-0 runs 10.0.20348.2655 (KB5041160, 2024-08): since KB5040437, container networking on Kubernetes",
          "Microsoft acknowledged it", "KB5044281 (10.0.20348.2762, 2024-10) fixes it",
          "Install KB5044281 or newer on win-0")),
    Case("windows-updates-behind", lambda: base(win=at_revision(node("win-0"), 4405)),
         lambda: base(win=at_revision(node("win-0"), 5499)),
         ("Node win-0 runs 10.0.20348.4405 (KB5068787, 2025-11), at least 12 monthly updates behind the newest known "
          "for Windows Server 2022: 10.0.20348.5761 (KB not in the data, 2026-10); 1 of them estimated from "
          "Microsoft's monthly release cadence (the update data ends on 2026-10-13); more than 3 is flagged",
          "kubectl cordon win-0")),
    Case("windows-revision-spread", lambda: base(at_revision(node("win-1"), 4773), *agents("win-1")),
         lambda: base(node("win-1"), *agents("win-1")),
         ("Windows nodes of Windows Server 2022 run 2 OS revisions: 10.0.20348.5761 (KB not in the data, 2026-10): "
          "win-0; 10.0.20348.4773 (KB5075906, 2026-02): win-1",)),
    Case("windows-image-newer-than-node",
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:3")),
                      win=at_revision(node("win-0"), 4773)),
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:3"))),
         ("shop/Deployment/web runs registry.example.com/web:3 in container app, built on 10.0.20348.5139 "
          "(KB5087545 of 2026-05), on node win-0 (10.0.20348.4773, KB5075906 of 2026-02)",
          "Install KB5087545 or newer on win-0", "Or pin registry.example.com/web:3 to a tag built on "
          "10.0.20348.4773"),
         kw={"images": {"registry.example.com/web:3": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.5139", "digest": "sha256:2"}]}}},
         quiet_kw={"images": {"registry.example.com/web:3": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.5139", "digest": "sha256:2"}]}}}),
    Case("windows-image-revision-incompatible",
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:2019"), node_name="win-2019"),
                      *TWO_BUILDS),
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:2019"), node_name="win-2019"),
                      *TWO_BUILDS),
         ("shop/Deployment/web runs registry.example.com/web:2019 in container app, built on 10.0.17763.973, on node "
          "win-2019 (10.0.17763.9376, the update of 2026-10, KB not in the data): host and image lie on opposite "
          "sides of KB4532691 "
          "(10.0.17763.1039)", "Rebuild registry.example.com/web:2019 on a base image of KB4532691 or newer"),
         kw={"images": {"registry.example.com/web:2019": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.973", "digest": "sha256:2"}]}}},
         quiet_kw={"images": {"registry.example.com/web:2019": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.1039", "digest": "sha256:2"}]}}}),
    Case("windows-image-known-problem",
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:19"), node_name="win-2019"), *TWO_BUILDS),
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:19"), node_name="win-2019"), *TWO_BUILDS),
         ("shop/Deployment/web runs registry.example.com/web:19 in container app, built on 10.0.17763.4851: since "
          "KB5030214, DNS resolution inside containers", "users report it",
          "images on KB5031361 (10.0.17763.4974, 2023-10) or newer are fixed",
          "Rebuild registry.example.com/web:19 on a base image of KB5031361 or newer"),
         kw={"images": {"registry.example.com/web:19": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.4851", "digest": "sha256:2"}]}}},
         quiet_kw={"images": {"registry.example.com/web:19": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.4974", "digest": "sha256:2"}]}}}),
    Case("image-no-variant-for-node",
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:2"))),
         lambda: base(*deploy("web", windows_spec("registry.example.com/web:2"))),
         ("registry.example.com/web:2 in container app", "node win-0 (build 10.0.20348)",
          "only newer Windows builds (10.0.26100.1742)", "Rebuild registry.example.com/web:2 for 10.0.20348"),
         kw={"images": {"registry.example.com/web:2": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.26100.1742", "digest": "sha256:2"}]}}},
         quiet_kw={"images": {"registry.example.com/web:2": {"digest": "sha256:1", "platforms": [
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.26100.1742", "digest": "sha256:2"},
             {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.2582", "digest": "sha256:3"}]}}}),
    Case("image-build-selector-missing",
         lambda: base(*TWO_BUILDS, *deploy("web", windows_spec("registry.example.com/web:1.0-ltsc2022"), None)),
         lambda: base(*TWO_BUILDS, *deploy("web", windows_spec(
             "registry.example.com/web:1.0-ltsc2022",
             nodeSelector={"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}), None)),
         ("builds 17763, 20348", '"node.kubernetes.io/windows-build":"10.0.20348"')),
    Case("windows-memory-limit-missing", lambda: base(*deploy("web", windows_spec(memory=None))),
         lambda: base(*deploy("web", windows_spec(memory="2Gi"))),
         ("container(s) app", "kubectl set resources deployment/web -n shop -c app --limits=memory=512Mi")),
    Case("windows-node-no-memory-reserve", lambda: base(win=node("win-0", capacity="16Gi", allocatable="16Gi")),
         lambda: base(), ("(16.0Gi)", "systemReserved")),
    Case("windows-node-kube-proxy-missing", lambda: [node("win-0"), agents()[1]], lambda: base(),
         ("win-0", "hostprocess/calico/kube-proxy")),
    Case("windows-node-cni-missing", lambda: [node("win-0"), agents()[0]], lambda: base(),
         ("win-0", "toleration for os=windows:NoSchedule")),
    Case("windows-service-load-balancers", lambda: base(service("web", 3), service("api", 2)),
         lambda: base(service("headless", 3, headless=True)), ("2 Services with a cluster IP (5 ports)",
                                                                "each of the 1 Windows nodes")),
    Case("windows-csi-proxy-missing",
         lambda: base(daemonset_pod("csi-smb-node-win", "win-0", windows_spec("registry.k8s.io/sig-storage/"
                                                                              "smbplugin:v1.15.0"))),
         lambda: base(daemonset_pod("csi-smb-node-win", "win-0", windows_spec("registry.k8s.io/sig-storage/"
                                                                              "smbplugin:v1.15.0")),
                      daemonset_pod("csi-proxy", "win-0", windows_spec("mcr.microsoft.com/oss/kubernetes-csi/"
                                                                       "csi-proxy:v1.1.3", **HP))),
         ("csi-smb-node-win", "Install csi-proxy on win-0")),
    Case("gmsa-credential-spec-missing",
         lambda: base(gmsa("webapp1"), *deploy("web", windows_spec(securityContext={
             "windowsOptions": {"gmsaCredentialSpecName": "webapp2"}}))),
         lambda: base(gmsa("webapp2"), *deploy("web", windows_spec(securityContext={
             "windowsOptions": {"gmsaCredentialSpecName": "webapp2"}}))),
         ("gmsaCredentialSpecName webapp2", "existing: webapp1")),
    Case("gmsa-crd-missing",
         lambda: base(*deploy("web", windows_spec(securityContext={
             "windowsOptions": {"gmsaCredentialSpecName": "webapp1"}}))),
         lambda: base(*deploy("web", windows_spec())), ("windows.k8s.io/v1", "deploy-gmsa-webhook.sh"),
         kw={"gmsa_served": False}, quiet_kw={"gmsa_served": False}),
    Case("hostprocess-blocked-by-pod-security",
         lambda: base(namespace("ops", **{"pod-security.kubernetes.io/enforce": "baseline"}),
                      workload("DaemonSet", "exporter", windows_spec(**HP), namespace="ops")),
         lambda: base(namespace("ops", **{"pod-security.kubernetes.io/enforce": "privileged"}),
                      workload("DaemonSet", "exporter", windows_spec(**HP), namespace="ops")),
         ("enforces Pod Security level baseline",
          "kubectl label namespace ops pod-security.kubernetes.io/enforce=privileged --overwrite")),
    Case("symptom-os-build-mismatch",
         lambda: base(*deploy("web", windows_spec("mcr.microsoft.com/windows/servercore:ltsc2019"), phase="Pending",
                              statuses=[waiting("app", "servercore:ltsc2019", "CreateContainerError",
                                                "hcs::CreateComputeSystem: The container operating system does not "
                                                "match the host operating system.")])),
         lambda: base(*deploy("web", windows_spec("mcr.microsoft.com/windows/servercore:ltsc2019"), phase="Pending",
                              statuses=[waiting("app", "servercore:ltsc2019", "ContainerCreating", "")])),
         ("shop/Deployment/web", "built for build 20348 (ltsc2022, 10.0.20348)",
          '"node.kubernetes.io/windows-build":"10.0.17763"')),
    Case("symptom-no-matching-platform",
         lambda: base(event(("Pod", "shop", "nginx-1"), "Failed",
                            'Failed to pull image "nginx:1.27": no match for platform in manifest: not found',
                            host="win-0")),
         lambda: base(event(("Pod", "shop", "nginx-1"), "Failed", 'Failed to pull image "nginx:1.27": not found',
                            host="win-0")),
         ("no match for platform in manifest", '{"nodeSelector":{"kubernetes.io/os":"linux"}}')),
    Case("symptom-sandbox-image",
         lambda: base(event(("Pod", "shop", "web-1"), "FailedCreatePodSandBox",
                            'failed to get sandbox image "mcr.microsoft.com/oss/kubernetes/pause:3.6": failed to pull',
                            host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "Scheduled", "Successfully assigned shop/web-1 to win-0")),
         ("sandbox_image", "config.toml on win-0")),
    Case("symptom-hns-failure",
         lambda: base(event(("Pod", "shop", "web-1"), "FailedCreatePodSandBox",
                            "failed to setup network for sandbox: hcnCreateEndpoint failed in Win32: The object "
                            "already exists. (0x1392)", host="win-0", count=4)),
         lambda: base(event(("Pod", "shop", "web-1"), "FailedCreatePodSandBox", "rpc error: context canceled",
                            host="win-0")),
         ("(on win-0, 4x)", "spec.nodeName=win-0", "Get-HnsEndpoint")),
    Case("windows-warning-unrecognised",
         lambda: base(*[event(("Pod", "shop", "web-1"), "Odd", "the widget said no to the gadget", host="win-0",
                              count=n) for n in (2, 3)]),
         lambda: base(event(("Pod", "shop", "api-1"), "Odd", "the widget said no to the gadget", host="linux-0",
                            count=2)),
         ("(on win-0, 5x)", "kubectl win logs")),
    Case("symptom-pod-identity-nmi-windows",
         lambda: base(event(("Pod", "shop", "web-1"), "FailedMount",
                            'MountVolume.SetUp failed for volume "secrets" : rpc error: code = Unknown desc = failed '
                            'to get key vault token: Get "http://localhost:2579/host/token/?resource=https://vault.'
                            'azure.net": dial tcp 127.0.0.1:2579: connect: connection refused', host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "FailedMount",
                            'MountVolume.SetUp failed for volume "secrets" : rpc error: code = Unknown desc = failed '
                            'to get key vault token: Get "http://localhost:2579/host/token/?resource=https://vault.'
                            'azure.net": dial tcp 127.0.0.1:2579: connect: connection refused', host="linux-0")),
         ("workload identity",)),
    Case("symptom-imds-multiple-identities",
         lambda: base(event(("Pod", "shop", "web-1"), "BackOff",
                            "Multiple user assigned identities exist, please specify the clientId / resourceId of the "
                            "identity in the token request", host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "BackOff",
                            "Multiple user assigned identities exist, please specify the clientId / resourceId of the "
                            "identity in the token request", host="linux-0")),
         ("client ID",)),
    _failed_event_case("symptom-cni-state-corrupt",
                       'networkPlugin cni failed to set up pod "web-1_shop" network: cni-net: failed to load network '
                       "manager state: invalid character '\\x00' looking for beginning of value",
                       ("azure-vnet.json",), reason="FailedCreatePodSandBox"),
    _failed_event_case("symptom-args-run-as-command",
                       "'--collectors.enabled' is not recognized as an internal or external command,",
                       ("ENTRYPOINT", "args without a command")),
    _failed_event_case("symptom-sandbox-platform-unset",
                       'failed to create shim task: invalid runtime sandbox platform: "" is an invalid OS component '
                       'of "": OSAndVersion specifier component must match',
                       ("SandboxPlatform", "config.toml on win-0"), reason="FailedCreatePodSandBox"),
    _failed_event_case("symptom-hcs-unavailable",
                       "hcsshim::GetComputeSystems: The specified module could not be found.",
                       ("HostProcess container", "Containers feature")),
    _failed_event_case("symptom-cni-lock-file-empty", "[4844] Num bytes read from lock file is 0",
                       ("azure-vnet.json.lock", "on win-0")),
    _failed_event_case("symptom-mcr-image-from-docker-hub",
                       'Failed to pull image "docker.io/windows/nanoserver:ltsc2022": pull access denied, repository '
                       "does not exist or may require authorization", ("mcr.microsoft.com/<its path>",)),
    _failed_event_case("symptom-registry-unreachable",
                       'Failed to pull image "contoso.azurecr.io/shop/app:1.0": rpc error: code = Unknown desc = '
                       'Get "https://contoso.azurecr.io/v2/": dial tcp 10.0.0.4:443: i/o timeout',
                       ("Test-NetConnection", "HTTPS_PROXY", "private registry")),
    _failed_event_case("symptom-irsa-token-path-windows", "The webIdentityTokenFile must be an absolute path.",
                       ("AWS_WEB_IDENTITY_TOKEN_FILE in shop/Pod/web-1",
                        "C:\\var\\run\\secrets\\eks.amazonaws.com")),
    _failed_event_case("symptom-hostprocess-tty",
                       'error executing command in container: failed to exec in container: failed to start exec "a4": '
                       "console emulation not supported for job containers: unknown", ("kubectl exec -i (no -t)",)),
    _failed_event_case("symptom-container-user-no-domain",
                       "hcs::System::CreateProcess: CMD: failure in a Windows system call: The specified domain "
                       "either does not exist or could not be contacted. (0x54b)", ("nltest /dsgetdc",)),
    _failed_event_case("symptom-eventlog-in-container",
                       'SystemCallError error="The interface is unknown. - OpenEventLog',
                       ("HostProcess container", "LogMonitor")),
    _failed_event_case("symptom-azure-cloud-name",
                       'failed to run Kubelet: could not init cloud provider "azure": autorest/azure: There is no '
                       'cloud environment matching the name "AZURECLOUD"', ("AzurePublicCloud", "az cloud set")),
    _failed_event_case("symptom-ec2-metadata-unreachable",
                       'failed to run Kubelet: could not init cloud provider "aws": unable to determine AWS zone from '
                       "cloud provider config or EC2 instance metadata: RequestError: send request failed",
                       ("169.254.169.254/32", "on win-0")),
    _failed_event_case("symptom-probe-to-node-localhost",
                       'Readiness probe failed: Get "http://127.0.0.1:8080/ready": dial tcp 127.0.0.1:8080: connectex: '
                       "No connection could be made because the target machine actively refused it.",
                       ("localhost",), reason="Unhealthy"),
    _failed_event_case("symptom-rancher-docker-ee-only", "FATA: Only support with Docker EE",
                       ("docker version", "Mirantis Container Runtime")),
    _failed_event_case("symptom-docker-file-bind-mount",
                       "Error: Error response from daemon: invalid volume specification: 'c:\\var\\lib\\kubelet"
                       "\\pods\\1\\volumes\\kubernetes.io~configmap\\cfg\\app.yaml:C:/app/app.yaml:ro': invalid "
                       'mount config for type "bind": source path must be a directory',
                       ("drop the file subPath", "containerd")),
    _failed_event_case("symptom-servicemonitor-appcmd-slow", "APPCMD failed with error code 259",
                       ("enableServiceLinks: false",)),
    _failed_event_case("symptom-layer-unrecognized-format",
                       "Error response from daemon: hcs::CreateComputeSystem 1f: The container image contains a layer "
                       "with an unrecognized format.", ("crictl rmi",)),
    _failed_event_case("symptom-docker-npipe-readonly",
                       "Error: Error response from daemon: invalid volume specification: '\\\\.\\pipe\\"
                       "docker_engine:\\\\.\\pipe\\docker_engine:ro': invalid mount config for type \"npipe\": "
                       "field ReadOnly must not be specified", ("remove readOnly: true",)),
    _failed_event_case("symptom-linux-container-path-in-bind",
                       "Error: Error response from daemon: invalid volume specification: 'C:\\k\\pods\\1\\"
                       "volumes\\kubernetes.io~projected\\kube-api-access-x:/var/run/secrets/kubernetes.io/"
                       "serviceaccount:ro'", ("upgrade cri-dockerd on win-0",)),
    _failed_event_case("symptom-csi-registration-path-no-drive",
                       "transport: Error while dialing dial unix \\\\var\\\\lib\\\\kubelet\\\\plugins"
                       "\\\\csi.vsphere.vmware.com\\\\csi.sock: connect: A socket operation was attempted "
                       "to an unreachable network.", ("C:\\var\\lib\\kubelet\\plugins",), reason="BackOff"),
    _failed_event_case("symptom-powershell-console-buffer",
                       'Install-WindowsFeature : Win32 internal error "Access is denied" 0x5 occurred while reading '
                       "the console output buffer", ("$ProgressPreference = 'SilentlyContinue'",)),
    _failed_event_case("symptom-powershell-eventlog-source",
                       'Write-EventLog : The source name "node-agent" does not exist on computer "localhost".',
                       ("New-EventLog",)),
    _failed_event_case("symptom-linux-command",
                       "executor error: 'gzip' is not recognized as an internal or external command, operable program "
                       "or batch file.", ("powershell -Command", "ship the tool for Windows")),
    _failed_event_case("symptom-powershell-item-exists",
                       "mkdir : An item with the specified name C:\\k\\volumeplugins already exists.", ("-Force",)),
    _failed_event_case("symptom-missing-directory", "Could not find a part of the path 'C:\\opt\\cni\\bin\\'.",
                       ("New-Item -ItemType Directory -Force",)),
    _failed_event_case("symptom-servicemonitor-service",
                       "ERROR: Failed to stop or query status of service 'w3svc' error [800705b4]",
                       ("more CPU at start",), reason="BackOff"),
    _failed_event_case("symptom-servicemonitor-shutdown",
                       "ERROR: Failed to stop or query status of service 'w3svc' error [8007045b]",
                       ("why shop/Pod/web-1 was stopped",), reason="BackOff"),
    _failed_event_case("symptom-csi-resize-unsupported", "Resize is not supported for this build",
                       ("resizes through csi-proxy",), reason="VolumeResizeFailed"),
    Case("symptom-wincat-missing",
         lambda: base(event(("Pod", "shop", "web-1"), "FailedPortForward",
                            "unable to do port forwarding: wincat not found", host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "FailedPortForward", "connection refused", host="win-0")),
         ("registry.k8s.io/pause:3.6",)),
    Case("symptom-container-administrator-nonroot",
         lambda: base(*deploy("web", windows_spec(securityContext={"runAsNonRoot": True}), phase="Pending",
                              statuses=[waiting("app", "img", "CreateContainerConfigError",
                                                "container's runAsUserName (ContainerAdministrator) which will be "
                                                "regarded as root identity and will break non-root policy")])),
         lambda: base(*deploy("web", windows_spec(securityContext={"runAsNonRoot": True}))),
         ('"runAsUserName":"ContainerUser"', "kubectl patch deployment web -n shop")),
    Case("symptom-untolerated-windows-taint",
         lambda: base(*deploy("web", windows_spec(toleration=False), None, phase="Pending"),
                      event(("Pod", "shop", "web-5d8f7c9b6-abcde"), "FailedScheduling",
                            "0/2 nodes are available: 1 node(s) had untolerated taint {os: windows}, 1 node(s) "
                            "didn't match Pod's node affinity/selector.")),
         lambda: base(*deploy("web", windows_spec(toleration=False), None, phase="Pending"),
                      event(("Pod", "shop", "web-5d8f7c9b6-abcde"), "FailedScheduling",
                            "0/2 nodes are available: 2 Insufficient memory.")),
         ('"value":"windows","effect":"NoSchedule"', "kubectl patch deployment web -n shop --type json")),
    Case("symptom-entrypoint-not-found",
         lambda: base(event(("Pod", "shop", "web-1"), "Failed",
                            "Error: failed to start containerd task: hcs::System::CreateProcess web: The system "
                            "cannot find the file specified.", host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "Started", "Started container web", host="win-0")),
         ("hcs::System::CreateProcess", "C:\\app\\app.exe")),
    Case("symptom-compute-system-timeout",
         lambda: base(event(("Pod", "shop", "web-1"), "Failed",
                            "hcs::CreateComputeSystem web: timeout waiting for the compute system", host="win-0")),
         lambda: base(event(("Pod", "shop", "web-1"), "BackOff", "Back-off restarting failed container",
                            host="win-0")),
         ("Upgrade containerd on win-0",)),
    Case("symptom-ntstatus-exit",
         lambda: base(*deploy("render", windows_spec("mcr.microsoft.com/windows/nanoserver:ltsc2022"), statuses=[
             waiting("app", "nanoserver", "CrashLoopBackOff", "back-off", exit_code=-1073741515, restarts=7)])),
         lambda: base(*deploy("render", windows_spec("mcr.microsoft.com/windows/nanoserver:ltsc2022"), statuses=[
             waiting("app", "nanoserver", "CrashLoopBackOff", "back-off", exit_code=1, restarts=7)])),
         ("-1073741515 = 0xC0000135 STATUS_DLL_NOT_FOUND", "servercore base image", "restarted 7 times")),
    Case("windows-node-taints-not-os",
         lambda: base(*deploy("batch", linux_spec(selector=False, tolerations=[
             {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
              "effect": "NoSchedule"}]), "linux-0"),
             win=node("win-0", taints=[{"key": "kubernetes.azure.com/scalesetpriority", "value": "spot",
                                        "effect": "NoSchedule"}])),
         lambda: base(win=node("win-0", taints=[
             {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"},
             {"key": "os", "value": "windows", "effect": "NoSchedule"}])),
         ("tainted only with kubernetes.azure.com/scalesetpriority=spot:NoSchedule", "shop/Deployment/batch",
          "kubectl taint nodes win-0 os=Win2022:NoSchedule")),
    Case("windows-runtime-error",
         lambda: base(event(("Pod", "shop", "web-1"), "Odd", "the widget said no (0x1abc)", host="win-0")),
         lambda: base(event(("Pod", "linux", "web-1"), "Odd", "the widget said no (0x1abc)", host="linux-0")),
         ("(0x1abc)", "kubectl win logs")),
    Case("windows-error-code",
         lambda: base(event(("Node", "", "win-0"), "Odd", "the widget said no: 0xc0001234", host="win-0")),
         lambda: base(event(("Node", "", "linux-0"), "Odd", "the widget said no: 0xc0001234", host="linux-0")),
         ("0xC0001234 = (unknown NTSTATUS)",)),
    # A mount failing with a domain trust message: the operation says volume, the domain says identity, and the
    # logon condition gives no cause; doctor says what it recognised and that the message settles neither.
    Case("windows-failure",
         lambda: base(event(("Pod", "shop", "web-1"), "FailedMount", _TRUST, host="win-0")),
         lambda: base(event(("Pod", "linux", "web-1"), "FailedMount", _TRUST, host="linux-0")),
         ("subsystem not settled (perhaps volume)", "could not mount the volume", "the message does not say why",
          "kubectl ")),
    *[Case(f"windows-{subsystem}-failure",
           (lambda kind=kind, reason=reason, message=message: base(event(
               (kind, "" if kind == "Node" else "shop", "win-0" if kind == "Node" else "web-1"), reason, message,
               host="win-0", count=2))),
           (lambda kind=kind, reason=reason, message=message: base(event(
               (kind, "" if kind == "Node" else "shop", "linux-0" if kind == "Node" else "api-1"), reason, message,
               host="linux-0", count=2))),
           (f": {subsystem}: ", " on win-0 (2x): ", "kubectl "))
      for subsystem, kind, reason, message in EXAMPLES],
]


def _text(finding: Finding) -> str:
    return f"{finding.object.display()} {finding.message} {finding.fix.text()}"


@pytest.mark.parametrize("case", CASES, ids=[c.check for c in CASES])
def test_check_fires(case: Case) -> None:
    findings = [f for f in run(case.fire(), **(case.kw or {})) if f.id == case.check]
    assert findings, f"{case.check} did not fire"
    text = "\n".join(_text(f) for f in findings)
    for expected in case.expect:
        assert expected in text, f"{expected!r} not in:\n{text}"


@pytest.mark.parametrize("case", CASES, ids=[c.check for c in CASES])
def test_check_stays_quiet_on_the_fixed_cluster(case: Case) -> None:
    fired = [_text(f) for f in run(case.quiet(), **(case.quiet_kw or {})) if f.id == case.check]
    assert fired == []


def test_every_catalogue_id_has_a_firing_case() -> None:
    """Here, or (the symptom checks knowledge/symptoms.yaml adds) in tests/test_symptom_corpus.py."""
    from tests.test_symptom_corpus import CORPUS

    fired: set[str] = set()
    for case in CASES:
        fired |= {f.id for f in run(case.fire(), **(case.kw or {}))}
    corpus = {entry["class"] for entry in CORPUS}
    assert set(catalog()) - fired - corpus == set()
    assert {c.check for c in CASES} | corpus == set(catalog())


def test_healthy_cluster_has_no_findings() -> None:
    objs = base(*deploy("web", windows_spec()), *deploy("cart", linux_spec(), "linux-0"),
                workload("DaemonSet", "node-exporter", linux_spec(tolerations=TOLERATE_ALL), namespace="monitoring"))
    assert [(f.id, f.object.display()) for f in run(objs)] == []


def test_every_hint_is_filled_and_catalogue_entries_are_complete() -> None:
    for info in catalog().values():
        assert info.remediation.endswith("."), info.id
        assert info.severity in ("error", "warning", "info")
    for case in CASES:
        for finding in run(case.fire(), **(case.kw or {})):
            assert finding.fix, finding
            assert not re.search(r"\{[a-z_]+\}", finding.message + finding.fix.text()), finding


def _ready_as(**condition: str) -> dict[str, Any]:
    win = node("win-0", ready=False)
    win["status"]["conditions"] = [{"type": "Ready", **condition}] if condition else []
    return win


@pytest.mark.parametrize(("condition", "said"), [
    ({"status": "False"}, "(Ready is False: the kubelet gave no reason or message)"),
    ({"status": "Unknown", "reason": "NodeStatusUnknown"}, "(NodeStatusUnknown: the kubelet gave no message)"),
    ({"status": "False", "message": "PLEG is not healthy"}, "(Ready is False: PLEG is not healthy)"),
    ({}, "(no Ready condition: the node's status has none: its kubelet has not reported)"),
], ids=["no-reason", "no-message", "message-only", "no-condition"])
def test_a_node_not_ready_says_what_its_ready_condition_does_and_does_not_say(condition, said) -> None:
    """Ready False with no reason is not "no Ready condition: no message": the condition is there."""
    [found] = [f for f in run(base(win=_ready_as(**condition))) if f.id == "windows-node-not-ready"]
    assert said in found.message
    assert "kubectl describe node win-0" in " ".join(" ".join(c) for c in found.fix.commands)


def test_daemonset_that_tolerates_everything_is_an_error_not_a_warning() -> None:
    ds = workload("DaemonSet", "node-exporter", linux_spec(selector=False, tolerations=TOLERATE_ALL),
                  namespace="monitoring")
    [finding] = [f for f in run(base(ds)) if f.id == "linux-workload-can-land-on-windows"]
    assert finding.severity == "error"
    assert finding.object.display() == "monitoring/DaemonSet/node-exporter"


def test_kep_taint_scheme_is_suggested_per_build() -> None:
    win1809 = node("win-2019", build=17763, taints=[{"key": "os", "value": "Win1809", "effect": "NoSchedule"}])
    objs = [node("linux-0", os="linux"), win1809, node("win-2022", taints=[]), *agents("win-2019"),
            *agents("win-2022")]
    [finding] = [f for f in run(objs) if f.id == "windows-node-untainted"]
    assert finding.fix.commands == (("kubectl", "taint", "nodes", "win-2022", "os=Win2022:NoSchedule"),)


def test_missing_toleration_names_the_real_taint_and_appends_to_existing_tolerations() -> None:
    win = node("win-0", taints=[{"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"}])
    spec = windows_spec(toleration=False, tolerations=[{"key": "dedicated", "operator": "Exists"}])
    [finding] = [f for f in run(base(*deploy("web", spec, None), win=win))
                 if f.id == "windows-workload-missing-toleration"]
    assert "node.kubernetes.io/os=windows:NoSchedule" in finding.message
    assert '--type json -p \'[{"op":"add","path":"/spec/template/spec/tolerations/-"' in finding.fix.text()


def test_runtime_class_scheduling_counts_as_selector_and_toleration() -> None:
    rc = runtime_class("windows-2022", nodeSelector={"kubernetes.io/os": "windows"},
                       tolerations=[{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}])
    spec = windows_spec(selector=False, toleration=False, runtimeClassName="windows-2022")
    ids = {f.id for f in run(base(rc, *deploy("web", spec)))}
    assert not ids & {"windows-workload-no-os-selector", "windows-workload-missing-toleration"}


def test_hostprocess_and_hyperv_pods_are_exempt_from_build_matching() -> None:
    image = "mcr.microsoft.com/windows/servercore:ltsc2019"
    hyperv = runtime_class("hyperv", handler="runhcs-wcow-hypervisor")
    ids = {f.id for f in run(base(hyperv, *deploy("a", windows_spec(image, **HP)),
                                  *deploy("b", windows_spec(image, runtimeClassName="hyperv"))))}
    assert "image-build-mismatch" not in ids


def test_a_pool_retiring_within_a_year_is_warned_with_its_date() -> None:
    import datetime as dt

    from kubectl_win import lifecycle

    assert lifecycle.retirement("AKS", 20348, dt.date(2025, 1, 1)) is None
    status, entry = lifecycle.retirement("AKS", 20348, dt.date(2026, 12, 1))
    assert (status, entry["date"], entry["move_to"]) == ("retiring", "2027-03-15", "ltsc2025")
    assert lifecycle.retirement("AKS", 20348, dt.date(2027, 3, 15))[0] == "retired"
    assert lifecycle.retirement("GKE", 17763, dt.date(2030, 1, 1)) is None
    assert lifecycle.platform_of("gke", {"cloud.google.com/gke-nodepool": "win"}) == ("GKE", "win")
    assert lifecycle.platform_of("kubeadm", {}) is None


def test_the_report_day_dates_retirements_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """KUBECTL_WIN_TODAY makes a report of an old dump repeatable: the platform's retirements count to it as the
    patch levels do."""
    from kubectl_win import lifecycle

    monkeypatch.setenv("KUBECTL_WIN_TODAY", "2027-03-15")
    assert lifecycle.retirement("AKS", 20348)[0] == "retired"
    monkeypatch.setenv("KUBECTL_WIN_TODAY", "2025-01-01")
    assert lifecycle.retirement("AKS", 20348) is None


def test_containerd_16_is_info_and_message_says_how_port_forward_works() -> None:
    [finding] = [f for f in run(base(win=node("win-0", runtime="containerd://1.6.28")))
                 if f.id == "runtime-containerd-outdated"]
    assert finding.severity == "info"
    assert "HostProcess pods cannot be port-forwarded" in finding.message


def test_skew_policy_before_1_28_allows_two_minors() -> None:
    def skew(kubelet: str) -> list[str]:
        findings = run(base(win=node("win-0", kubelet=kubelet)), server="v1.27.3")
        return [f.id for f in findings if f.id.startswith("kubelet-") and f.object.name == "win-0"]

    assert skew("v1.24.17") == ["kubelet-too-old"]
    assert skew("v1.25.16") == []


def test_many_service_ports_make_the_load_balancer_note_a_warning() -> None:
    [finding] = [f for f in run(base(service("big", 1000))) if f.id == "windows-service-load-balancers"]
    assert finding.severity == "warning"
    assert "1000 ports" in finding.message


def test_pods_of_one_template_are_linted_once_and_reported_once() -> None:
    spec = windows_spec(securityContext={"runAsUser": 1000})
    objs = base(workload("Deployment", "web", spec),
                *(deployment_pod("web", s, spec, node="win-0") for s in ("aaaaa", "bbbbb", "ccccc")))
    explain = [f for f in run(objs) if f.id not in catalog()]
    assert explain, "explain's rules did not run on the live pods"
    assert len({f.object for f in explain}) == 1
    assert all("the same in 2 more pods of ReplicaSet/web-5d8f7c9b6" in f.message for f in explain)


def test_pods_of_a_controller_without_a_template_hash_share_a_group_only_when_their_specs_do() -> None:
    same = windows_spec(securityContext={"runAsUser": 1000})
    other = windows_spec(securityContext={"runAsUser": 2000})
    objs = base(*(pod(f"batch-{s}", same, namespace="shop", node="win-0", owner=("Job", "batch"), template_hash=None)
                  for s in ("aaaaa", "bbbbb")),
                pod("batch-ccccc", other, namespace="shop", node="win-0", owner=("Job", "batch"), template_hash=None))
    snapshot = snapshot_of(*objs)
    batch = [g for g in snapshot.pod_groups if g.pod["metadata"]["name"].startswith("batch-")]
    assert sorted(g.count for g in batch) == [1, 2]
    explain = [f for f in run_checks(snapshot) if f.id not in catalog()]
    assert {f.message.endswith("(the same in 1 more pods of Job/batch)") for f in explain} == {True, False}


def test_linux_pods_on_linux_nodes_are_counted_not_kept() -> None:
    objs = base(*(pod(f"api-{i}", linux_spec(), node="linux-0", owner=("ReplicaSet", "api-1")) for i in range(50)))
    snapshot = snapshot_of(*objs)
    assert snapshot.counts["pods"] == 52
    assert {p.name for p in snapshot.pods} == {"kube-proxy-windows-win-0", "calico-node-windows-win-0"}


def test_ntstatus_decoding_of_unknown_negative_codes() -> None:
    from kubectl_win.wincodes import decode_exit

    assert decode_exit(-1073741819) is not None and decode_exit(-1073741819).hex == "0xC0000005"
    assert decode_exit(3221225477).name == "STATUS_ACCESS_VIOLATION"  # the same code, unsigned
    assert decode_exit(-1073741800).hex == "0xC0000018"
    assert decode_exit(-1073741800).name == "(unknown NTSTATUS)"
    assert decode_exit(-2147024891).name == "HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED)"  # 0x80070005
    assert decode_exit(137) is None
    assert decode_exit(1) is None
