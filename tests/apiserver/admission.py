"""Pod Security admission, as far as the tests need it: the baseline and restricted levels reject
host namespaces and HostProcess pods, with kube-apiserver's wording."""

from __future__ import annotations

ENFORCE = "pod-security.kubernetes.io/enforce"


def pod_security_violation(pod: dict, namespace_labels: dict) -> str | None:
    """The Forbidden message for a pod the namespace's enforce level rejects, else None."""
    level = namespace_labels.get(ENFORCE)
    if level not in ("baseline", "restricted"):
        return None
    spec = pod.get("spec") or {}
    problems = []
    if spec.get("hostNetwork"):
        problems.append("host namespaces (hostNetwork=true)")
    host_process = ((spec.get("securityContext") or {}).get("windowsOptions") or {}).get("hostProcess")
    if host_process:
        names = " and ".join(f'container "{c.get("name")}"' for c in spec.get("containers") or ())
        problems.append(f"hostProcess (pod and {names} must not set securityContext.windowsOptions.hostProcess=true)")
    if not problems:
        return None
    version = namespace_labels.get(f"{ENFORCE}-version", "latest")
    name = (pod.get("metadata") or {}).get("name") or ""
    return f'pods "{name}" is forbidden: violates PodSecurity "{level}:{version}": ' + ", ".join(problems)
