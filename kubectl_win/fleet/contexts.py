"""Which contexts a fleet command scans, and the name a cluster's metrics carry in their `cluster` label."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubectl_win.kube import KubeFlags

IN_CLUSTER = "in-cluster"  # the label of the cluster a pod runs in, read with no kubeconfig


def context_label(flags: KubeFlags) -> str:
    """The context doctor reads with these flags (--context, else the kubeconfig's current one); in a pod
    without a kubeconfig, "in-cluster"."""
    from kubectl_win.kube.config import load

    return flags.context or load(flags).context or IN_CLUSTER


def all_contexts(kubeconfig: str | None, what: str = "reading every context") -> list[str]:
    """Every context of the merged kubeconfig, in its order; `what` (the flag that asks) names the request in
    errors."""
    return _contexts(kubeconfig, what)


def check_contexts(kubeconfig: str | None, names: Iterable[str], what: str = "choosing a context") -> None:
    """Refuse a context the kubeconfig does not define, before anything is served."""
    known = _contexts(kubeconfig, what)
    for name in names:
        if name not in known:
            from kubectl_win.kube.errors import KubeconfigError

            raise KubeconfigError(f'context "{name}" not found in the kubeconfig (available: {", ".join(known)})')


def _contexts(kubeconfig: str | None, what: str) -> list[str]:
    from kubectl_win.errors import UsageError
    from kubectl_win.kube import KubeFlags
    from kubectl_win.kube.config import context_names, kubeconfig_paths

    flags = KubeFlags(kubeconfig=kubeconfig)
    paths = kubeconfig_paths(flags)
    if not paths:
        raise UsageError(f"{what} needs a kubeconfig (use --kubeconfig or set KUBECONFIG)")
    names = context_names(flags)
    if not names:
        raise UsageError(f"{what}: no context in {', '.join(str(p) for p in paths)}")
    return names
