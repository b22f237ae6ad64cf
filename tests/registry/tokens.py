"""A small token service for the reference registry's `auth.token`: RS256 JWTs in the distribution format
(`access: [{type, name, actions}]`), the key published as a JWKS file the registry trusts.

Who gets what: anonymous callers pull repositories under `public/`; `reader` pulls everything; `admin` pulls and
pushes everything. A wrong password gets 401. Every request is counted by scope so tests can see one token
per scope.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ISSUER = "kubectl-win-test-issuer"
SERVICE = "kubectl-win-test-registry"
USERS = {"admin": "admin-secret-pw", "reader": "reader-secret-pw"}
KEY_ID = "kubectl-win-test-key"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenSigner:
    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict:
        numbers = self._key.public_key().public_numbers()
        n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
        e = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
        return {"keys": [{"kty": "RSA", "kid": KEY_ID, "use": "sig", "alg": "RS256", "n": _b64(n), "e": _b64(e)}]}

    def sign(self, subject: str, access: list[dict], lifetime: int = 300) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}
        claims = {"iss": ISSUER, "sub": subject, "aud": SERVICE, "exp": now + lifetime, "nbf": now - 10,
                  "iat": now, "jti": uuid.uuid4().hex, "access": access}
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64(signature)}"


def granted(user: str | None, repository: str, wanted: list[str]) -> list[str]:
    if user == "admin":
        allowed = {"pull", "push"}
    elif user == "reader" or (user is None and repository.startswith("public/")):
        allowed = {"pull"}
    else:
        allowed = set()
    return [a for a in wanted if a in allowed]


class TokenService:
    """An HTTPS token endpoint at https://localhost:PORT/token (the registry's realm)."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.signer = TokenSigner()
        self.requests: Counter[str] = Counter()  # scope -> requests
        self.users: Counter[str] = Counter()  # user ("" for anonymous) -> requests
        self._lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                query = parse_qs(urlsplit(self.path).query)
                scopes = query.get("scope", [])
                user = None
                header = self.headers.get("Authorization", "")
                if header.startswith("Basic "):
                    name, _, password = base64.b64decode(header[6:]).decode().partition(":")
                    if USERS.get(name) != password:
                        self._answer(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
                        return
                    user = name
                with service._lock:
                    for scope in scopes or [""]:
                        service.requests[scope] += 1
                    service.users[user or ""] += 1
                access = []
                for scope in scopes:
                    kind, _, rest = scope.partition(":")
                    name, _, actions = rest.rpartition(":")
                    actions_granted = granted(user, name, actions.split(","))
                    if actions_granted:
                        access.append({"type": kind, "name": name, "actions": actions_granted})
                self._answer(200, {"token": service.signer.sign(user or "", access), "expires_in": 300})

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.realm = f"https://localhost:{self.port}/token"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
