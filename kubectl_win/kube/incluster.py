"""In-cluster configuration, read the way client-go reads it (rest.InClusterConfig, clientcmd's
inClusterClientConfig and transport's cached file token source).

- Possible when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are both set and the service
  account token file is a file; the server is https://HOST:PORT (IPv6 hosts bracketed).
- The token is re-read from its file at most once a minute (the kubelet rotates bound service account
  tokens, which expire), and at once after a 401; a failed, empty or malformed re-read (a line break inside)
  keeps the last good token until it expires (its `exp` claim), as client-go's cached token source does, so
  a rotation caught half-way never fails a scan. The token is kept per file for the life of the process (a
  later scan that finds the file briefly missing still has it). Each failed re-read is logged once, on the
  `kubectl_win` logger, saying what happened.
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
    """clientcmd's inClusterClientConfig.Possible (the service's host and port set, the token file a file),
    and also while the token file is briefly gone: its folder is there, or this process has read it before."""
    if not (os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")):
        return False
    folder = service_account_dir()
    return (folder / "token").is_file() or folder.is_dir() or str(folder / "token") in _TOKENS


def join_host_port(host: str, port: str) -> str:
    """Go's net.JoinHostPort."""
    return f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"


class TokenFile:
    """A bearer token file re-read at most once per `period` seconds; a failed, empty or malformed re-read
    keeps the last good token until it expires (the first read must succeed)."""

    def __init__(self, path: Path, period: float = TOKEN_PERIOD) -> None:
        self.path = path
        self.period = period
        self._lock = threading.Lock()
        token, problem = self._read()
        if problem:
            raise NoKubeconfig(f"in-cluster config: {problem}")
        self._token = token
        self._read_at = time.monotonic()
        self._reported = ""

    def _read(self) -> tuple[str, str]:
        """(token, "") or ("", what went wrong)."""
        try:
            token = self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return "", f"cannot read the service account token {self.path}: {reason}"
        if not token:
            return "", f"the service account token {self.path} is empty"
        if any(ch.isspace() or not ch.isprintable() for ch in token):
            return "", f"the service account token {self.path} holds a line break or other white space"
        return token, ""

    def token(self) -> str:
        with self._lock:
            if time.monotonic() - self._read_at >= self.period:
                fresh, problem = self._read()
                if fresh:
                    self._token, self._read_at, self._reported = fresh, time.monotonic(), ""
                else:
                    self._keep_or_fail(problem)
            return self._token

    def _keep_or_fail(self, problem: str) -> None:
        expires = expiry_of(self._token)
        if expires is not None and expires <= time.time():
            raise NoKubeconfig(f"in-cluster config: {problem}, and the last token read expired "
                               f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(expires))}")
        if problem != self._reported:  # once per kind of failure, not on every request
            import logging

            logging.getLogger("kubectl_win").warning("in-cluster config: %s; the last good token is kept", problem)
            self._reported = problem

    def expire(self) -> None:
        """Re-read on the next use (after a 401: the kubelet may have rotated the token already)."""
        with self._lock:
            self._read_at = float("-inf")


_TOKENS: dict[str, TokenFile] = {}  # by path: the process's cached token source, shared by every scan
_TOKENS_LOCK = threading.Lock()


def token_file(path: Path, period: float) -> TokenFile:
    """The process's TokenFile for `path` (made on first use, which must read the file)."""
    with _TOKENS_LOCK:
        tokens = _TOKENS.get(str(path))
        if tokens is None or tokens.period != period:
            tokens = _TOKENS[str(path)] = TokenFile(path, period)
        return tokens


def expiry_of(token: str) -> float | None:
    """A JWT's `exp` claim (Unix time), read without verifying anything; None for other tokens."""
    import base64
    import json

    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) else None


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
    tokens = token_file(folder / "token", _period())
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
