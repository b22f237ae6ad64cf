"""Shared rig for the port-forward tests: upstream servers "inside the pod", pods, a running forwarder.

test_portforward_*.py and the Windows client tests import these helpers. The pods' "inside" is this host: the
test API server's pods/exec runs relays natively (Linux pods) or under Wine (Windows pods).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from kubectl_win.kube import KubeFlags, connect
from kubectl_win.portforward.forwarder import Forwarder, ForwardOptions
from kubectl_win.portforward.ports import parse_port_pair
from kubectl_win.portforward.targets import parse_target
from tests.apiserver.exec import ExecSettings, settings_for, wine_binary
from tests.support.paths import PACKAGE

NATIVE_DIR = PACKAGE / "portforward" / "relays" / "native"


# --- upstream servers ------------------------------------------------------------------------------
class Upstream:
    """A TCP server on 127.0.0.1 whose handler gets each accepted socket (in its own thread)."""

    def __init__(self, handler: Callable[[socket.socket], None], host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(512)
        self.port = self.sock.getsockname()[1]
        self.handler = handler
        self.accepted = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            self.handler(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        # Wake the accept thread before closing: a thread still inside accept() on a closed fd
        # would accept from whatever socket reuses that number next (another test's upstream).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(5)
        self.sock.close()


def echo_then_report(conn: socket.socket) -> None:
    """Echo everything; after the client's FIN, say how many bytes came and close."""
    total = 0
    while True:
        data = conn.recv(262144)
        if not data:
            break
        total += len(data)
        conn.sendall(data)
    conn.sendall(b"EOF after %d\n" % total)


def hash_until_eof(conn: socket.socket) -> None:
    """Read to EOF, answer with the sha256 and the length (needs the half-close to arrive)."""
    digest, total = hashlib.sha256(), 0
    while True:
        data = conn.recv(262144)
        if not data:
            break
        digest.update(data)
        total += len(data)
    conn.sendall(f"{digest.hexdigest()} {total}\n".encode())


def send_seeded(size: int, seed: int = 7) -> Callable[[socket.socket], None]:
    def handler(conn: socket.socket) -> None:
        for chunk in seeded_chunks(size, seed):
            conn.sendall(chunk)
    return handler


def seeded_chunks(size: int, seed: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """Deterministic pseudo-random bytes (sha256 counter mode, fast enough for 100 MB)."""
    block = hashlib.sha256(str(seed).encode()).digest() * 0
    produced, counter = 0, 0
    while produced < size:
        pieces = []
        length = 0
        while length < min(chunk, size - produced):
            block = hashlib.sha512(seed.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest()
            counter += 1
            pieces.append(block)
            length += len(block)
        data = b"".join(pieces)[: min(chunk, size - produced)]
        produced += len(data)
        yield data


def random_blob(size: int) -> bytes:
    return os.urandom(size)


# --- pods --------------------------------------------------------------------------------------------
def linux_pod(name: str, labels: dict | None = None, namespace: str = "default", ports: list | None = None,
              uid: str | None = None) -> dict:
    container = {"name": "app", "image": "busybox"}
    if ports:
        container["ports"] = ports
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
           "spec": {"os": {"name": "linux"}, "containers": [container]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    if uid:
        pod["metadata"]["uid"] = uid
    return pod


def windows_pod(name: str, labels: dict | None = None, namespace: str = "default") -> dict:
    pod = linux_pod(name, labels, namespace)
    pod["spec"] = {"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
                   "containers": [{"name": "iis", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}
    return pod


# --- the forwarder -----------------------------------------------------------------------------------
class LockedBuffer(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return super().write(text)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


@dataclass
class Running:
    forwarder: Forwarder
    out: LockedBuffer
    err: LockedBuffer
    ports: list[int] = field(default_factory=list)

    def connect(self, index: int = 0, timeout: float = 30) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.ports[index]), timeout=timeout)

    def wait_for_error(self, needle: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.err.text():
                return self.err.text()
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} not in stderr: {self.err.text()!r}")


@contextlib.contextmanager
def forwarding(apiserver, target: str, ports: list[str], **options) -> Iterator[Running]:  # noqa: ANN001
    cluster = connect(KubeFlags(kubeconfig=str(apiserver.kubeconfig)))
    opts = ForwardOptions(target=parse_target(target), namespace=options.pop("namespace", "default"),
                          pairs=[parse_port_pair(p) for p in ports], **options)
    out, err = LockedBuffer(), LockedBuffer()
    forwarder = Forwarder(cluster, opts, out, err)
    listeners = forwarder.start()
    running = Running(forwarder, out, err, [listener.port for listener in listeners])
    try:
        yield running
    finally:
        forwarder.shutdown()


def exchange(sock: socket.socket, payload: bytes, half_close: bool = True) -> bytes:
    """Send payload (from a thread), optionally half-close, and read everything back to EOF."""
    def send() -> None:
        sock.sendall(payload)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    chunks = []
    while True:
        data = sock.recv(262144)
        if not data:
            break
        chunks.append(data)
    sender.join(10)
    return b"".join(chunks)


# --- fixtures ----------------------------------------------------------------------------------------
@pytest.fixture
def exec_settings(apiserver) -> Iterator[ExecSettings]:  # noqa: ANN001
    settings = settings_for(apiserver.server)
    settings.protocols = ("v5.channel.k8s.io", "v4.channel.k8s.io")
    settings.idle_timeout = None
    settings.linux_path.clear()
    settings.windows_tools.clear()
    # An exec of an earlier test that outlived its teardown (a loaded machine) is ended here, not counted
    # among this test's sessions.
    settings.end_all(timeout=30)
    with settings.lock:
        settings.commands.clear()
        settings.sessions.clear()
    yield settings
    settings.end_all(timeout=30)


def run_wine(argv: list[str], **kwargs) -> subprocess.CompletedProcess:  # noqa: ANN003 - subprocess.run's
    """subprocess.run for a program under Wine. wineserver starts a SIGKILL timer when a process's last
    Windows thread ends (server/process.c, start_sigkill_timer) and kills a Unix process still there
    when it fires; on a loaded machine that happens after the program has done its work and chosen
    its exit code. Such a run is repeated once (every
    caller's run is repeatable); a second SIGKILL is returned as it is."""
    result = subprocess.run(argv, **kwargs)
    if result.returncode == -signal.SIGKILL:
        result = subprocess.run(argv, **kwargs)
    return result


_WINE_PREFIXES: list[str] = []  # one prefix per test session, even though each module imports the fixture


@pytest.fixture(scope="session")
def wine_prefix(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> str:
    wine = wine_binary()
    if wine is None:
        pytest.skip("wine64 is not installed (CI installs it from Debian)")
    if _WINE_PREFIXES:
        return _WINE_PREFIXES[0]
    prefix = str(tmp_path_factory.mktemp("wineprefix"))
    _WINE_PREFIXES.append(prefix)
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all")
    relay = str(NATIVE_DIR / "kwin-relay.exe")
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    # Creating a prefix takes several seconds, once. Then a persistent wineserver, and Wine's helper
    # processes (services.exe, explorer.exe) started with no pipes attached: otherwise every exec's
    # stdout stays open until those helpers exit, about 3 s after each run. `wineserver -p` only
    # takes effect when it starts the server: the one the first run started (not persistent, so it
    # shut down 3 s after a quiet spell, and each run after that paid the 3 s) is stopped first.
    subprocess.run([wine, relay, "--version"], env=env, timeout=180, check=False, **quiet)
    server = shutil.which("wineserver") or "/usr/lib/wine/wineserver64"
    subprocess.run([server, "-k"], env=env, timeout=30, check=False, **quiet)
    subprocess.run([server, "-w"], env=env, timeout=30, check=False, **quiet)
    subprocess.run([server, "-p"], env=env, timeout=30, check=False, **quiet)
    subprocess.run([wine, relay, "--version"], env=env, timeout=60, check=False, **quiet)
    result = subprocess.run([wine, relay, "--version"], env=env, capture_output=True, timeout=60)
    assert result.stdout.strip() == b"kwin-relay 2", result
    # Each module that imports this fixture gets its own instance, torn down with the module; the
    # wineserver must outlive them all (a later module's runs would each wait ~3 s for the helpers).
    request.config.add_cleanup(lambda: subprocess.run([server, "-k"], env=env, timeout=30, check=False, **quiet))
    return prefix


@pytest.fixture
def windows_exec(exec_settings: ExecSettings, wine_prefix: str) -> ExecSettings:
    exec_settings.wine_prefix = wine_prefix
    return exec_settings
