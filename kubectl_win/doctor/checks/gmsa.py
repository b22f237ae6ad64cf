"""gMSA credential specs that do not exist, and HostProcess workloads vs the namespace's Pod Security level."""

from __future__ import annotations

from kubectl_win.catalog import finding
from kubectl_win.doctor.checks import knowledge
from kubectl_win.doctor.records import Snapshot
from kubectl_win.findings import Finding

PSA_ENFORCE = "pod-security.kubernetes.io/enforce"


def run(snapshot: Snapshot) -> list[Finding]:
    return _gmsa(snapshot) + _host_process(snapshot)


def _gmsa(snapshot: Snapshot) -> list[Finding]:
    if "gmsacredentialspecs" not in snapshot.read:
        return []  # forbidden or not read: the skipped list says so
    specs = snapshot.gmsa_specs
    out = []
    for workload in snapshot.workload_security:
        for path, name in workload.gmsa:
            if specs is None:
                out.append(finding("gmsa-crd-missing", workload.ref, path, ignores=workload.ignores,
                                   object=workload.ref.display(), spec=name))
            elif name not in specs:
                known = f" (existing: {', '.join(sorted(specs))})" if specs else " (the cluster has none)"
                out.append(finding("gmsa-credential-spec-missing", workload.ref, path, ignores=workload.ignores,
                                   object=workload.ref.display(), spec=name, where=path, known=known))
    return out


def _host_process(snapshot: Snapshot) -> list[Finding]:
    if "namespaces" not in snapshot.read:
        return []
    rejected = set(knowledge("hostprocess_rejected_by"))
    out = []
    for workload in snapshot.workload_security:
        if not workload.host_process or not workload.ref.namespace:
            continue
        labels = snapshot.namespaces.get(workload.ref.namespace, {})
        level = labels.get(PSA_ENFORCE, "")
        if level in rejected:
            out.append(finding("hostprocess-blocked-by-pod-security", workload.ref,
                               workload.spec_path + ".securityContext.windowsOptions.hostProcess",
                               ignores=workload.ignores, object=workload.ref.display(),
                               namespace=workload.ref.namespace, level=level))
    return out
