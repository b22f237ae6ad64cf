"""The Cluster: raw-JSON GETs over a urllib3 pool, with timeouts, bounded retries and typed errors."""

from __future__ import annotations

import gc
import random
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from kubectl_win.errors import ClusterUnreachable
from kubectl_win.kube.config import ClientConfig, KubeFlags, load
from kubectl_win.kube.errors import ApiError, Forbidden, NotFound, Unauthorized
from kubectl_win.kube.jsonfast import JSONDecodeError, loads
from kubectl_win.kube.resources import ResourceInfo, resolve
from kubectl_win.kube.stream import CHUNK, RawStream

if TYPE_CHECKING:
    from kubectl_win.kube.deadline import Deadline

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0


@dataclass
class WebsocketArgs:
    """Everything needed to open a websocket (e.g. pods/exec) with the cluster's credentials."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    sslopt: dict[str, Any] = field(default_factory=dict)  # websocket-client's sslopt
    ssl_context: ssl.SSLContext | None = None  # for asyncio/aiohttp/websockets clients
    proxy: str | None = None  # kubeconfig proxy-url, else HTTPS_PROXY/HTTP_PROXY for the server

    def __repr__(self) -> str:  # never show the Authorization header
        return f"WebsocketArgs(url={self.url!r}, headers=<{len(self.headers)} hidden>)"


def connect(flags: KubeFlags) -> Cluster:
    """Read the kubeconfig (or in-cluster config) and return a Cluster; nothing is sent yet."""
    return Cluster(load(flags), flags)


class Cluster:
    namespace: str
    server: str

    def __init__(self, config: ClientConfig, flags: KubeFlags | None = None, *, max_attempts: int = 4,
                 backoff: float = 0.25) -> None:
        self.config = config
        self.flags = flags or KubeFlags()
        self.server = config.server
        self.namespace = config.namespace
        self.timeout = self.flags.request_timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self._pool: Any = None
        self._version: dict | None = None

    def __repr__(self) -> str:
        return f"Cluster(server={self.server!r}, namespace={self.namespace!r})"

    @property
    def list_namespace(self) -> str | None:
        """The namespace a list should use: None (all) with -A, else the effective namespace."""
        return None if self.flags.all_namespaces else self.namespace

    # -- public reads ----------------------------------------------------------------------------
    def server_version(self) -> dict:
        """GET /version (cached): major, minor, gitVersion, platform ..."""
        if self._version is None:
            self._version = self.get("/version")
        return self._version

    def get(self, path: str, params: dict | None = None) -> dict:
        """GET any API path (e.g. "/api/v1/namespaces/x/pods/y") with retries and typed errors."""
        return self._request(path, params)

    def get_object(self, resource: str, name: str, namespace: str | None = None) -> dict:
        """One object; a namespaced resource without `namespace` uses the effective namespace."""
        info = resolve(resource)
        ns = (namespace or self.namespace) if info.namespaced else None
        obj = self._request(info.object_path(name, ns), None, info, name, ns, "get")
        obj.setdefault("kind", info.kind)
        obj.setdefault("apiVersion", info.api_version)
        return obj

    def create(self, resource: str, body: dict, namespace: str | None = None) -> dict:
        """POST a new object (sent once: a create is not retried, so it cannot run twice)."""
        import json

        info = resolve(resource)
        ns = (namespace or self.namespace) if info.namespaced else None
        return self._request(info.collection_path(ns), None, info, None, ns, "create", method="POST",
                             body=json.dumps(body).encode())

    def delete(self, resource: str, name: str, namespace: str | None = None, grace_seconds: int | None = None) -> None:
        """DELETE an object; one already gone counts as deleted."""
        import json

        info = resolve(resource)
        ns = (namespace or self.namespace) if info.namespaced else None
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        if grace_seconds is not None:
            options["gracePeriodSeconds"] = grace_seconds
        try:
            self._request(info.object_path(name, ns), None, info, name, ns, "delete", method="DELETE",
                          body=json.dumps(options).encode())
        except NotFound:
            pass

    def get_raw(self, path: str, params: dict | list | None = None) -> tuple[int, bytes]:
        """GET a path that answers text rather than JSON (a node's logs through the API server's proxy):
        (status, body) for any answer but 401 and an unreachable server, which raise as usual."""
        return self._request(path, params, verb="get", raw=True)

    def stream_raw(self, path: str, params: dict | list | None = None) -> RawStream:
        """get_raw for bodies too big to hold (a node's log file): the status and a body read as it arrives.
        Retries and errors as get_raw until the body starts; close the stream (or use `with`) when done."""
        status, response = self._request(path, params, verb="get", raw=True, stream=True)
        return RawStream(status, response, self.server, self.timeout)

    def list_pages(self, resource: str, namespace: str | None = None, label_selector: str | None = None,
                   field_selector: str | None = None, page_size: int = 500,
                   decode: Callable[[bytes], Any] | None = None) -> Iterator[Any]:
        """Raw list pages (kind XList, metadata, items), following `continue` tokens.
        `namespace=None` on a namespaced resource lists every namespace. `decode` turns a page's bytes into
        what is yielded instead of the parsed dicts (anything with a dict's `get` for "metadata"); it raises
        as a JSON parser would on a body that is not JSON, which is retried like one."""
        info = resolve(resource)
        ns = namespace if info.namespaced else None
        path = info.collection_path(ns)
        params: dict[str, Any] = {}
        if page_size:
            params["limit"] = page_size
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        while True:
            page = self._request(path, params, info, None, ns, "list", decode=decode)
            yield page
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            params["continue"] = token

    def list(self, resource: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None, page_size: int = 500) -> Iterator[dict]:
        """Every item, as dicts with kind and apiVersion filled in (list items on the wire lack them)."""
        info = resolve(resource)
        for page in self.list_pages(resource, namespace, label_selector, field_selector, page_size):
            items = page.get("items") or []
            if items and "kind" not in items[0]:
                kind, api_version = info.kind, info.api_version
                for item in items:
                    item["kind"] = kind
                    item["apiVersion"] = api_version
            yield from items

    def websocket_args(self, path: str, query: list[tuple[str, str]]) -> WebsocketArgs:
        parts = urlsplit(self.server)
        scheme = "wss" if parts.scheme == "https" else "ws"
        base_path = parts.path.rstrip("/")
        url = f"{scheme}://{parts.netloc}{base_path}{path}"
        if query:
            url += "?" + urlencode(query)
        headers: dict[str, str] = {}
        auth = self.config.authorization()
        if auth:
            headers["Authorization"] = auth
        sslopt: dict[str, Any] = {}
        context = None
        if scheme == "wss":
            context = self._ssl_context()
            sslopt = {"context": context, "cert_reqs": context.verify_mode, "check_hostname": context.check_hostname}
            if self.config.ca_file:
                sslopt["ca_certs"] = self.config.ca_file
            if self.config.cert_file:
                sslopt["certfile"] = self.config.cert_file
                sslopt["keyfile"] = self.config.key_file
            if self.config.tls_server_name:
                sslopt["server_hostname"] = self.config.tls_server_name
        return WebsocketArgs(url, headers, sslopt, context, self.config.proxy or env_proxy(self.server))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.clear()
            self._pool = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport -------------------------------------------------------------------------------
    def _ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.config.ca_file)
        # Python 3.13 turned on strict X.509 checks (an Authority Key Identifier on every CA-issued
        # certificate); kubectl's Go verifier does not ask for it, and clusters kubectl reaches must work.
        context.verify_flags &= ~getattr(ssl, "VERIFY_X509_STRICT", 0)
        if not self.config.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.config.cert_file:
            context.load_cert_chain(self.config.cert_file, self.config.key_file)
        return context

    def _pool_manager(self) -> Any:
        if self._pool is None:
            import urllib3

            kw: dict[str, Any] = {"num_pools": 2, "maxsize": 4, "block": False}
            if self.server.startswith("https"):
                kw["cert_reqs"] = "CERT_REQUIRED" if self.config.verify_ssl else "CERT_NONE"
                if self.config.ca_file:
                    kw["ca_certs"] = self.config.ca_file
                if self.config.cert_file:
                    kw["cert_file"] = self.config.cert_file
                    kw["key_file"] = self.config.key_file
                if self.config.tls_server_name:
                    kw["server_hostname"] = self.config.tls_server_name
                if not self.config.verify_ssl:
                    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            proxy = self.config.proxy or env_proxy(self.server)
            if proxy:
                self._pool = urllib3.ProxyManager(proxy, **kw)
            else:
                self._pool = urllib3.PoolManager(**kw)
        return self._pool

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "kubectl-win"}
        auth = self.config.authorization()
        if auth:
            headers["Authorization"] = auth
        return headers

    def _request(self, path: str, params: dict | list | None, info: ResourceInfo | None = None,
                 name: str | None = None, namespace: str | None = None, verb: str = "get", *, method: str = "GET",
                 body: bytes | None = None, raw: bool = False, stream: bool = False,
                 decode: Callable[[bytes], Any] | None = None) -> Any:
        import urllib3
        from urllib3.exceptions import (
            ConnectTimeoutError as ConnectTimeout,
        )
        from urllib3.exceptions import (
            HTTPError,
            NameResolutionError,
            NewConnectionError,
            ProtocolError,
            ReadTimeoutError,
            SSLError,
        )

        url = self.server + path + ("?" + urlencode(params, doseq=True) if params else "")
        deadline = self.flags.deadline
        reauthenticated = False
        attempt = 0
        while True:
            attempt += 1
            read = self.timeout
            if deadline is not None:
                deadline.check(f"reading {path} from {self.server}")
                read = min(read, max(0.1, deadline.remaining()))
            timeout = urllib3.Timeout(connect=min(read, 30.0), read=read)
            try:
                headers = self._headers()
                if body is not None:
                    headers = {**headers, "Content-Type": "application/json"}
                response = self._pool_manager().request(
                    method, url, headers=headers, body=body, timeout=timeout, retries=False, redirect=False,
                    preload_content=not stream and deadline is None)
                early = (_read_before(response, deadline, f"reading {path} from {self.server}")
                         if deadline is not None and not stream else None)
            except SSLError as exc:
                raise ClusterUnreachable(f"TLS handshake with {self.server} failed: {_short(exc)}") from None
            except NameResolutionError:
                raise ClusterUnreachable(f"cannot resolve the host of {self.server} (DNS lookup failed)") from None
            except NewConnectionError as exc:  # before ConnectTimeout: urllib3 derives one from the other
                raise ClusterUnreachable(f"cannot connect to {self.server}: {_short(exc)}") from None
            except ConnectTimeout:
                raise ClusterUnreachable(f"timed out connecting to {self.server}") from None
            except ReadTimeoutError:
                if deadline is not None and deadline.expired:
                    raise deadline.exceeded(f"reading {path} from {self.server}") from None
                raise ClusterUnreachable(
                    f"{self.server} did not answer within {self.timeout:g}s (--request-timeout)") from None
            except (ProtocolError, HTTPError) as exc:
                if attempt < self.max_attempts and method != "POST":
                    self._sleep(attempt, None)
                    continue
                raise ClusterUnreachable(f"the connection to {self.server} kept dropping ({attempt} attempts): "
                                         f"{_short(exc)}") from None
            status = response.status
            if raw and (status not in RETRY_STATUSES or attempt >= self.max_attempts) and status != 401:
                return (status, response) if stream else (status, response.data if early is None else early)
            if stream:  # an answer retried or raised below: read it whole (short), keep it, free the connection
                response.read(cache_content=True)
                response.release_conn()
            data = response.data if early is None else early
            if status in (200, 201, 202):
                try:
                    return _parse(data, decode)
                except (JSONDecodeError, ValueError, UnicodeDecodeError):
                    if attempt < self.max_attempts:
                        self._sleep(attempt, None)
                        continue
                    raise ApiError(f"{self.server} returned a response that is not valid JSON for {path}",
                                   status) from None
            if status in RETRY_STATUSES and attempt < self.max_attempts and method != "POST":
                self._sleep(attempt, response.headers.get("Retry-After"))
                continue
            if status == 401 and not reauthenticated and self.config.reload is not None:
                reauthenticated = True
                self.config.reload()
                attempt -= 1
                continue
            raise self._error(status, data, path, info, name, namespace, verb, attempt)

    def _sleep(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2 ** (attempt - 1)) * (0.8 + 0.4 * random.random())
        if retry_after:
            try:
                delay = min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
            except ValueError:
                pass
        time.sleep(delay)

    def _error(self, status: int, body: bytes, path: str, info: ResourceInfo | None, name: str | None,
               namespace: str | None, verb: str, attempts: int) -> ApiError:
        message, reason = _status_message(body)
        what = info.plural if info else path
        if status == 401:
            return Unauthorized(f"the server rejected the credentials (expired token?): {self.server}", 401,
                                reason or "Unauthorized")
        if status == 403:
            text = message or f"{what} is forbidden: cannot {verb} {what}"
            return Forbidden(text, what, verb, namespace)
        if status == 404:
            if info and name:
                text = f'{info.plural} "{name}" not found' + (f' in namespace "{namespace}"' if namespace else "")
            else:
                text = message or f"the server could not find {path}"
            return NotFound(text, what, name or "", namespace)
        if status in RETRY_STATUSES:
            return ApiError(f"the server kept answering {status} {reason or ''} for {what} after {attempts} "
                            f"attempts: {message or 'no details'}".replace("  ", " "), status, reason)
        exit_code = 2 if 400 <= status < 500 else 3
        return ApiError(f"the server answered {status} {reason or ''} for {what}: {message or 'no details'}"
                        .replace("  ", " "), status, reason, exit_code)


def env_proxy(server: str) -> str | None:
    """HTTPS_PROXY / HTTP_PROXY for the server, as kubectl (Go) reads them: never for loopback
    hosts, and not for hosts NO_PROXY matches (CIDRs, ports and IPv6 included; see kubectl_win/proxies.py)."""
    from kubectl_win.proxies import proxy_for

    return proxy_for(server)


def _read_before(response: Any, deadline: Deadline, doing: str) -> bytes:
    """The whole body (what preload_content reads), a chunk at a time with the deadline checked between
    chunks: a server that sends a byte every second never trips a read timeout, but it trips this."""
    chunks: list[bytes] = []
    while True:
        chunk = response.read1(CHUNK) if hasattr(response, "read1") else response.read(CHUNK)
        if not chunk:
            break
        chunks.append(chunk)
        if deadline.expired:
            response.close()
            raise deadline.exceeded(doing)
    response.release_conn()
    return b"".join(chunks)


def _parse(data: bytes, decode: Callable[[bytes], Any] | None = None) -> Any:
    """Parse a response body (with `decode` when given) with the cyclic GC paused: a page of 500 pods
    is ~30,000 new containers, enough to trigger several collections that would rescan everything the
    caller already holds (a cost that grows with the cluster already in memory). JSON cannot form cycles."""
    decode = decode or loads
    if not gc.isenabled():
        return decode(data)
    gc.disable()
    try:
        return decode(data)
    finally:
        gc.enable()


def _status_message(body: bytes) -> tuple[str, str]:
    try:
        doc = loads(body)
    except (JSONDecodeError, ValueError, UnicodeDecodeError):
        return "", ""
    if not isinstance(doc, dict):
        return "", ""
    return " ".join(str(doc.get("message") or "").split()), str(doc.get("reason") or "")


def _short(exc: BaseException) -> str:
    """The innermost reason, without urllib3's pool object reprs."""
    reason = getattr(exc, "reason", None)
    text = str(reason or exc)
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "certificate verify failed (wrong or missing certificate-authority?)"
    return text.split(": ", 1)[-1] if "object at 0x" in text else text
