"""What the collection script would send from a node, built from the real-shaped HNS dumps in tests/fixtures/hns/
and real log lines (kubelet klog with escaped quotes, containerd logfmt, event-log text as the script writes it).

`node_archive` returns the tar.gz the script streams (tar.exe -czf - -C <folder> . : members named ./...),
with a manifest.json shaped as the script writes it (ConvertTo-Json of its items and leftOut lists).
"""

from __future__ import annotations

import io
import json
import tarfile
from typing import Any

from tests.support.hns_scenarios import load

# Real failure texts (tests/corpus/windows_messages.yaml has their issue links) in the shapes the
# components log them.
KUBELET_LOG = "\n".join([
    'I1201 02:09:58.102214    4424 kubelet.go:2348] "SyncLoop ADD" source="api" pods=["shop/web-7d9c8-x2kqp"]',
    'E1201 02:10:31.511870    4424 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = '
    'Unknown desc = failed to setup network for sandbox \\"5a4a06b6983a\\": hnsCall failed in Win32: The object '
    'already exists. (0x1392)"',
    'E1201 02:10:31.512001    4424 kuberuntime_manager.go:1172] "CreatePodSandbox for pod failed" err="rpc error: '
    'code = Unknown desc = failed to create containerd container: hcsshim::CreateComputeSystem 6146dc5a5124: '
    'The operating system of the container does not match the operating system of the host. (0xc0370101)" '
    'pod="shop/web-7d9c8-x2kqp"',
    'I1201 02:10:32.000000    4424 kubelet_node_status.go:76] "Attempting to register node" node="win-a"',
])
CONTAINERD_LOG = "\n".join([
    'time="2026-12-01T02:10:30.998877Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-7d9c8-x2kqp,'
    'Uid:9c1e,Namespace:shop,Attempt:0,}"',
    'time="2026-12-01T02:10:31.401234Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:web-7d9c8-x2kqp,'
    'Uid:9c1e,Namespace:shop,Attempt:0,} failed, error" error="failed to extract layer sha256:30baeec5d694: '
    'hcsshim::ImportLayer failed in Win32: Access is denied. (0x5): unknown"',
])
KUBE_PROXY_LOG = "\n".join([
    'I1201 02:11:00.000000    2212 proxier.go:1120] "Syncing proxy rules"',
    'E1201 02:11:00.512000    2212 proxier.go:1450] "Policy creation failed" err="hcnCreateLoadBalancer failed in '
    'Win32: The specified port already exists. (0x803b0013)"',
])
HNS_EVENTS = ("2026-12-01T02:05:00.0000000Z Error Service Control Manager 7031: The Host Network Service service "
              "terminated unexpectedly. It has done this 1 time(s).\n")
CONTAINERD_CONFIG = """version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "mcr.microsoft.com/oss/kubernetes/pause:3.6"
[plugins."io.containerd.grpc.v1.cri".registry.configs."registry.local".auth]
  password = "hunter2-not-redacted-on-the-node"
"""
EXCLUDED_TCP = """
Protocol tcp Port Exclusion Ranges

Start Port    End Port
----------    --------
     50000       59999
     61000       61063     *

* - Administered port exclusions.
"""
DYNAMIC_TCP = """
Protocol tcp Dynamic Port Range
---------------------------------
Start Port      : 49152
Number of Ports : 16384
"""
OS_WIN2022 = {"ProductName": "Windows Server 2022 Datacenter", "EditionID": "ServerDatacenter",
              "DisplayVersion": "21H2", "CurrentBuild": "20348", "UBR": 2762,
              "TotalVisibleMemoryKB": 16777216, "FreePhysicalMemoryKB": 8388608}


def manifest_item(name: str, file: str, outcome: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"name": name, "file": file, "command": f"# {name}", "outcome": outcome, "seconds": 0.1, **extra}


def node_files(node: str, *, disk_free_gib: float = 40.0, broken_pod_image: bool = False) -> dict[str, Any]:
    """A healthy-shaped set of collected files for win-a (V1 dump) or win-b (V2 dump)."""
    hns = load("win-a-v1.json" if node == "win-a" else "win-b-v2.json")
    files: dict[str, Any] = {
        "hns.json": hns,
        "logs/kubelet.log": KUBELET_LOG if broken_pod_image else KUBELET_LOG.splitlines()[0],
        "logs/containerd.log": CONTAINERD_LOG,
        "logs/kube-proxy.log": KUBE_PROXY_LOG,
        "events/system.log": HNS_EVENTS,
        "config/containerd/config.toml": CONTAINERD_CONFIG,
        "ports/excludedportrange-tcp.txt": EXCLUDED_TCP,
        "ports/dynamicport-tcp.txt": DYNAMIC_TCP,
        "node/os.json": OS_WIN2022,
        "node/disks.json": [{"DeviceID": "C:", "Size": 137438953472, "FreeSpace": int(disk_free_gib * (1 << 30))}],
        "node/services.json": [{"Name": "kubelet", "Status": "Running", "StartType": "Automatic"},
                               {"Name": "containerd", "Status": "Running", "StartType": "Automatic"}],
    }
    return files


def node_archive(files: dict[str, Any], *, errors: dict[str, str] | None = None,
                 left_out: list[dict[str, str]] | None = None, extra_members: list[tarfile.TarInfo] | None = None,
                 ) -> bytes:
    """The tar.gz the script streams: every file, and manifest.json recording each item."""
    items = [manifest_item(name, name) for name in files]
    for name, error in (errors or {}).items():
        items.append(manifest_item(name, "", "error", error=error))
    manifest = {"format": "kubectl-win-node/1", "startedAt": "2026-12-01T02:20:00.0000000Z", "seconds": 12.5,
                "capBytes": 209715200, "budgetSeconds": 300, "items": items, "leftOut": left_out or []}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in [*files.items(), ("manifest.json", manifest)]:
            data = content.encode() if isinstance(content, str) else json.dumps(content, indent=2).encode()
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for member in extra_members or ():
            tar.addfile(member, io.BytesIO(b"x" * member.size) if member.isreg() else None)
    return buffer.getvalue()
