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
     'unpack image "contoso.azurecr.io/shop/web:2.4": failed to resolve reference "contoso.azurecr.io/shop/web:2.4": '
     'failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized'),
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
     'Internal error occurred: failed calling webhook "admission-webhook.windows-gmsa.sigs.k8s.io": Post '
     '"https://gmsa-webhook.kube-system.svc:443/validate?timeout=10s": x509: certificate signed by unknown '
     'authority'),
    ("api", "Pod", "FailedCreate",
     'Error creating: pods "web-1" is forbidden: violates PodSecurity "baseline:latest": hostProcess (container '
     '"app" must not set securityContext.windowsOptions.hostProcess=true)'),
)

NODE = "win-0"
AGENTS = (("kube-system", "antrea-agent-windows-7xk2p"), ("kube-system", "csi-smb-node-win-2hq9d"),
          ("kube-system", "kube-proxy-windows-b8zqm"))
MARKER = "<!-- worked example: {subsystem} -->"


def cluster(subsystem: str) -> list[dict]:
    """A Windows node with its node agents, a Windows pod shop/web-1 on it, and the example's Warning event."""
    from tests.support.kube_objects import event, node, pod, windows_spec

    [(kind, reason, message)] = [(k, r, m) for s, k, r, m in EXAMPLES if s == subsystem]
    spec = windows_spec()
    objs = [node(NODE), pod("web-1", spec, node=NODE)]
    objs += [pod(name, spec, namespace=namespace, node=NODE) for namespace, name in AGENTS]
    involved = ("Node", "", NODE) if kind == "Node" else ("Pod", "shop", "web-1")
    objs.append(event(involved, reason, message, host=NODE, count=2))
    return objs


def rendered(subsystem: str) -> list[str]:
    """What doctor says about the example: the event, the finding and its fix, as docs/doctor.md shows them."""
    from kubectl_win.doctor.checks.plan import run_checks
    from kubectl_win.shells import quote_command
    from tests.support.kube_objects import snapshot_of

    [(kind, reason, message)] = [(k, r, m) for s, k, r, m in EXAMPLES if s == subsystem]
    [found] = [f for f in run_checks(snapshot_of(*cluster(subsystem))) if f.id == f"windows-{subsystem}-failure"]
    on = f"Node/{NODE}" if kind == "Node" else "shop/Pod/web-1"
    return [f"event    Warning {reason} on {on} (node {NODE}, 2x)", f"         {message}",
            f"finding  {found.id} ({found.severity}, confidence: {found.confidence})", f"         {found.message}",
            f"fix      {found.fix.note}",
            *(f"         {quote_command(argv)}" for argv in found.fix.commands)]


def shown(text: str, subsystem: str) -> list[str]:
    """The lines docs/doctor.md shows for the example (the text block after its marker)."""
    marker = MARKER.format(subsystem=subsystem)
    if marker not in text:
        return []
    block = text.split(marker, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return block.rstrip("\n").split("\n") if block.strip() else []


def update(path: str) -> None:
    """Rewrite each example's block in the file from what doctor says now."""
    import re
    from pathlib import Path

    file = Path(path)
    text = file.read_text(encoding="utf-8")
    for subsystem, *_ in EXAMPLES:
        marker = re.escape(MARKER.format(subsystem=subsystem))
        block = "\n".join(rendered(subsystem))
        new = f"{MARKER.format(subsystem=subsystem)}\n```text\n{block}\n```"
        text = re.sub(marker + r"\n```text\n.*?```", lambda _m, new=new: new, text, count=1, flags=re.S)
    file.write_text(text, encoding="utf-8")


if __name__ == "__main__":  # python -m tests.support.model_examples docs/doctor.md
    import sys

    update(sys.argv[1])
