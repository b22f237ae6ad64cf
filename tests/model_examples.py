"""One failure per subsystem of the node stack, written for the tests and docs/doctor.md from the structure of
each component's errors (no report has these texts), each placed by the model (doctor/signatures/model.py):
(subsystem, object kind, event reason, message)."""

from __future__ import annotations

EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    ("network", "Pod", "FailedCreatePodSandBox",
     'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "9f3c": '
     'plugin type="antrea" failed (add): the agent has not set up br-int yet: The device is not ready.'),
    ("dns", "Pod", "Unhealthy",
     "Readiness probe failed: Resolve-DnsName : orders-db.shop.svc.cluster.local : DNS name does not exist"),
    ("proxy", "Node", "KubeProxySyncFailed",
     'kube-proxy: syncProxyRules failed: "Failed to enable DSR" err="WinDSR is not supported on this build" '
     'enableDSR=true'),
    ("volume", "Pod", "FailedMount",
     'MountVolume.SetUp failed for volume "reports" : mklink C:\\var\\lib\\kubelet\\pods\\4c1e\\volumes\\'
     'kubernetes.io~empty-dir\\reports: The filename or extension is too long.'),
    ("image", "Pod", "Failed",
     'Failed to pull image "contoso.azurecr.io/shop/web:2.4": rpc error: code = Unknown desc = failed to pull and '
     'unpack image "contoso.azurecr.io/shop/web:2.4": failed to copy: write '
     'C:\\ProgramData\\containerd\\root\\io.containerd.content.v1.content\\ingest\\5b1e\\data: There is not enough '
     'space on the disk.'),
    ("runtime", "Pod", "Failed",
     "Error: failed to start containerd task \"web\": hcs::System::Start 9a1: The process cannot access the file "
     "because it is being used by another process."),
    ("node", "Node", "KubeletNotReady",
     "container runtime is down: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error "
     "while dialing: open \\\\.\\pipe\\containerd-containerd: All pipe instances are busy.\""),
    ("resources", "Node", "EvictionThresholdMet",
     "Attempting to reclaim memory: the node's commit charge is near its limit: Insufficient system resources exist "
     "to complete the requested service. MemoryPressure"),
    ("identity", "Pod", "FailedCreate",
     'admission webhook "admission-webhook.windows-gmsa.sigs.k8s.io" denied the request: service account '
     '"shop:web" is not authorized to use gMSA "webapp1"'),
)
