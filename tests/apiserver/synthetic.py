"""A generated cluster for benchmarks and scale tests: deterministic from a seed.

N nodes (a share of them Windows, with the labels, taints and nodeInfo real nodes carry), a
kube-proxy and a CNI DaemonSet pod on every node, then Deployments (via ReplicaSets) filling up
to M pods, Services over them and Events. A few deliberate faults are sprinkled in at fixed
rates (untainted Windows nodes, Linux deployments without an OS selector, old containerd,
allocatable == capacity, crash-looping pods, HNS events) so doctor has something to find.

By default the objects are dressed as a running cluster's kube-apiserver returns them (realistic.py:
managedFields, admission's and defaulting's fields, the kubelet's full status; a pod is about 5 KB);
`realistic=False` (`shape=small` on the command line) keeps the bare objects (under 1 KB a pod), the same
cluster otherwise. Objects are stored pre-serialised: 150,000 realistic pods take about 1 GiB in the
server process, small ones a few hundred MiB.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass

from tests.apiserver import realistic
from tests.apiserver.store import Store

BASE_TIME = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)

WINDOWS_BUILDS = (  # (build label, kernelVersion, osImage, image tag, weight)
    ("10.0.17763", "10.0.17763.6189", "Windows Server 2019 Datacenter", "ltsc2019", 3),
    ("10.0.20348", "10.0.20348.2655", "Windows Server 2022 Datacenter", "ltsc2022", 6),
    ("10.0.26100", "10.0.26100.1742", "Windows Server 2025 Datacenter", "ltsc2025", 1),
)
WINDOWS_IMAGES = (
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-{tag}",
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-{tag}",
    "mcr.microsoft.com/windows/nanoserver:{tag}",
    "mcr.microsoft.com/powershell:lts-nanoserver-{tag}",
)
LINUX_IMAGES = ("nginx:1.27", "redis:7.2", "registry.k8s.io/pause:3.9", "postgres:16", "ghcr.io/example/api:2.4.1")
LINUX_KERNELS = ("5.15.0-1071-azure", "6.8.0-1015-aws", "6.1.0-25-cloud-amd64")


@dataclass(frozen=True)
class SyntheticSpec:
    nodes: int = 100
    windows_share: float = 0.2
    pods: int = 3000
    services: int | None = None  # default: one per Deployment
    events: int | None = None  # default: pods // 50
    namespaces: int | None = None  # default: pods // 1500, at least 3
    seed: int = 42
    realistic: bool = True  # dressed as a real kube-apiserver returns objects (False: the bare objects)


_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the characters Kubernetes uses for generated names


def _suffix(serial: int) -> str:
    """A pod-name suffix that looks generated but never repeats (for up to 27**5 pods): the serial
    scrambled by a multiplier coprime with 27**5, written in base 27."""
    value = (serial * 7_919 + 12_345) % 27**5
    chars = []
    for _ in range(5):
        value, digit = divmod(value, 27)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


@dataclass(frozen=True)
class _Deployment:
    namespace: str
    name: str
    labels: dict
    windows: bool
    pod: str = ""  # its first pod, which events refer to
    node: str = ""


def _ts(offset_seconds: int) -> str:
    return (BASE_TIME + dt.timedelta(seconds=offset_seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Gen:
    def __init__(self, spec: SyntheticSpec, store: Store) -> None:
        self.spec, self.store = spec, store
        self.rng = random.Random(spec.seed)
        # Dressing draws from its own stream: the same seed makes the same cluster in both shapes.
        self.dress_rng = random.Random(spec.seed * 7_919 + 1)
        self.windows_nodes: set[str] = set()
        self.counts: dict[str, int] = {}

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def put(self, obj: dict) -> None:
        if self.spec.realistic:
            obj = self.dress(obj)
        self.store.put(obj)
        self.counts[obj["kind"]] = self.counts.get(obj["kind"], 0) + 1

    def dress(self, obj: dict) -> dict:
        kind = obj["kind"]
        if kind == "Pod":
            return realistic.pod(obj, self.dress_rng, obj["spec"].get("nodeName") in self.windows_nodes)
        if kind == "Node":
            if obj["metadata"]["labels"].get("kubernetes.io/os") == "windows":
                self.windows_nodes.add(obj["metadata"]["name"])
            return realistic.node(obj, self.dress_rng)
        if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
            return realistic.workload(obj)
        if kind == "Event":
            return realistic.event(obj)
        return obj

    # -- nodes -----------------------------------------------------------------------------------
    def nodes(self) -> tuple[list[tuple[str, str]], list[str]]:
        """Create the nodes; returns [(windows node, image tag)] and [linux node]."""
        spec, rng = self.spec, self.rng
        n_win = round(spec.nodes * spec.windows_share)
        windows, linux = [], []
        weights = [b[4] for b in WINDOWS_BUILDS]
        for i in range(spec.nodes):
            is_windows = i < n_win
            name = f"akswin{i:06d}" if is_windows else f"aks-linux-{i - n_win:06d}"
            zone = f"eastus-{1 + i % 3}"
            labels = {
                "kubernetes.io/arch": "amd64", "beta.kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": "Standard_D4s_v3" if is_windows else "Standard_D8s_v3",
                "agentpool": "win" if is_windows else "linux",
            }
            taints = []
            capacity_mem = 16 * 1024 * 1024 if is_windows else 32 * 1024 * 1024  # KiB
            if is_windows:
                build, kernel, image, tag, _ = rng.choices(WINDOWS_BUILDS, weights)[0]
                labels.update({"kubernetes.io/os": "windows", "beta.kubernetes.io/os": "windows",
                               "node.kubernetes.io/windows-build": build})
                if i % 10 != 3:  # one in ten Windows nodes is left untainted
                    taints.append({"key": "os", "value": "windows", "effect": "NoSchedule"})
                containerd = "1.6.21" if i % 25 == 7 else "1.7.20"
                node_info = {"kernelVersion": kernel, "osImage": image, "operatingSystem": "windows",
                             "containerRuntimeVersion": f"containerd://{containerd}",
                             "kubeletVersion": "v1.31.2" if i % 7 == 0 else "v1.32.1",
                             "kubeProxyVersion": "v1.32.1", "architecture": "amd64",
                             "machineID": name, "systemUUID": self.uid().upper(), "bootID": ""}
                windows.append((name, tag))
            else:
                labels.update({"kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux"})
                node_info = {"kernelVersion": rng.choice(LINUX_KERNELS), "osImage": "Ubuntu 22.04.5 LTS",
                             "operatingSystem": "linux", "containerRuntimeVersion": "containerd://1.7.20-1",
                             "kubeletVersion": "v1.32.1", "kubeProxyVersion": "v1.32.1",
                             "architecture": "amd64", "machineID": self.uid().replace("-", ""),
                             "systemUUID": self.uid(), "bootID": self.uid()}
                linux.append(name)
            reserved = 0 if (is_windows and i % 8 == 5) else 2 * 1024 * 1024
            ready = "False" if i % 50 == 49 else "True"
            node = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "uid": self.uid(), "labels": labels,
                             "creationTimestamp": _ts(i * 7),
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                             "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                "spec": {"podCIDR": f"10.{244 + i // 65536}.{(i // 256) % 256}.{i % 256}/24",
                         "providerID": f"azure:///subscriptions/0/resourceGroups/mc/providers/vm/{name}",
                         **({"taints": taints} if taints else {})},
                "status": {
                    "capacity": {"cpu": "4" if is_windows else "8", "memory": f"{capacity_mem}Ki", "pods": "30"},
                    "allocatable": {"cpu": "3860m" if is_windows else "7820m",
                                    "memory": f"{capacity_mem - reserved}Ki", "pods": "30"},
                    "conditions": [
                        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"},
                        {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure"},
                        {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID"},
                        {"type": "Ready", "status": ready,
                         "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
                         "lastTransitionTime": _ts(i * 7 + 60)},
                    ],
                    "addresses": [{"type": "InternalIP", "address": f"10.224.{i // 256}.{i % 256}"},
                                  {"type": "Hostname", "address": name}],
                    "nodeInfo": node_info,
                },
            }
            self.put(node)
        return windows, linux

    # -- workloads -------------------------------------------------------------------------------
    def namespaces(self) -> list[str]:
        n = self.spec.namespaces or max(3, self.spec.pods // 1500)
        names = [f"team-{i:03d}" for i in range(n)]
        for ns in ["default", "kube-system", *names]:
            self.put({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": ns, "uid": self.uid(), "creationTimestamp": _ts(0),
                                   "labels": {"kubernetes.io/metadata.name": ns}},
                      "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        return names

    def _pod(self, name: str, namespace: str, labels: dict, owner: dict, node: str, image: str, windows: bool,
             extra_spec: dict, created: int) -> dict:
        rng = self.rng
        roll = rng.random()
        if roll < 0.9:
            phase, state, ready, restarts = "Running", {"running": {"startedAt": _ts(created + 30)}}, True, 0
        elif roll < 0.95:
            phase, ready = "Running", False
            restarts = rng.randint(3, 40)
            state = {"waiting": {"reason": "CrashLoopBackOff",
                                 "message": "back-off 5m0s restarting failed container"}}
        else:
            phase, state, ready, restarts = "Pending", {"waiting": {"reason": "ContainerCreating"}}, False, 0
        container = labels.get("app", name)
        spec = {
            "containers": [{"name": container, "image": image,
                            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"},
                                          **({"limits": {"memory": "512Mi"}} if not windows or roll < 0.7 else {})},
                            "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
            "nodeName": node, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
            **extra_spec,
        }
        status = {
            "phase": phase, "hostIP": "10.224.0.1", "podIP": f"10.244.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
            "startTime": _ts(created + 5), "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"},
                           {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": container, "image": image, "ready": ready, "restartCount": restarts,
                                   "imageID": f"{image.split(':')[0]}@sha256:{self.rng.getrandbits(256):064x}",
                                   "started": ready, "state": state,
                                   "containerID": f"containerd://{self.rng.getrandbits(128):032x}"}],
        }
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "uid": self.uid(), "labels": labels,
                             "creationTimestamp": _ts(created), "ownerReferences": [owner]},
                "spec": spec, "status": status}

    def daemonsets(self, windows: list[tuple[str, str]], linux: list[str]) -> int:
        """kube-proxy and a CNI agent on every node (Windows flavours on Windows nodes)."""
        made = 0
        win_select = {"kubernetes.io/os": "windows"}
        win_tol = [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]
        sets = [
            ("kube-proxy", "registry.k8s.io/kube-proxy:v1.32.1", list(linux), False),
            ("kube-proxy-windows", "sigwindowstools/kube-proxy:v1.32.1-calico-hostprocess",
             [n for n, _ in windows], True),
            ("calico-node", "docker.io/calico/node:v3.28.1", list(linux), False),
            ("calico-node-windows", "docker.io/calico/node-windows:v3.28.1", [n for n, _ in windows], True),
        ]
        for ds_name, image, nodes, is_windows in sets:
            if not nodes:
                continue
            labels = {"k8s-app": ds_name}
            ds_uid = self.uid()
            # The DaemonSet controller labels its pods with the template's revision hash, as real ones are.
            pod_labels = {**labels, "controller-revision-hash": f"{self.rng.getrandbits(40):010x}"[:10],
                          "pod-template-generation": "1"}
            pod_spec: dict = {"nodeSelector": win_select if is_windows else {"kubernetes.io/os": "linux"}}
            if is_windows:
                pod_spec["tolerations"] = win_tol
                pod_spec["securityContext"] = {"windowsOptions": {"hostProcess": True,
                                                                  "runAsUserName": "NT AUTHORITY\\system"}}
                pod_spec["hostNetwork"] = True
            self.put({"apiVersion": "apps/v1", "kind": "DaemonSet",
                      "metadata": {"name": ds_name, "namespace": "kube-system", "uid": ds_uid, "labels": labels,
                                   "creationTimestamp": _ts(10)},
                      "spec": {"selector": {"matchLabels": labels},
                               "template": {"metadata": {"labels": labels},
                                            "spec": {**pod_spec, "containers": [{"name": ds_name, "image": image}]}}},
                      "status": {"desiredNumberScheduled": len(nodes), "numberReady": len(nodes)}})
            owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds_name, "uid": ds_uid,
                     "controller": True, "blockOwnerDeletion": True}
            for node in nodes:
                if made >= self.spec.pods:
                    return made
                suffix = _suffix(self.counts.get("Pod", 0))
                self.put(self._pod(f"{ds_name}-{suffix}", "kube-system", pod_labels, owner, node, image,
                                   is_windows, pod_spec, 20))
                made += 1
        return made

    def deployments(self, namespaces: list[str], windows: list[tuple[str, str]], linux: list[str],
                    budget: int) -> list[_Deployment]:
        """Deployments of 2-12 replicas until the pod budget is spent."""
        rng, made, index, out = self.rng, 0, 0, []
        win_share = self.spec.windows_share
        while made < budget:
            ns = namespaces[index % len(namespaces)]
            is_windows = bool(windows) and (not linux or rng.random() < win_share)
            replicas = min(rng.randint(2, 12), budget - made)
            app = f"{'win' if is_windows else 'app'}-{index:05d}"
            labels = {"app": app, "tier": rng.choice(("web", "api", "worker"))}
            pod_spec: dict = {}
            if is_windows:
                tag = rng.choice(windows)[1]
                image = rng.choice(WINDOWS_IMAGES).format(tag=tag)
                pod_spec["nodeSelector"] = {"kubernetes.io/os": "windows"}
                if index % 9 != 4:
                    pod_spec["tolerations"] = [{"key": "os", "operator": "Equal", "value": "windows",
                                                "effect": "NoSchedule"}]
                candidates = [n for n, t in windows if t == tag] or [n for n, _ in windows]
            else:
                image = rng.choice(LINUX_IMAGES)
                if index % 6 != 1:  # some Linux deployments forget the OS selector
                    pod_spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
                candidates = linux
            dep_uid, rs_uid = self.uid(), self.uid()
            hash_ = f"{rng.getrandbits(40):010x}"[:10]
            template = {"metadata": {"labels": labels},
                        "spec": {**pod_spec, "containers": [{"name": app, "image": image}]}}
            created = 3600 + index * 13
            self.put({"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": app, "namespace": ns, "uid": dep_uid, "labels": labels,
                                   "creationTimestamp": _ts(created)},
                      "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template},
                      "status": {"replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas,
                                 "availableReplicas": replicas}})
            rs_labels = {**labels, "pod-template-hash": hash_}
            rs_template = {"metadata": {"labels": rs_labels}, "spec": template["spec"]}
            self.put({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                      "metadata": {"name": f"{app}-{hash_}", "namespace": ns, "uid": rs_uid, "labels": rs_labels,
                                   "creationTimestamp": _ts(created),
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                                                        "uid": dep_uid, "controller": True}]},
                      "spec": {"replicas": replicas, "selector": {"matchLabels": rs_labels}, "template": rs_template},
                      "status": {"replicas": replicas, "readyReplicas": replicas}})
            owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-{hash_}", "uid": rs_uid,
                     "controller": True, "blockOwnerDeletion": True}
            pod_labels = rs_labels  # the ReplicaSet's pods carry its template hash, as real ones do
            pods = []
            for _ in range(replicas):
                node = rng.choice(candidates) if candidates else ""
                pod_name = f"{app}-{hash_}-{_suffix(self.counts.get('Pod', 0))}"
                self.put(self._pod(pod_name, ns, pod_labels, owner, node, image, is_windows, pod_spec, created + 20))
                pods.append((pod_name, node))
            out.append(_Deployment(ns, app, labels, is_windows, pods[0][0], pods[0][1]))
            made += replicas
            index += 1
        return out

    def services(self, deployments: list[_Deployment]) -> None:
        count = self.spec.services if self.spec.services is not None else len(deployments)
        for i in range(count):
            d = deployments[i % len(deployments)] if deployments else _Deployment("default", f"svc-{i}", {}, False)
            ns, app, labels = d.namespace, d.name, d.labels
            name = app if i < len(deployments) else f"{app}-{i}"
            self.put({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": name, "namespace": ns, "uid": self.uid(), "creationTimestamp": _ts(4000)},
                      "spec": {"type": "ClusterIP", "clusterIP": f"10.0.{(i // 250) % 256}.{i % 250 + 1}",
                               "selector": {"app": labels.get("app", name)},
                               "ports": [{"port": 80, "targetPort": 80, "protocol": "TCP"}]}})

    def events(self, deployments: list[_Deployment]) -> None:
        """Windows failure events on Windows pods, everyday events on any pod."""
        count = self.spec.events if self.spec.events is not None else self.spec.pods // 50
        templates = (
            ("Warning", "FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = "
             "failed to setup network for sandbox: hcnCreateEndpoint failed in Win32: The object already exists. "
             "(0x1392)"),
            ("Warning", "Failed", "Failed to pull image: rpc error: code = NotFound desc = failed to resolve "
             "reference: no match for platform in manifest: not found"),
            ("Warning", "BackOff", "Back-off restarting failed container"),
            ("Normal", "Pulled", "Successfully pulled image in 12.3s"),
            ("Normal", "Scheduled", "Successfully assigned pod to node"),
        )
        on_windows = [d for d in deployments if d.windows] or deployments
        for i in range(count):
            etype, reason, message = templates[i % len(templates)]
            pool = on_windows if i % len(templates) < 2 else deployments
            if not pool:
                return
            d = pool[(i // len(templates)) % len(pool)]
            self.put({"apiVersion": "v1", "kind": "Event",
                      "metadata": {"name": f"{d.pod}.{i:08x}", "namespace": d.namespace, "uid": self.uid(),
                                   "creationTimestamp": _ts(5000 + i)},
                      "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": d.pod,
                                         "namespace": d.namespace},
                      "reason": reason, "message": message, "type": etype, "count": 1 + i % 5,
                      "source": {"component": "kubelet", "host": d.node},
                      "firstTimestamp": _ts(5000 + i), "lastTimestamp": _ts(5000 + i)})

    def runtime_classes(self, windows: list[tuple[str, str]]) -> None:
        for build, _, _, tag, _ in WINDOWS_BUILDS:
            if not any(t == tag for _, t in windows):
                continue
            self.put({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                      "metadata": {"name": f"windows-{tag}", "uid": self.uid(), "creationTimestamp": _ts(0)},
                      "handler": "runhcs-wcow-process",
                      "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows",
                                                      "node.kubernetes.io/windows-build": build},
                                     "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                                                      "effect": "NoSchedule"}]}})


def generate(store: Store, spec: SyntheticSpec | None = None, **overrides: object) -> dict[str, int]:
    """Fill `store` with a synthetic cluster; returns object counts by kind."""
    spec = spec or SyntheticSpec(**overrides)  # type: ignore[arg-type]
    gen = _Gen(spec, store)
    namespaces = gen.namespaces()
    windows, linux = gen.nodes()
    gen.runtime_classes(windows)
    made = gen.daemonsets(windows, linux) if spec.pods >= 4 * spec.nodes else 0
    deployments = gen.deployments(namespaces, windows, linux, spec.pods - made)
    gen.services(deployments)
    gen.events(deployments)
    return gen.counts
