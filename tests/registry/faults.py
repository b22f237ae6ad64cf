"""A stand-in registry for faults the reference server does not produce: slow answers, 429 throttling with
Retry-After, 5xx, a Basic challenge whose realm is a label, and a port nobody listens on. Plain HTTP on
loopback (clients reach it with --insecure-registry). Serves the published pause 3.8 index for any manifest.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.paths import FIXTURES

_PAUSE = FIXTURES / "images" / "pause-3.8.json"
INDEX = json.loads(_PAUSE.read_text())["index"]
INDEX_BYTES = json.dumps(INDEX).encode()


class FaultRegistry:
    """Repositories: `slow/*` (answers after `slow_seconds`, or never when the stand-in closes first),
    `throttled/*` (429 with Retry-After: 1 for the first `throttle_count` requests of each path),
    `always429/*` (429 with Retry-After: 3600), `broken/*` (500), `basic/*` (Basic realm="Registry Realm";
    user `u`, password `p`), anything else: the index."""

    def __init__(self, slow_seconds: float = 30.0, throttle_count: int = 2) -> None:
        self.slow_seconds, self.throttle_count = slow_seconds, throttle_count
        self.hits: Counter[str] = Counter()
        self._release = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                path = self.path.split("?", 1)[0]
                with owner._lock:
                    owner.hits[path] += 1
                    count = owner.hits[path]
                repo = path.removeprefix("/v2/").split("/", 1)[0]
                if path == "/v2/":
                    self._send(200, b"{}")
                elif repo == "slow":
                    owner._release.wait(owner.slow_seconds)
                    self._send(200, INDEX_BYTES, INDEX["mediaType"])
                elif repo == "throttled" and count <= owner.throttle_count:
                    self._send(429, b'{"errors":[{"code":"TOOMANYREQUESTS"}]}', headers={"Retry-After": "1"})
                elif repo == "always429":
                    self._send(429, b'{"errors":[{"code":"TOOMANYREQUESTS"}]}', headers={"Retry-After": "3600"})
                elif repo == "broken":
                    self._send(500, b"oops")
                elif repo == "garbage":
                    self._send(200, b"\x00not json at all", INDEX["mediaType"])
                elif repo == "list":
                    self._send(200, b'[1, 2, 3]', "application/json")
                elif repo == "weird":
                    weird = {"schemaVersion": 2, "mediaType": INDEX["mediaType"],
                             "manifests": [1, None, {"platform": "x"}, {"digest": "sha256:1", "platform": {
                                 "os": "windows", "architecture": "amd64", "os.version": ["no"]}}]}
                    self._send(200, json.dumps(weird).encode(), INDEX["mediaType"])
                elif repo == "schema1":
                    self._send(200, b'{"schemaVersion": 1, "name": "x"}',
                               "application/vnd.docker.distribution.manifest.v1+prettyjws")
                elif repo == "basic" and self.headers.get("Authorization") != "Basic dTpw":
                    self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                               headers={"WWW-Authenticate": 'Basic realm="Registry Realm"'})
                else:
                    self._send(200, INDEX_BYTES, INDEX["mediaType"])

            def _send(self, status: int, body: bytes, content_type: str = "application/json",
                      headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dead_host() -> str:
    """host:port on loopback where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


class ForwardProxy:
    """A plain-HTTP forward proxy: requests with an absolute URL are sent to `upstream` (host:port) whatever
    host the URL names, so a test can use a non-loopback name (loopback is never proxied)."""

    def __init__(self, upstream: str) -> None:
        import http.client

        self.hits: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                from urllib.parse import urlsplit

                parts = urlsplit(self.path)
                owner.hits.append(self.path)
                connection = http.client.HTTPConnection(*upstream.rsplit(":", 1), timeout=30)
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                connection.request("GET", target, headers={k: v for k, v in self.headers.items() if k != "Host"})
                response = connection.getresponse()
                body = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                connection.close()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
