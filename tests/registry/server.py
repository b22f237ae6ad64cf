"""Run the reference registry (distribution's `registry serve`, built by tests/realcluster/build.py) on
loopback with TLS, and push images to it.

    with RegistryServer(tmp, auth="token") as registry:
        registry.push_index("public/app", "v1", [...])

`auth` is "none", "htpasswd" (bcrypt, users of tests/registry/tokens.USERS) or "token" (the token service in
tokens.py; anonymous pull on `public/`). `tls=False` serves plain HTTP (for --insecure-registry).
Index validation is off (`validation.manifests.indexes.platforms: none`) so published indexes can be stored
without their children, and Windows foreign layers may point at mcr.microsoft.com.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from tests.realcluster import build as builder
from tests.registry.tokens import ISSUER, SERVICE, USERS, TokenService

DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
FOREIGN_LAYER = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"
OCI_FOREIGN_LAYER = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"


class StartError(RuntimeError):
    pass


def registry_binary() -> Path:
    return builder.binary_path("registry", "registry")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class RegistryServer:
    def __init__(self, workdir: Path, auth: str = "none", tls: bool = True) -> None:
        self.workdir = Path(workdir)
        self.auth, self.tls = auth, tls
        self.port = 0
        self.host = ""
        self.ca_cert: Path | None = None
        self.tokens: TokenService | None = None
        self._proc: subprocess.Popen | None = None
        self._push_token: dict[str, str] = {}

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self, timeout: float = 60) -> RegistryServer:
        binary = builder.build("registry")["registry"]
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.host = f"localhost:{self.port}"
        config: dict[str, Any] = {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(self.workdir / "data")}, "delete": {"enabled": True}},
            "http": {"addr": f"127.0.0.1:{self.port}", "secret": "kubectl-win-test"},
            "validation": {"manifests": {"indexes": {"platforms": "none"},
                                         "urls": {"allow": [r"^https://mcr\.microsoft\.com/"]}}},
        }
        if self.tls:
            from tests.realcluster.pki import ClusterPki

            pki = self._pki = ClusterPki(self.workdir / "pki")
            self.ca_cert = pki.ca_cert
            config["http"]["tls"] = {"certificate": str(pki.serving_cert), "key": str(pki.serving_key)}
        if self.auth == "htpasswd":
            import bcrypt

            lines = [f"{user}:{bcrypt.hashpw(pw.encode(), bcrypt.gensalt(rounds=4)).decode()}"
                     for user, pw in USERS.items()]
            (self.workdir / "htpasswd").write_text("\n".join(lines) + "\n")
            config["auth"] = {"htpasswd": {"realm": "kubectl-win-test", "path": str(self.workdir / "htpasswd")}}
        elif self.auth == "token":
            assert self.tls, "the token service runs on TLS"
            # The same CA and serving certificate (localhost) as the registry's: one CA to trust.
            self.tokens = TokenService(self._pki.serving_cert, self._pki.serving_key)
            jwks = self.workdir / "jwks.json"
            jwks.write_text(json.dumps(self.tokens.signer.jwks()))
            config["auth"] = {"token": {"realm": self.tokens.realm, "service": SERVICE, "issuer": ISSUER,
                                        "jwks": str(jwks), "signingalgorithms": ["RS256"]}}
        (self.workdir / "config.yml").write_text(yaml.safe_dump(config))
        logs = self.workdir / "registry.log"
        self._log = open(logs, "wb")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen([str(binary), "serve", str(self.workdir / "config.yml")],
                                      stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise StartError(f"registry exited with {self._proc.returncode}: {logs.read_text()[-2000:]}")
            try:
                status, _, _ = self.request("GET", "/v2/")
                if status in (200, 401):
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise StartError(f"registry not ready after {timeout:.0f}s: {logs.read_text()[-2000:]}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if getattr(self, "_log", None):
            self._log.close()
        if self.tokens is not None:
            self.tokens.close()
            self.tokens = None

    def __enter__(self) -> RegistryServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- raw HTTP (the test's own pusher; the code under test never uses this) ------------------------
    def _connection(self) -> http.client.HTTPConnection:
        if self.tls:
            context = ssl.create_default_context(cafile=str(self.ca_cert))
            return http.client.HTTPSConnection("localhost", self.port, context=context, timeout=30)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def _auth_header(self, repository: str) -> dict[str, str]:
        if self.auth == "htpasswd":
            raw = f"admin:{USERS['admin']}".encode()
            return {"Authorization": "Basic " + base64.b64encode(raw).decode()}
        if self.auth == "token":
            assert self.tokens is not None
            token = self._push_token.get(repository)
            if token is None:
                token = self._push_token[repository] = self.tokens.signer.sign(
                    "admin", [{"type": "repository", "name": repository, "actions": ["pull", "push"]}])
            return {"Authorization": f"Bearer {token}"}
        return {}

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
                repository: str = "") -> tuple[int, dict[str, str], bytes]:
        connection = self._connection()
        try:
            sent = {**(self._auth_header(repository) if repository else {}), **(headers or {})}
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def push_blob(self, repository: str, data: bytes) -> str:
        digest = digest_of(data)
        status, headers, body = self.request("POST", f"/v2/{repository}/blobs/uploads/", b"", repository=repository)
        if status != 202:
            raise AssertionError(f"starting an upload to {repository}: {status} {body[:300]!r}")
        location = headers["location"]
        path = location.split(str(self.port), 1)[-1] if location.startswith("http") else location
        separator = "&" if "?" in path else "?"
        status, _, body = self.request("PUT", f"{path}{separator}digest={digest}", data,
                                       {"Content-Type": "application/octet-stream"}, repository=repository)
        if status != 201:
            raise AssertionError(f"uploading a blob to {repository}: {status} {body[:300]!r}")
        return digest

    def push_manifest(self, repository: str, reference: str, document: dict, media_type: str) -> str:
        data = json.dumps(document, separators=(",", ":")).encode()
        status, _, body = self.request("PUT", f"/v2/{repository}/manifests/{reference}", data,
                                       {"Content-Type": media_type}, repository=repository)
        if status != 201:
            raise AssertionError(f"pushing {repository}:{reference}: {status} {body[:400]!r}")
        return digest_of(data)

    def push_image(self, repository: str, reference: str, os_name: str = "windows", architecture: str = "amd64",
                   os_version: str | None = None, oci: bool = False, foreign_layer: bool = False) -> str:
        """A single-manifest image whose config names the platform; returns the manifest's digest."""
        config: dict[str, Any] = {"architecture": architecture, "os": os_name,
                                  "rootfs": {"type": "layers", "diff_ids": []}, "config": {}}
        if os_version:
            config["os.version"] = os_version
        layer = f"layer of {repository} {os_name} {os_version}".encode()
        layers = []
        if foreign_layer:
            # A Windows base layer: not in the registry, fetched from its URL by the node.
            fake = digest_of(f"foreign {os_version}".encode())
            layers.append({"mediaType": OCI_FOREIGN_LAYER if oci else FOREIGN_LAYER, "size": 123456789, "digest": fake,
                           "urls": [f"https://mcr.microsoft.com/v2/windows/servercore/blobs/{fake}"]})
        layer_digest = self.push_blob(repository, layer)
        config["rootfs"]["diff_ids"] = [item["digest"] for item in layers] + [layer_digest]
        config_data = json.dumps(config).encode()
        config_digest = self.push_blob(repository, config_data)
        manifest_type = OCI_MANIFEST if oci else DOCKER_MANIFEST
        layer_type = "application/vnd.oci.image.layer.v1.tar+gzip" if oci else \
            "application/vnd.docker.image.rootfs.diff.tar.gzip"
        layers.append({"mediaType": layer_type, "size": len(layer), "digest": layer_digest})
        manifest = {"schemaVersion": 2, "mediaType": manifest_type,
                    "config": {"mediaType": OCI_CONFIG if oci else DOCKER_CONFIG, "size": len(config_data),
                               "digest": config_digest},
                    "layers": layers}
        return self.push_manifest(repository, reference, manifest, manifest_type)

    def push_index(self, repository: str, reference: str, entries: list[dict], oci: bool = True,
                   attestations: bool = False) -> str:
        """An index over children pushed here. Each entry: {os, architecture, os.version?} (a child is pushed
        by digest for each); with `attestations`, an attestation entry follows each child."""
        manifests = []
        for entry in entries:
            platform = {k: v for k, v in entry.items() if k in ("os", "architecture", "os.version", "variant")}
            digest = self.push_image(repository, "child",
                                     platform["os"], platform["architecture"], platform.get("os.version"), oci=oci,
                                     foreign_layer=platform["os"] == "windows")
            size = len(self._manifest_bytes(repository, digest))
            manifests.append({"mediaType": OCI_MANIFEST if oci else DOCKER_MANIFEST, "size": size,
                              "digest": digest, "platform": platform})
            if attestations:
                att = self.push_image(repository, "attestation", "unknown", "unknown", oci=True)
                manifests.append({"mediaType": OCI_MANIFEST, "size": len(self._manifest_bytes(repository, att)),
                                  "digest": att, "platform": {"os": "unknown", "architecture": "unknown"},
                                  "annotations": {"vnd.docker.reference.type": "attestation-manifest",
                                                  "vnd.docker.reference.digest": digest}})
        index_type = OCI_INDEX if oci else DOCKER_LIST
        return self.push_manifest(repository, reference,
                                  {"schemaVersion": 2, "mediaType": index_type, "manifests": manifests}, index_type)

    def push_published_index(self, repository: str, reference: str, index: dict) -> str:
        """A published index as it is (its children are not here; index validation is off)."""
        return self.push_manifest(repository, reference, index, index["mediaType"])

    def _manifest_bytes(self, repository: str, digest: str) -> bytes:
        status, _, body = self.request("GET", f"/v2/{repository}/manifests/{digest}",
                                       headers={"Accept": f"{OCI_MANIFEST}, {DOCKER_MANIFEST}"}, repository=repository)
        assert status == 200, (status, body[:200])
        return body


def environ_without_proxies() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
