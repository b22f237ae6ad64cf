"""Registry credentials the way Docker and crane find them: `$DOCKER_CONFIG/config.json` (default
`~/.docker/config.json`) with `credHelpers` (per host), then `credsStore` (all hosts), then `auths`
(`auth: base64(user:password)` or `username`/`password`), and, when the caller passes them, the `auths` of a
pod's `imagePullSecrets` (same shape). Helpers run as `docker-credential-<name> get` with the host on stdin and
answer `{"Username", "Secret"}`.

A `Credential` never shows its secret: its repr and str hide it, and nothing here logs or prints one.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubectl_win.registry.reference import DOCKER_HUB, normalise_host

HELPER_TIMEOUT = 20.0


class Credential:
    """A username and a secret (password or token); `identity_token` is an OAuth2 refresh token."""

    __slots__ = ("_secret", "identity_token", "username")

    def __init__(self, username: str, secret: str, identity_token: bool = False) -> None:
        self.username = username
        self._secret = secret
        self.identity_token = identity_token

    @property
    def secret(self) -> str:
        return self._secret

    def basic(self) -> str:
        raw = f"{self.username}:{self._secret}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def __repr__(self) -> str:
        return f"Credential(username={self.username!r}, secret=<hidden>)"

    __str__ = __repr__


class CredentialError(RuntimeError):
    """A helper failed or a config file is unreadable (the message names the file or helper, never a secret)."""


def docker_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("DOCKER_CONFIG")
    return Path(base) / "config.json" if base else Path.home() / ".docker" / "config.json"


class CredentialStore:
    """Looks credentials up per registry host, once per host per run."""

    def __init__(self, config: Mapping[str, Any] | None = None, extra_auths: Mapping[str, Any] | None = None,
                 source: str = "config.json", environ: Mapping[str, str] | None = None) -> None:
        self._config = dict(config or {})
        self._environ = dict(os.environ if environ is None else environ)
        self._extra = {normalise_host(k): v for k, v in (extra_auths or {}).items()}
        self._source = source
        self._cache: dict[str, Credential | None] = {}

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None,
                         extra_auths: Mapping[str, Any] | None = None) -> CredentialStore:
        path = docker_config_path(environ)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls({}, extra_auths, str(path), environ)
        except OSError as exc:
            raise CredentialError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            config = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise CredentialError(f"{path} is not valid JSON") from None
        if not isinstance(config, dict):
            raise CredentialError(f"{path} is not a JSON object")
        return cls(config, extra_auths, str(path), environ)

    def lookup(self, registry: str) -> Credential | None:
        host = normalise_host(registry)
        if host not in self._cache:
            self._cache[host] = self._find(host)
        return self._cache[host]

    def _find(self, host: str) -> Credential | None:
        if host in self._extra:
            return _from_auth_entry(self._extra[host], "imagePullSecrets")
        helpers = self._config.get("credHelpers") or {}
        helper = next((name for key, name in helpers.items() if normalise_host(key) == host), None)
        if helper:
            return run_helper(str(helper), _helper_key(host), self._environ)
        auths = {normalise_host(k): v for k, v in (self._config.get("auths") or {}).items()}
        store = self._config.get("credsStore")
        if store:
            found = run_helper(str(store), _helper_key(host), self._environ)
            if found is not None:
                return found
        if host in auths:
            return _from_auth_entry(auths[host], self._source)
        return None


def _helper_key(host: str) -> str:
    # Docker stores Docker Hub's credentials under its legacy index URL.
    return "https://index.docker.io/v1/" if host == DOCKER_HUB else host


def _from_auth_entry(entry: Any, source: str) -> Credential | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("identitytoken"):
        return Credential("", str(entry["identitytoken"]), identity_token=True)
    if entry.get("auth"):
        try:
            user, sep, secret = base64.b64decode(str(entry["auth"]), validate=False).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            raise CredentialError(f"an auths entry in {source} is not base64 of user:password") from None
        if sep:
            return Credential(user, secret)
        raise CredentialError(f"an auths entry in {source} is not base64 of user:password")
    if entry.get("username") and entry.get("password"):
        return Credential(str(entry["username"]), str(entry["password"]))
    return None


def run_helper(name: str, server: str, environ: Mapping[str, str] | None = None) -> Credential | None:
    """`docker-credential-NAME get` with the server on stdin; None when it has nothing for the server."""
    import shutil
    import subprocess

    env = dict(os.environ if environ is None else environ)
    program = shutil.which(f"docker-credential-{name}", path=env.get("PATH"))
    if program is None:
        raise CredentialError(f"credential helper docker-credential-{name} is not on PATH")
    try:
        result = subprocess.run([program, "get"], input=server, capture_output=True, text=True, env=env,
                                timeout=HELPER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise CredentialError(f"docker-credential-{name} did not answer within {HELPER_TIMEOUT:.0f}s") from None
    except OSError as exc:
        raise CredentialError(f"cannot run docker-credential-{name}: {exc.strerror or exc}") from None
    if result.returncode != 0:
        # The protocol's "not found" answer; anything else is still no credential, but say which helper failed.
        if "credentials not found" in (result.stdout + result.stderr).lower():
            return None
        raise CredentialError(f"docker-credential-{name} get failed (exit {result.returncode})")
    try:
        answer = json.loads(result.stdout)
        username, secret = str(answer.get("Username") or ""), str(answer.get("Secret") or "")
    except (ValueError, AttributeError):
        raise CredentialError(f"docker-credential-{name} answered with something that is not JSON") from None
    if not secret:
        return None
    if username == "<token>":
        return Credential("", secret, identity_token=True)
    return Credential(username, secret)


def auths_from_pull_secret(data: Mapping[str, Any]) -> dict[str, Any]:
    """The `auths` of a kubernetes.io/dockerconfigjson (or legacy dockercfg) Secret's decoded JSON."""
    if "auths" in data and isinstance(data["auths"], dict):
        return dict(data["auths"])
    return {k: v for k, v in data.items() if isinstance(v, dict)}
