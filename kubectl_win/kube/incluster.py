"""In-cluster configuration, read the way client-go reads it (rest.InClusterConfig, clientcmd's
inClusterClientConfig and transport's cached file token source).

- Possible when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are both set and the service
  account token file is a file; the server is https://HOST:PORT (IPv6 hosts bracketed).
- The token is re-read from its file at most once a minute (the kubelet rotates bound service account
  tokens, which expire), and at once after a 401; a failed or empty re-read keeps the last token, as
  client-go does, so a rotation caught half-way never fails a request.
- ca.crt is the trust root when it can be read; without it the system's roots are used (client-go logs
  and goes on the same way).
- The namespace is --namespace, else $POD_NAMESPACE (the downward API), else the namespace file, else
  `default`.

Hand-written rather than the kubernetes package's InClusterConfigLoader, which raises from inside a
request when a re-read fails, refuses a missing ca.crt and knows nothing of POD_NAMESPACE.

Tests point these files elsewhere with $KUBECTL_WIN_TEST_INCLUSTER_DIR and set the re-read period in
seconds with $KUBECTL_WIN_TEST_INCLUSTER_TOKEN_PERIOD; no user-facing path reads either.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubectl_win.kube.errors import NoKubeconfig

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TOKEN_PERIOD = 60.0  # client-go's NewCachedFileTokenSource re-reads the file once a minute
_TEST_ENV = "KUBECTL_WIN_TEST_INCLUSTER_"


def service_account_dir() -> Path:
    return Path(os.environ.get(_TEST_ENV + "DIR") or SERVICE_ACCOUNT_DIR)


def possible() -> bool:
    """clientcmd's inClusterClientConfig.Possible: the service's host and port set, the token file a file."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")
                and (service_account_dir() / "token").is_file())


def join_host_port(host: str, port: str) -> str:
    """Go's net.JoinHostPort."""
    return f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"


class TokenFile:
    """A bearer token file re-read at most once per `period` seconds; a failed or empty re-read keeps the
    last token (the first read must succeed)."""

    def __init__(self, path: Path, period: float = TOKEN_PERIOD) -> None:
        self.path = path
        self.period = period
        self._lock = threading.Lock()
        self._token = self._read()
        if not self._token:
            raise NoKubeconfig(f"in-cluster config: the service account token {path} is empty")
        self._read_at = time.monotonic()

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            if not hasattr(self, "_token"):
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise NoKubeconfig(f"in-cluster config: cannot read the service account token {self.path}: "
                                   f"{reason}") from None
            return ""

    def token(self) -> str:
        with self._lock:
            if time.monotonic() - self._read_at >= self.period:
                fresh = self._read()
                if fresh:
                    self._token = fresh
                    self._read_at = time.monotonic()
            return self._token

    def expire(self) -> None:
        """Re-read on the next use (after a 401: the kubelet may have rotated the token already)."""
        with self._lock:
            self._read_at = float("-inf")


def _period() -> float:
    try:
        return max(0.0, float(os.environ.get(_TEST_ENV + "TOKEN_PERIOD") or TOKEN_PERIOD))
    except ValueError:
        return TOKEN_PERIOD


def service_account(namespace: str | None) -> tuple[Any, str, Callable[[], None]]:
    """(kubernetes.client.Configuration, namespace, force a token re-read) from the pod's service account;
    `namespace`: -n, which wins over $POD_NAMESPACE and the namespace file."""
    from kubernetes.client import Configuration

    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not (host and port):
        raise NoKubeconfig("unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST and "
                           "KUBERNETES_SERVICE_PORT must be defined")
    folder = service_account_dir()
    tokens = TokenFile(folder / "token", _period())
    cfg = Configuration()
    cfg.host = "https://" + join_host_port(host, port)
    ca = folder / "ca.crt"
    cfg.ssl_ca_cert = str(ca) if _readable(ca) else None
    cfg.api_key_prefix["BearerToken"] = "Bearer"

    def refresh(configuration: Any) -> None:
        configuration.api_key["BearerToken"] = tokens.token()

    refresh(cfg)
    cfg.refresh_api_key_hook = refresh
    namespace = namespace or os.environ.get("POD_NAMESPACE") or _namespace_file(folder) or "default"
    return cfg, namespace, tokens.expire


def _readable(path: Path) -> bool:
    try:
        return bool(path.read_bytes().strip())
    except OSError:
        return False


def _namespace_file(folder: Path) -> str:
    try:
        return (folder / "namespace").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""
