"""Well-known node labels and taint keys of Windows nodes, defined once for explain, doctor and scaffold.

The taint keys live in knowledge/taints.yaml (with the schemes that use them); the labels are fixed by
Kubernetes (k8s.io/api/core/v1 well_known_labels.go) and are plain constants here.
"""

from __future__ import annotations

from functools import cache

OS_LABEL = "kubernetes.io/os"
LEGACY_OS_LABEL = "beta.kubernetes.io/os"
OS_LABELS = (OS_LABEL, LEGACY_OS_LABEL)
ARCH_LABEL = "kubernetes.io/arch"
BUILD_LABEL = "node.kubernetes.io/windows-build"


@cache
def windows_taint_keys() -> frozenset[str]:
    """Keys of the taints the Windows schemes use (knowledge/taints.yaml windows_taint_keys)."""
    from kubectl_win.knowledge import load

    return frozenset(load("taints")["windows_taint_keys"])
