"""The one cluster access layer: kubeconfig and context like kubectl, raw-JSON paged lists,
timeouts, bounded retries and typed one-line errors. Heavy imports happen inside functions."""

from kubectl_win.kube.client import Cluster, WebsocketArgs, connect
from kubectl_win.kube.config import KubeFlags
from kubectl_win.kube.errors import (
    ApiError,
    ClusterUnreachable,
    CredentialPluginError,
    Forbidden,
    KubeconfigError,
    NoKubeconfig,
    NotFound,
    Unauthorized,
)
from kubectl_win.kube.resources import ResourceInfo, resolve

__all__ = [
    "ApiError", "Cluster", "ClusterUnreachable", "CredentialPluginError", "Forbidden", "KubeFlags",
    "KubeconfigError", "NoKubeconfig", "NotFound", "ResourceInfo", "Unauthorized", "WebsocketArgs", "connect",
    "resolve",
]
