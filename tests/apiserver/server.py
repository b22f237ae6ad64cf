"""The aiohttp application and a runner that serves it from a background thread.

One catch-all route parses kube-apiserver paths (/api/v1/..., /apis/<group>/<version>/...),
so the resource table in resources.py is the only place resources are declared.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from aiohttp import web

from tests.apiserver import discovery, tables
from tests.apiserver.auth import Auth, forbidden_message
from tests.apiserver.faults import FaultInjector, FaultRule, reason_for
from tests.apiserver.jsonfast import dumps, loads
from tests.apiserver.resources import Resource
from tests.apiserver.seed import seed as seed_path
from tests.apiserver.selectors import SelectorError, parse_field_selector, parse_label_selector
from tests.apiserver.store import Entry, Store, StoreError, not_found

JSON = "application/json"
DEFAULT_TOKEN = "kubectl-win-test-token"


@dataclass
class ExecContext:
    """What the pods/exec handler in tests/apiserver/exec.py receives besides the request."""

    server: ApiServer
    store: Store
    faults: FaultInjector
    pod: dict
    namespace: str
    name: str


def status_body(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


def status_response(code: int, reason: str, message: str, details: dict | None = None,
                    headers: dict | None = None) -> web.Response:
    return web.Response(status=code, body=dumps(status_body(code, reason, message, details)),
                        content_type=JSON, headers=headers)


@dataclass
class _Target:
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str | None


class ApiServer:
    """A kube-apiserver stand-in. Use as a context manager or call start()/stop().

    server.store, server.faults and server.auth are live handles: change them while it runs.
    """

    def __init__(self, *, token: str | None = DEFAULT_TOKEN, tls: bool = False, workdir: str | Path | None = None,
                 git_version: str = "v1.32.0", aggregated_discovery: bool = True, host: str = "127.0.0.1",
                 port: int = 0, store: Store | None = None) -> None:
        self.store = store or Store()
        self.faults = FaultInjector()
        self.auth = Auth()
        self.token = token
        if token:
            self.auth.add_token(token, "admin")
        self.tls = tls
        self.git_version = git_version
        self.aggregated_discovery = aggregated_discovery
        self.host, self._port = host, port
        self._tmp: tempfile.TemporaryDirectory | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="kubectl-win-apiserver-")
            workdir = self._tmp.name
        self.workdir = Path(workdir)
        self.pki = None
        self.requests: collections.deque[tuple[str, str]] = collections.deque(maxlen=10_000)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._exec_module: Any = None
        self.node_logs: dict[str, Any] = {}  # node -> nodelogs.NodeLogs, what its kubelet's /logs/ serves

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self._port}"

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        from tests.apiserver import tls

        self.pki = tls.generate(self.workdir / "pki")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.pki.server_cert, self.pki.server_key)
        ctx.load_verify_locations(self.pki.ca_cert)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        self.auth.client_ca = True
        return ctx

    async def _start_site(self, sock: socket.socket, ssl_context: ssl.SSLContext | None) -> None:
        # A short shutdown timeout: open watches and exec streams must not hold stop() for a minute.
        self._runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=ssl_context, backlog=512).start()

    def start(self) -> ApiServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._port))
        self._port = sock.getsockname()[1]
        ssl_context = self._ssl_context()
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._start_site(sock, ssl_context))
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            # stop() already ran the runner's cleanup; end whatever handler is still pending.
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

        self._thread = threading.Thread(target=run, name=f"apiserver:{self._port}", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            raise failure[0]
        return self

    def serve_forever(self) -> None:
        """Run in the calling thread (the module command)."""
        self.start()
        try:
            self._thread.join()
        except KeyboardInterrupt:
            self.stop()

    def stop(self) -> None:
        if self._loop and self._thread and self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(15)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- seeding and kubeconfig ------------------------------------------------------------------
    def seed(self, path: str | Path) -> int:
        return seed_path(self.store, path)[0]

    def write_kubeconfig(self, path: str | Path | None = None, *, context: str = "test", namespace: str | None = None,
                         token: str | None = None, client_cert: bool = False, embed: bool = False,
                         user_entry: dict | None = None) -> Path:
        """Write a kubeconfig for this server. Default credentials: the server's bearer token."""
        path = Path(path) if path else self.workdir / f"kubeconfig-{context}"
        cluster: dict[str, Any] = {"server": self.url}
        user: dict[str, Any] = {}
        if self.tls and self.pki:
            if embed:
                import base64

                cluster["certificate-authority-data"] = base64.b64encode(self.pki.ca_cert.read_bytes()).decode()
            else:
                cluster["certificate-authority"] = str(self.pki.ca_cert)
        if user_entry is not None:
            user = dict(user_entry)
        elif client_cert and self.pki:
            user = {"client-certificate": str(self.pki.client_cert), "client-key": str(self.pki.client_key)}
        elif token or self.token:
            user = {"token": token or self.token}
        ctx: dict[str, Any] = {"cluster": context, "user": context}
        if namespace:
            ctx["namespace"] = namespace
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": ctx}],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        path.chmod(0o600)
        return path

    # -- request handling ------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path_qs = request.path_qs
        self.requests.append((request.method, path_qs))
        rule = self.faults.match(request.method, path_qs) if self.faults.rules else None
        if rule is not None:
            if rule.delay:
                await asyncio.sleep(rule.delay)
            if rule.action == "status":
                return self._fault_status(rule)
            if rule.action == "drop":
                return self._drop(request)
        transport = request.transport
        if transport is None:  # the client went away (e.g. it timed out during an injected delay)
            raise asyncio.CancelledError()
        user = self.auth.authenticate(request.headers.get("Authorization"),
                                      transport.get_extra_info("peercert") if self.tls else None)
        if user is None:
            return status_response(401, "Unauthorized", "Unauthorized")
        try:
            response = await self._route(request, user)
        except StoreError as exc:
            response = status_response(exc.code, exc.reason, exc.message, exc.details)
        except SelectorError as exc:
            response = status_response(400, "BadRequest", str(exc))
        if rule is not None and rule.action == "truncate":
            return await self._truncate(request, response)
        return response

    @staticmethod
    def _fault_status(rule: FaultRule) -> web.Response:
        headers = {"Retry-After": str(rule.retry_after)} if rule.retry_after is not None else None
        message = rule.message or {
            429: "Too many requests, please try again later.",
            500: "Internal error occurred: injected fault",
            503: "the server is currently unable to handle the request",
        }.get(rule.status, f"injected fault: {rule.status}")
        details = {"retryAfterSeconds": rule.retry_after} if rule.retry_after is not None else None
        return status_response(rule.status, reason_for(rule.status), message, details, headers)

    @staticmethod
    def _drop(request: web.Request) -> web.StreamResponse:
        transport = request.transport
        if transport is not None:
            transport.abort()
        raise asyncio.CancelledError()

    @staticmethod
    async def _truncate(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        body = response.body if isinstance(response, web.Response) else b""
        body = bytes(body or b"")
        stream = web.StreamResponse(status=response.status, headers={"Content-Type": response.content_type})
        stream.content_length = len(body)
        await stream.prepare(request)
        await stream.write(body[: len(body) // 2])
        if request.transport is not None:
            request.transport.close()
        raise asyncio.CancelledError()

    async def _route(self, request: web.Request, user: str) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        parts = [p for p in path.split("/") if p]
        method = request.method
        if path == "/version":
            return self._json(discovery.version_info(self.git_version))
        if path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        if path == "/api":
            if self._wants_aggregated(request):
                return self._aggregated(True)
            return self._json(discovery.api_versions(f"{self.host}:{self._port}"))
        if path == "/apis":
            if self._wants_aggregated(request):
                return self._aggregated(False)
            return self._json(discovery.api_group_list())
        if parts[:3] == ["api", "v1", "nodes"] and len(parts) >= 6 and parts[4:6] == ["proxy", "logs"]:
            return await self._node_logs(request, user, parts[3], request.path.split("/proxy/logs", 1)[1])
        if parts[:1] == ["api"] and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 2:
            if len(parts) == 2:
                doc = discovery.api_group(parts[1])
                return self._json(doc) if doc else self._not_found_path(path)
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return self._not_found_path(path)
        if not rest:
            doc = discovery.resource_list(group, version)
            return self._json(doc) if doc else self._not_found_path(path)
        target = self._target(group, version, rest)
        if target is None:
            return self._not_found_path(path)
        return await self._serve(request, user, method, target)

    async def _node_logs(self, request: web.Request, user: str, node: str, rest: str) -> web.StreamResponse:
        from tests.apiserver import nodelogs

        if request.method != "GET":
            return _method_not_allowed()
        nodes = self.store.resource("", "v1", "nodes")
        if not self.auth.allowed(user, "get", "nodes/proxy", None):
            return status_response(403, "Forbidden", forbidden_message(user, "get", "nodes", "", None, node, "proxy"),
                                   {"name": node, "kind": "nodes"})
        self.store.get(nodes, None, node)  # 404 for an unknown node, as the proxy answers
        logs = self.node_logs.setdefault(node, nodelogs.NodeLogs())
        return await nodelogs.handle(request, logs, rest.lstrip("/"))

    def _target(self, group: str, version: str, rest: list[str]) -> _Target | None:
        lookup = self.store.resource
        if rest[0] == "namespaces" and len(rest) >= 3:
            resource = lookup(group, version, rest[2])
            if resource is not None and resource.namespaced:
                return _Target(resource, rest[1], rest[3] if len(rest) > 3 else None,
                               rest[4] if len(rest) > 4 else None)
        resource = lookup(group, version, rest[0])
        if resource is None or len(rest) > 3:
            return None
        return _Target(resource, None, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)

    async def _serve(self, request: web.Request, user: str, method: str, t: _Target) -> web.StreamResponse:
        r = t.resource
        verb = {"GET": "get" if t.name else "list", "POST": "create", "DELETE": "delete",
                "PUT": "update", "PATCH": "patch"}.get(method)
        if t.subresource == "exec" and r.plural == "pods":
            verb = "create"
        if verb is None:
            return _method_not_allowed()
        if request.query.get("watch") in ("true", "1"):
            verb = "watch"
        resource_name = f"{r.plural}/{t.subresource}" if t.subresource else r.plural
        if not self.auth.allowed(user, verb, resource_name, t.namespace):
            message = forbidden_message(user, verb, r.plural, r.group, t.namespace, t.name, t.subresource)
            return status_response(403, "Forbidden", message,
                                   {"name": t.name, "group": r.group, "kind": r.plural} if t.name else
                                   {"group": r.group, "kind": r.plural})
        if verb == "watch":
            return await self._watch(request, t)
        if t.subresource:
            return await self._subresource(request, t)
        if method == "GET":
            return self._get(request, t) if t.name else self._list(request, t)
        if method == "POST" and not t.name:
            return await self._create(request, t)
        if method == "DELETE" and t.name:
            entry = self.store.delete(r, t.namespace or "", t.name)
            return web.Response(body=entry.full(r), content_type=JSON)
        if method in ("PUT", "PATCH") and t.name:
            return await self._update(request, t, patch=method == "PATCH")
        return _method_not_allowed()

    def _list(self, request: web.Request, t: _Target) -> web.Response:
        q = request.query
        r = t.resource
        labels = parse_label_selector(q.get("labelSelector"))
        fields, _ = parse_field_selector(q.get("fieldSelector"),
                                         {"metadata.name", "metadata.namespace", *r.field_labels})
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            return status_response(400, "BadRequest", f"invalid limit: {q.get('limit')!r}")
        result = self.store.list(r, t.namespace, labels, fields, max(limit, 0), q.get("continue", ""))
        if tables.wants_table(request.headers.get("Accept", "")):
            doc = tables.table(r, [loads(e.full(r)) for e in result.entries], str(result.resource_version),
                               result.continue_token, q.get("includeObject", "Metadata"))
            return self._json(doc)
        meta = b'{"resourceVersion":"%d"' % result.resource_version
        if result.continue_token:
            meta += b',"continue":"%s"' % result.continue_token.encode()
        if result.remaining:
            meta += b',"remainingItemCount":%d' % result.remaining
        # Built-in types' list items carry no kind/apiVersion on the wire; custom resources' do.
        custom = r.group.endswith("windows.k8s.io")
        items = b",".join(e.full(r) for e in result.entries) if custom else b",".join(e.raw for e in result.entries)
        body = b'{"kind":"%s","apiVersion":"%s","metadata":%s},"items":[%s]}' % (
            r.list_kind.encode(), r.group_version.encode(), meta, items)
        return web.Response(body=body, content_type=JSON)

    async def _watch(self, request: web.Request, t: _Target) -> web.StreamResponse:
        """A watch stream: newline-delimited {"type", "object"} events until timeoutSeconds.

        Without resourceVersion (or with "0") the current objects come first as ADDED, like the
        real server; with one, only later changes. Tables (kubectl get -w) are served as tables.
        """
        r, q = t.resource, request.query
        labels = parse_label_selector(q.get("labelSelector"))
        fields, _ = parse_field_selector(q.get("fieldSelector"),
                                         {"metadata.name", "metadata.namespace", *r.field_labels})
        try:
            since = int(q.get("resourceVersion") or 0)
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            return status_response(400, "BadRequest", "invalid resourceVersion or timeoutSeconds")
        as_table = tables.wants_table(request.headers.get("Accept", ""))
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def on_change(event_type: str, resource: Resource, entry: Entry) -> None:
            if resource is r:
                loop.call_soon_threadsafe(queue.put_nowait, (event_type, entry))

        def wanted(entry: Entry) -> bool:
            if t.namespace and r.namespaced and entry.namespace != t.namespace:
                return False
            if t.name and entry.name != t.name:
                return False
            if labels is not None and not labels(entry.labels):
                return False
            return fields is None or fields(entry.field_values(r))

        first = True

        async def send(event_type: str, entry: Entry) -> None:
            nonlocal first
            if as_table:
                doc = tables.table(r, [entry.obj(r)], str(entry.rv), "", q.get("includeObject", "Metadata"))
                if not first:
                    doc["columnDefinitions"] = []
                body = dumps(doc)
            else:
                body = entry.full(r)
            first = False
            await response.write(b'{"type":"%s","object":%s}\n' % (event_type.encode(), body))

        self.store.subscribe(on_change)
        response = web.StreamResponse(headers={"Content-Type": JSON})
        response.enable_chunked_encoding()
        try:
            await response.prepare(request)
            initial_events = q.get("sendInitialEvents") in ("true", "1")
            if not since or initial_events:
                listed = self.store.list(r, t.namespace if r.namespaced else None)
                for entry in listed.entries:
                    if wanted(entry):
                        await send("ADDED", entry)
                if initial_events:
                    # Watch-list (kubectl 1.35+ `wait`, client-go WatchListClient): the initial state ends
                    # with a bookmark so annotated, as kube-apiserver sends it.
                    since = listed.resource_version
                    bookmark = {"kind": r.kind, "apiVersion": r.group_version, "metadata": {
                        "resourceVersion": str(since), "annotations": {"k8s.io/initial-events-end": "true"}}}
                    await response.write(b'{"type":"BOOKMARK","object":%s}\n' % dumps(bookmark))
            deadline = loop.time() + timeout
            while (remaining := deadline - loop.time()) > 0:
                if request.transport is None or request.transport.is_closing():
                    break  # the client went away; aiohttp does not cancel handlers for that
                try:
                    event_type, entry = await asyncio.wait_for(queue.get(), min(remaining, 0.5))
                except TimeoutError:
                    continue
                if entry.rv > since and wanted(entry):
                    await send(event_type, entry)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass  # the client stopped watching
        finally:
            self.store.unsubscribe(on_change)
        return response

    def _get(self, request: web.Request, t: _Target) -> web.Response:
        entry = self.store.get(t.resource, t.namespace, t.name or "")
        if tables.wants_table(request.headers.get("Accept", "")):
            doc = tables.table(t.resource, [entry.obj(t.resource)], str(entry.rv), "",
                               request.query.get("includeObject", "Metadata"))
            return self._json(doc)
        return web.Response(body=entry.full(t.resource), content_type=JSON)

    async def _read_body(self, request: web.Request) -> dict:
        raw = await request.read()
        try:
            if "yaml" in request.content_type:
                body = yaml.safe_load(raw)
            else:
                body = loads(raw)
        except Exception:  # noqa: BLE001 - any parse failure is the client's error
            raise StoreError(400, "BadRequest", "the request body could not be decoded") from None
        if not isinstance(body, dict):
            raise StoreError(400, "BadRequest", "the request body must be an object")
        return body

    async def _create(self, request: web.Request, t: _Target) -> web.Response:
        body = await self._read_body(request)
        r = t.resource
        if body.get("kind") and body["kind"] != r.kind:
            raise StoreError(400, "BadRequest", f"the kind {body['kind']!r} does not match the resource {r.plural!r}")
        if request.query.get("dryRun") == "All":
            return web.Response(status=201, body=dumps({**body, "kind": r.kind, "apiVersion": r.group_version}),
                                content_type=JSON)
        if r.plural == "pods":
            self._admit_pod(body, t.namespace or "default")
        entry = self.store.put(body, r, t.namespace, create=True)
        return web.Response(status=201, body=entry.full(r), content_type=JSON)

    def _admit_pod(self, pod: dict, namespace: str) -> None:
        from tests.apiserver.admission import pod_security_violation

        namespaces = self.store.resource("", "v1", "namespaces")
        try:
            labels = self.store.get(namespaces, None, namespace).obj(namespaces)["metadata"].get("labels") or {}
        except StoreError:
            return
        message = pod_security_violation(pod, labels)
        if message:
            raise StoreError(403, "Forbidden", message)

    async def _update(self, request: web.Request, t: _Target, patch: bool) -> web.Response:
        r = t.resource
        current = self.store.get(r, t.namespace, t.name or "").obj(r)
        body = await self._read_body(request)
        new = _merge_patch(current, body) if patch else body
        new.setdefault("metadata", {})["name"] = t.name
        new["metadata"]["uid"] = current["metadata"]["uid"]
        new["metadata"]["creationTimestamp"] = current["metadata"]["creationTimestamp"]
        entry = self.store.put(new, r, t.namespace)
        return web.Response(body=entry.full(r), content_type=JSON)

    async def _subresource(self, request: web.Request, t: _Target) -> web.StreamResponse:
        r = t.resource
        entry: Entry = self.store.get(r, t.namespace, t.name or "")
        if t.subresource == "status":
            return web.Response(body=entry.full(r), content_type=JSON)
        if r.plural == "pods" and t.subresource == "log":
            # Tests that need container output put it in this annotation.
            annotations = entry.obj(r)["metadata"].get("annotations") or {}
            return web.Response(text=annotations.get("test.kubectl-win.io/log", ""), content_type="text/plain")
        if r.plural == "pods" and t.subresource == "exec":
            module = self._exec_handler()
            if module is None:
                return status_response(400, "BadRequest", "pods/exec is not served by this test API server")
            ctx = ExecContext(self, self.store, self.faults, entry.obj(r), t.namespace or "", t.name or "")
            return await module.handle(request, ctx)
        raise not_found(r, f"{t.name}/{t.subresource}")

    def _exec_handler(self) -> Any:
        if self._exec_module is None:
            try:
                self._exec_module = importlib.import_module("tests.apiserver.exec")
            except ModuleNotFoundError as exc:
                if exc.name != "tests.apiserver.exec":
                    raise
                return None
        return self._exec_module

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _wants_aggregated(request: web.Request) -> bool:
        """True when one of the Accept alternatives is the v2 APIGroupDiscoveryList."""
        for alternative in request.headers.get("Accept", "").split(","):
            params = {p.strip() for p in alternative.split(";")[1:]}
            if {"g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"} <= params:
                return True
        return False

    def _aggregated(self, legacy: bool) -> web.Response:
        if not self.aggregated_discovery:
            return self._json(discovery.api_versions(f"{self.host}:{self._port}") if legacy
                              else discovery.api_group_list())
        resp = web.Response(body=dumps(discovery.aggregated(legacy)))
        resp.headers["Content-Type"] = discovery.AGGREGATED_V2
        return resp

    @staticmethod
    def _json(doc: dict) -> web.Response:
        return web.Response(body=dumps(doc), content_type=JSON)

    @staticmethod
    def _not_found_path(path: str) -> web.Response:
        return status_response(404, "NotFound", "the server could not find the requested resource",
                               {"causes": [{"reason": "UnexpectedServerResponse",
                                            "message": f"404 page not found: {quote(path)}"}]})


def _method_not_allowed() -> web.Response:
    return status_response(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; also good enough for kubectl's strategic merge patches of labels."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result
