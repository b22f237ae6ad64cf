"""Typed errors of the access layer; each prints as one line and carries its exit code."""

from __future__ import annotations

from kubectl_win.errors import ClusterUnreachable, ExitStatus, InputError, KubectlWinError


class KubeconfigError(InputError):
    """The kubeconfig is unreadable, malformed, or names a context/cluster/user it does not have."""


class NoKubeconfig(ClusterUnreachable):
    """No kubeconfig file and not running inside a cluster."""


class CredentialPluginError(ClusterUnreachable):
    """The kubeconfig's exec credential plugin failed, so there is nothing to authenticate with."""


class ApiError(KubectlWinError):
    """The API server answered with an error status."""

    exit_code = ExitStatus.UNREACHABLE

    def __init__(self, message: str, status: int = 0, reason: str = "", exit_code: int | None = None) -> None:
        super().__init__(message, exit_code)
        self.status = status
        self.reason = reason


class Unauthorized(ApiError):
    """401: the credentials were rejected."""


class Forbidden(ApiError):
    """403: RBAC denied one verb on one resource; callers may skip that resource and go on."""

    def __init__(self, message: str, resource: str, verb: str, namespace: str | None = None) -> None:
        super().__init__(message, 403, "Forbidden")
        self.resource = resource
        self.verb = verb
        self.namespace = namespace


class NotFound(ApiError):
    """404: the named object (or the API path) does not exist."""

    exit_code = ExitStatus.USAGE

    def __init__(self, message: str, resource: str = "", name: str = "", namespace: str | None = None) -> None:
        super().__init__(message, 404, "NotFound", ExitStatus.USAGE)
        self.resource = resource
        self.name = name
        self.namespace = namespace


__all__ = ["ApiError", "ClusterUnreachable", "CredentialPluginError", "Forbidden", "KubeconfigError",
           "NoKubeconfig", "NotFound", "Unauthorized"]
