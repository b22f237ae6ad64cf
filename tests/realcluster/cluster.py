"""Run etcd and kube-apiserver on loopback, the way envtest does, and stop both cleanly.

No controller-manager, scheduler or kubelet runs: tests create Nodes with their status, bind pods
with spec.nodeName and patch pod status themselves. The ServiceAccount admission plugin is off
(as in envtest) because no controller creates the `default` ServiceAccount.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.realcluster import build as builder
from tests.realcluster.pki import ClientCert, ClusterPki


class StartError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc: subprocess.Popen | None, timeout: float = 15) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class RealCluster:
    """etcd + kube-apiserver for one Kubernetes minor (`1.37`, `1.34`), state under `workdir`.

        with RealCluster("1.37", tmp) as cluster:
            subprocess.run(["kubectl", "--kubeconfig", cluster.kubeconfig, "get", "ns"])
    """

    def __init__(self, minor: str, workdir: Path) -> None:
        self.minor = minor
        self.component = f"k8s-{minor}"
        self.workdir = Path(workdir)
        self.version = builder.module_versions(self.component)["k8s.io/kubernetes"]
        self.url = ""
        self.kubeconfig = self.workdir / "kubeconfig"
        self.pki: ClusterPki | None = None
        self._etcd: subprocess.Popen | None = None
        self._apiserver: subprocess.Popen | None = None
        self._controllers: subprocess.Popen | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def binaries_missing(self) -> list[str]:
        return [t.binary for t in builder.missing(self.component)]

    def start(self, timeout: float = 120) -> RealCluster:
        paths = builder.build(self.component)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = ClusterPki(self.workdir / "pki")
        admin = self.pki.client("admin", ("system:masters",))
        etcd_port, peer_port, api_port = _free_port(), _free_port(), _free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        logs = self.workdir / "logs"
        logs.mkdir(exist_ok=True)
        self._etcd = self._spawn("etcd", [
            str(paths["etcd"]), "--name=default", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}", "--unsafe-no-fsync", "--log-level=warn",
            "--quota-backend-bytes=4294967296"], logs)
        self._apiserver = self._spawn("kube-apiserver", [
            str(paths["kube-apiserver"]), f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", f"--secure-port={api_port}", "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none", f"--cert-dir={self.workdir / 'certs'}",
            f"--tls-cert-file={self.pki.serving_cert}", f"--tls-private-key-file={self.pki.serving_key}",
            f"--client-ca-file={self.pki.ca_cert}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={self.pki.sa_pub}",
            f"--service-account-signing-key-file={self.pki.sa_key}",
            "--service-cluster-ip-range=10.0.0.0/16", "--authorization-mode=RBAC", "--allow-privileged=true",
            "--disable-admission-plugins=ServiceAccount"], logs)
        self.url = f"https://127.0.0.1:{api_port}"
        self.write_kubeconfig(self.kubeconfig, admin)
        try:
            self._wait_ready(admin, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, argv: list[str], logs: Path) -> subprocess.Popen:
        log = open(logs / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        try:
            # A session of its own: Ctrl-C in a terminal reaches `up`, which stops both in order.
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        finally:
            log.close()

    def _wait_ready(self, admin: ClientCert, timeout: float) -> None:
        assert self.pki is not None
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        context.load_cert_chain(str(admin.cert), str(admin.key))
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            for name, proc in (("etcd", self._etcd), ("kube-apiserver", self._apiserver)):
                if proc is not None and proc.poll() is not None:
                    tail = (self.workdir / "logs" / f"{name}.log").read_text(errors="replace")[-2000:]
                    raise StartError(f"{name} exited with {proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", context=context, timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError as exc:
                last = str(exc)
            time.sleep(0.25)
        raise StartError(f"kube-apiserver {self.version} not ready after {timeout:.0f}s: {last}")

    def start_controllers(self, *controllers: str) -> None:
        """Run kube-controller-manager with only these controllers (e.g. the ValidatingAdmissionPolicy status
        controller, which type-checks policies), until the cluster stops; once per cluster. Its binary is the
        kcm-<minor> component (`python -m tests.realcluster build`)."""
        if self._controllers is not None:
            return
        path = builder.binary_path(f"kcm-{self.minor}", "kube-controller-manager")
        if not path.is_file():
            raise StartError(f"kube-controller-manager for {self.minor} not built: run "
                             f"`python -m tests.realcluster build --version {self.minor}`")
        self._controllers = self._spawn("kube-controller-manager", [
            str(path), f"--kubeconfig={self.kubeconfig}", f"--controllers={','.join(controllers)}",
            "--leader-elect=false", "--secure-port=0"], self.workdir / "logs")

    def stop(self) -> None:
        """Stop kube-controller-manager, kube-apiserver, then etcd; nothing is left running."""
        _stop(self._controllers)
        _stop(self._apiserver)
        _stop(self._etcd)

    def __enter__(self) -> RealCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in (self._etcd, self._apiserver, self._controllers) if p is not None and p.poll() is None]

    # -- clients -----------------------------------------------------------------------------------
    def write_kubeconfig(self, path: Path, cert: ClientCert, context: str = "realcluster",
                         namespace: str | None = None) -> Path:
        assert self.pki is not None
        ctx: dict[str, Any] = {"cluster": context, "user": context}
        if namespace:
            ctx["namespace"] = namespace
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
            "clusters": [{"name": context, "cluster": {"server": self.url,
                                                        "certificate-authority": str(self.pki.ca_cert)}}],
            "users": [{"name": context, "user": {"client-certificate": str(cert.cert),
                                                  "client-key": str(cert.key)}}],
            "contexts": [{"name": context, "context": ctx}],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        os.chmod(path, 0o600)
        return path

    def client(self, user: str = "admin", groups: tuple[str, ...] = ("system:masters",)) -> RestClient:
        assert self.pki is not None
        return RestClient(self, self.pki.client(user, groups))

    def user_kubeconfig(self, user: str, groups: tuple[str, ...] = (), namespace: str | None = None) -> Path:
        """A kubeconfig for a (non-admin unless grouped so) user, for RBAC tests."""
        assert self.pki is not None
        return self.write_kubeconfig(self.workdir / f"kubeconfig-{user}", self.pki.client(user, groups),
                                     context=user, namespace=namespace)


class RestClient:
    """Minimal JSON-over-HTTPS client for test set-up and as an oracle independent of the plugin's
    own access layer: request("POST", "/api/v1/namespaces/x/pods?dryRun=All", pod) -> (status, body)."""

    def __init__(self, cluster: RealCluster, cert: ClientCert) -> None:
        assert cluster.pki is not None
        self._host, self._port = cluster.url.removeprefix("https://").split(":")
        self._context = ssl.create_default_context(cafile=str(cluster.pki.ca_cert))
        self._context.load_cert_chain(str(cert.cert), str(cert.key))
        self._conn: Any = None

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, Any]:
        import http.client
        import json

        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPSConnection(self._host, int(self._port), context=self._context,
                                                         timeout=60)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw.decode(errors="replace")

    def ok(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        status, data = self.request(method, path, body, content_type)
        if status >= 300:
            raise AssertionError(f"{method} {path} -> {status}: {data}")
        return data
