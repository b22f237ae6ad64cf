"""Resolve image references to their platforms: GET the manifest (an index lists its platforms; a single
manifest's config blob names its one), with Docker's and crane's auth, per-registry concurrency, Retry-After,
one fetch per digest per run, and a total time budget after which the rest is `unknown`.

Errors never escape as exceptions from `resolve`: a `Resolution` carries either platforms or a one-line reason
(unauthorised, not found, TLS, timeout, rate limited, ...). Credentials go into Authorization headers only;
no message, log or result holds one.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.images.compat import Platform
from kubectl_win.registry import media
from kubectl_win.registry.challenge import Challenge, parse_challenge
from kubectl_win.registry.credentials import Credential, CredentialError, CredentialStore
from kubectl_win.registry.reference import Reference, normalise_host
from kubectl_win.registry.transport import Response, Transport, WireError

MAX_MANIFEST = 4 << 20  # the distribution server's own limit
MAX_CONFIG = 8 << 20


class Failure(Exception):
    """Why a reference could not be resolved (one line, no secrets)."""


@dataclass(slots=True)
class RegistryOptions:
    ca_files: tuple[str, ...] = ()
    insecure: tuple[str, ...] = ()  # hosts (host or host:port) spoken to over plain HTTP
    mirrors: dict[str, tuple[str, ...]] = field(default_factory=dict)  # registry -> mirror hosts, tried in order
    per_registry: int = 8  # concurrent requests per registry host
    request_timeout: float = 15.0
    budget: float = 60.0  # seconds for the whole run; what is left unresolved after it is unknown
    retries: int = 3  # on 429/503 with Retry-After, and on 5xx


@dataclass(frozen=True, slots=True)
class Resolution:
    reference: Reference
    digest: str | None = None
    platforms: tuple[Platform, ...] = ()
    error: str | None = None
    source: str = ""  # the host that answered (a mirror's, or the registry's API host)

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_mirrors(values: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """`docker.io=mirror.example:5000` (repeatable) -> {"docker.io": ("mirror.example:5000",)}; ValueError."""
    out: dict[str, list[str]] = {}
    for value in values:
        registry, sep, mirror = value.partition("=")
        if not sep or not registry.strip() or not mirror.strip():
            raise ValueError(f"wants REGISTRY=MIRROR (e.g. docker.io=mirror.example:5000), "
                             f"not {value!r}")
        out.setdefault(normalise_host(registry), []).append(normalise_host(mirror))
    return {k: tuple(v) for k, v in out.items()}


class RegistryClient:
    def __init__(self, options: RegistryOptions | None = None, credentials: CredentialStore | None = None,
                 environ: Mapping[str, str] | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.options = options or RegistryOptions()
        self._credentials = credentials if credentials is not None else CredentialStore()
        self._transport = Transport(self.options.ca_files, self.options.insecure, environ)
        self._clock, self._sleep = clock, sleep
        self._deadline = clock() + self.options.budget
        self._lock = threading.Lock()
        self._once: dict[tuple[str, ...], Future[Any]] = {}
        self._challenges: dict[str, Challenge] = {}
        self._tokens: dict[tuple[str, str], str] = {}
        self._token_generation: dict[tuple[str, str], int] = {}  # bumped when the registry rejects a token
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self.requests = 0  # HTTP requests sent (tests and the bench read it)

    # -- public -----------------------------------------------------------------------------------------------

    def resolve(self, reference: Reference) -> Resolution:
        hosts = (*self.options.mirrors.get(reference.registry, ()), reference.api_host)
        errors = []
        for host in hosts:
            try:
                digest, platforms = self._resolve_at(host, reference)
                return Resolution(reference, digest, tuple(platforms), None, host)
            except Failure as exc:
                errors.append(f"{host}: {exc}" if len(hosts) > 1 else str(exc))
        return Resolution(reference, error="; ".join(errors))

    def resolve_many(self, references: Iterable[Reference],
                     progress: Callable[[int, int], None] | None = None) -> list[Resolution]:
        """Resolve concurrently (the per-registry limit holds across all of them); results in the given order."""
        refs = list(references)
        if not refs:
            return []
        registries = {r.registry for r in refs}
        workers = max(1, min(len(refs), 64, self.options.per_registry * len(registries)))
        done = [0]
        done_lock = threading.Lock()

        def one(ref: Reference) -> Resolution:
            result = self.resolve(ref)
            if progress is not None:
                with done_lock:
                    done[0] += 1
                    progress(done[0], len(refs))
            return result

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="registry") as pool:
            return list(pool.map(one, refs))

    def list_tags(self, reference: Reference, limit: int = 5000) -> list[str]:
        """The repository's tags (following the Link header's pages), from its first mirror that answers, else the
        registry itself; read once per run. Failure when none can give them."""
        hosts = (*self.options.mirrors.get(reference.registry, ()), reference.api_host)
        errors = []
        for host in hosts:
            try:
                return list(self._single(("tags", host, reference.repository, str(limit)),
                                         lambda host=host: self._tags_at(host, reference, limit)))
            except Failure as exc:
                errors.append(f"{host}: {exc}" if len(hosts) > 1 else str(exc))
        raise Failure("; ".join(errors))

    def _tags_at(self, host: str, reference: Reference, limit: int) -> tuple[str, ...]:
        path: str | None = f"/v2/{reference.repository}/tags/list?n=1000"
        tags: list[str] = []
        while path and len(tags) < limit:
            response = self._get(host, reference, path, {"Accept": "application/json"}, 4 << 20)
            try:
                tags.extend(str(t) for t in json.loads(response.body).get("tags") or [])
            except (ValueError, AttributeError):
                raise Failure(f"{host} answered the tag list with something that is not JSON") from None
            link = response.header("link")
            path = None
            if link.startswith("<") and 'rel="next"' in link:
                target = link[1:link.index(">")]
                path = urllib.parse.urlsplit(target)._replace(scheme="", netloc="").geturl() or None
        return tuple(tags)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- resolution -------------------------------------------------------------------------------------------

    def _resolve_at(self, host: str, ref: Reference) -> tuple[str, list[Platform]]:
        document, digest, content_type = self._manifest(host, ref, ref.target)
        if ref.digest and digest != ref.digest:
            raise Failure(f"the registry served {digest} for {ref.digest} (digest mismatch)")
        try:
            kind = media.kind_of(document, content_type)
            if kind == "index":
                return digest, media.index_platforms(document)
            config = self._blob_json(host, ref, media.config_digest(document))
            return digest, [media.config_platform(config, digest)]
        except media.ManifestError as exc:
            raise Failure(str(exc)) from None

    def _manifest(self, host: str, ref: Reference, target: str) -> tuple[Any, str, str]:
        """The manifest document, its digest and Content-Type; fetched once per run per digest (and per tag)."""
        if target.startswith("sha256:"):
            key: tuple[str, ...] = ("manifest", host, target)
        else:
            key = ("tag", host, ref.repository, target)
        return self._single(key, lambda: self._fetch_manifest(host, ref, target))

    def _fetch_manifest(self, host: str, ref: Reference, target: str) -> tuple[Any, str, str]:
        path = f"/v2/{ref.repository}/manifests/{urllib.parse.quote(target, safe=':')}"
        response = self._get(host, ref, path, {"Accept": media.ACCEPT}, MAX_MANIFEST)
        body = response.body
        computed = "sha256:" + hashlib.sha256(body).hexdigest()
        digest = response.header("docker-content-digest") or computed
        if target.startswith("sha256:") and computed != target:
            raise Failure(f"the manifest {host} served for {target} hashes to {computed} (digest mismatch)")
        try:
            document = json.loads(body)
        except ValueError:
            raise Failure(f"{host} answered the manifest request with something that is not JSON") from None
        result = (document, digest, response.header("content-type"))
        with self._lock:  # the same digest asked for later (by digest, or by another tag) is not fetched again
            self._once.setdefault(("manifest", host, digest), _done(result))
        return result

    def _blob_json(self, host: str, ref: Reference, digest: str) -> Any:
        def fetch() -> Any:
            response = self._get(host, ref, f"/v2/{ref.repository}/blobs/{digest}", {}, MAX_CONFIG)
            if digest.startswith("sha256:") and "sha256:" + hashlib.sha256(response.body).hexdigest() != digest:
                raise Failure(f"the config blob {digest} from {host} does not match its digest")
            try:
                return json.loads(response.body)
            except ValueError:
                raise Failure(f"the config blob {digest} from {host} is not JSON") from None

        return self._single(("blob", host, digest), fetch)

    def _single(self, key: tuple[str, ...], compute: Callable[[], Any]) -> Any:
        """Run `compute` once per key per run; concurrent askers wait for the first one's answer."""
        with self._lock:
            future = self._once.get(key)
            owner = future is None
            if owner:
                future = self._once[key] = Future()
        assert future is not None
        if owner:
            try:
                future.set_result(compute())
            except BaseException as exc:
                future.set_exception(exc)
        return future.result()

    # -- HTTP with auth, limits and retries -------------------------------------------------------------------

    def _remaining(self) -> float:
        return self._deadline - self._clock()

    def _slot(self, host: str) -> threading.BoundedSemaphore:
        with self._lock:
            if host not in self._slots:
                self._slots[host] = threading.BoundedSemaphore(max(1, self.options.per_registry))
            return self._slots[host]

    def _send(self, host: str, url: str, headers: dict[str, str], max_body: int) -> Response:
        remaining = self._remaining()
        if remaining <= 0:
            raise Failure(f"the time budget ({self.options.budget:g}s) ran out before {host} was asked")
        timeout = min(self.options.request_timeout, remaining)
        with self._slot(host):
            with self._lock:
                self.requests += 1
            try:
                return self._transport.request("GET", url, headers, timeout, max_body)
            except WireError as exc:
                raise Failure(str(exc)) from None

    def _url(self, host: str, path: str) -> str:
        return f"{self._transport.scheme_for(host)}://{host}{path}"

    def _credential(self, ref: Reference, host: str) -> Credential | None:
        try:
            # A mirror's own credentials when it has some, else none: the origin's are not sent to a mirror.
            return self._credentials.lookup(host if host != ref.api_host else ref.registry)
        except CredentialError as exc:
            raise Failure(str(exc)) from None

    def _get(self, host: str, ref: Reference, path: str, headers: dict[str, str], max_body: int) -> Response:
        url = self._url(host, path)
        scope = ref.scope
        authorised_once = False
        attempts = 0
        while True:
            sent = dict(headers)
            auth = self._authorization(host, ref, scope)
            if auth:
                sent["Authorization"] = auth
            response = self._send(host, url, sent, max_body)
            if response.status == 200:
                return response
            if response.status == 401 and not authorised_once:
                challenge = parse_challenge(response.header("www-authenticate"))
                if challenge is None:
                    raise Failure(f"unauthorized: {host} refused the request and offers no way to log in")
                with self._lock:
                    if self._challenges.get(host) != challenge:
                        self._challenges[host] = challenge
                    # Only a token the registry just refused is dropped: requests that went out anonymously
                    # before another thread fetched the token must not make every thread fetch its own.
                    if auth and auth.startswith("Bearer ") and self._tokens.get((host, scope)) == auth[7:]:
                        del self._tokens[(host, scope)]
                        self._token_generation[(host, scope)] = self._token_generation.get((host, scope), 0) + 1
                if challenge.scheme == "bearer" and challenge.scope:
                    scope = challenge.scope if ref.repository in challenge.scope else scope
                if challenge.scheme == "basic" and self._credential(ref, host) is None:
                    raise Failure(f"unauthorized: {host} wants a username and password for {ref.repository} "
                                  f"and none is configured (docker login {host}, or DOCKER_CONFIG)")
                authorised_once = True
                continue
            if response.status in (429, 503) or 500 <= response.status < 600:
                attempts += 1
                wait = _retry_after(response.header("retry-after"), default=0.5 * 2 ** attempts)
                what = "rate limited (429)" if response.status == 429 else f"{host} answered {response.status}"
                if attempts > self.options.retries:
                    raise Failure(f"{what}; gave up after {self.options.retries} retries")
                if wait >= self._remaining():
                    raise Failure(f"{what}; Retry-After {wait:g}s is beyond the time budget")
                self._sleep(wait)
                continue
            raise Failure(self._status_message(host, ref, response, authorised_once))

    def _status_message(self, host: str, ref: Reference, response: Response, authorised: bool) -> str:
        code = _error_code(response.body)
        if response.status == 401:
            who = "the credentials found" if self._credential(ref, host) else "anonymous access"
            return f"unauthorized: {host} refused {who} for {ref.repository}" + (f" ({code})" if code else "")
        if response.status == 403:
            return f"denied: {host} does not let these credentials pull {ref.repository}"
        if response.status == 404:
            what = "repository" if code == "NAME_UNKNOWN" else "manifest"
            return f"not found: {what} {ref.repository}:{ref.target} on {host}" if what == "manifest" else (
                f"not found: repository {ref.repository} on {host}")
        return f"{host} answered {response.status}" + (f" ({code})" if code else "")

    def _authorization(self, host: str, ref: Reference, scope: str) -> str | None:
        with self._lock:
            challenge = self._challenges.get(host)
        if challenge is None:
            return None
        if challenge.scheme == "basic":
            credential = self._credential(ref, host)
            return credential.basic() if credential and not credential.identity_token else None
        return "Bearer " + self._token(host, ref, challenge, scope)

    def _token(self, host: str, ref: Reference, challenge: Challenge, scope: str) -> str:
        with self._lock:
            token = self._tokens.get((host, scope))
        if token is not None:
            return token
        with self._lock:
            generation = self._token_generation.get((host, scope), 0)
        token = self._single(("token", host, scope, challenge.realm, challenge.service, str(generation)),
                             lambda: self._fetch_token(host, ref, challenge, scope))
        with self._lock:
            self._tokens[(host, scope)] = token
        return token

    def _fetch_token(self, host: str, ref: Reference, challenge: Challenge, scope: str) -> str:
        realm = urllib.parse.urlsplit(challenge.realm)
        if realm.scheme not in ("http", "https") or not realm.netloc:
            raise Failure(f"unauthorized: {host} names a token service that is not a URL")
        if realm.scheme == "http" and self._transport.scheme_for(host) == "https" \
                and self._transport.scheme_for(realm.netloc) == "https":
            raise Failure(f"unauthorized: {host} sends credentials to a plain-HTTP token service "
                          f"({realm.netloc}); name it with --insecure-registry to allow that")
        query = [("scope", scope)] + ([("service", challenge.service)] if challenge.service else [])
        credential = self._credential(ref, host)
        headers: dict[str, str] = {}
        if credential is not None and not credential.identity_token:
            headers["Authorization"] = credential.basic()
        base = urllib.parse.urlunsplit(realm._replace(query=""))
        joined = "&".join(filter(None, [realm.query, urllib.parse.urlencode(query)]))
        url = f"{base}?{joined}"
        attempts = 0
        while True:
            if credential is not None and credential.identity_token:
                response = self._post_refresh(realm.netloc, base, challenge, scope, credential)
            else:
                response = self._send(realm.netloc, url, dict(headers), 1 << 20)
            if response.status == 200:
                break
            if response.status == 429 and attempts < self.options.retries:
                attempts += 1
                wait = _retry_after(response.header("retry-after"), default=0.5 * 2 ** attempts)
                if wait >= self._remaining():
                    raise Failure("rate limited (429) by the token service; Retry-After is beyond the time budget")
                self._sleep(wait)
                continue
            who = "the credentials found" if credential else "anonymous access"
            raise Failure(f"unauthorized: the token service of {host} refused {who} "
                          f"for {ref.repository} ({response.status})")
        try:
            answer = json.loads(response.body)
            token = answer.get("token") or answer.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not token or not isinstance(token, str):
            raise Failure(f"unauthorized: the token service of {host} answered without a token")
        return token

    def _post_refresh(self, netloc: str, url: str, challenge: Challenge, scope: str,
                      credential: Credential) -> Response:
        """The OAuth2 refresh-token grant Docker uses for identity tokens."""
        form = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": credential.secret,
                                       "service": challenge.service, "scope": scope, "client_id": "kubectl-win"})
        remaining = self._remaining()
        if remaining <= 0:
            raise Failure(f"the time budget ({self.options.budget:g}s) ran out before {netloc} was asked")
        with self._slot(netloc):
            try:
                return self._transport.request(
                    "POST", url, {"Content-Type": "application/x-www-form-urlencoded"},
                    min(self.options.request_timeout, remaining), 1 << 20, data=form.encode())
            except WireError as exc:
                raise Failure(str(exc)) from None


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _retry_after(value: str, default: float) -> float:
    value = value.strip()
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


def _error_code(body: bytes) -> str:
    """The distribution spec's error code (MANIFEST_UNKNOWN, NAME_UNKNOWN, UNAUTHORIZED, ...), if any."""
    try:
        errors = json.loads(body).get("errors") or []
        return str(errors[0].get("code") or "") if errors else ""
    except (ValueError, AttributeError, IndexError, TypeError):
        return ""
