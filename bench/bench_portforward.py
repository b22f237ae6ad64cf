"""port-forward throughput, set-up latency, 200 concurrent connections and UDP, against a direct
loopback connection, one exec per connection (--mux=off) and `kubectl exec -i POD -- <relay>`
piped by hand, all measured in the same run against the same test API server.

    python bench/bench_portforward.py [--size-mb 200] [--relay python3|socat|native] [--latency-samples 50]

The forwarder under test runs with --mux=auto (one multiplexed exec per container where the
relay can); a second forwarder with --mux=off is the exec-per-connection reference for set-up
latency and concurrency. `kubectl exec -i` runs the plain one-connection relay with the bytes
piped through its stdin/stdout: the exec path's ceiling as a user would measure it by hand.

Processes: the test API server (HTTPS, its own process), `kubectl-win port-forward` (the real CLI,
its own process), and this one, which holds both the client and the upstream server "inside the
pod" (the relay runs on this host). The anchor uses the same client and upstream code over a
direct loopback connection, so the ratios isolate what the exec path costs.

The headline ratio (port-forward / direct loopback) is the issue's bar. Because on a small machine
the Python test server (standing in for kube-apiserver + kubelet + runtime, Go in a real cluster)
shares the cores with the forwarder, the bench also prints what isolates the plugin: the
forwarder's and the server's CPU seconds per GB moved, and the rig's own ceiling: the same server,
exec path and relay driven by a minimal in-process client (pre-masked frames up, frame parsing
only down, no local socket hop), with port-forward's throughput as a share of that ceiling.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.apiserver.exec import wine_binary  # noqa: E402
from tests.apiserver.process import spawn  # noqa: E402

BLOCK = os.urandom(1 << 20)

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: bench-linux, namespace: default}
spec: {os: {name: linux}, containers: [{name: app, image: busybox}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bench-windows, namespace: default}
spec:
  os: {name: windows}
  nodeSelector: {kubernetes.io/os: windows}
  containers: [{name: app, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
"""


# --- upstream servers (the pod side) ----------------------------------------------------------------
def serve(handler) -> tuple[socket.socket, int]:  # noqa: ANN001
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)

    def run() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            threading.Thread(target=_guard, args=(handler, conn), daemon=True).start()

    threading.Thread(target=run, daemon=True).start()
    return sock, sock.getsockname()[1]


def _guard(handler, conn: socket.socket) -> None:  # noqa: ANN001
    try:
        handler(conn)
    except OSError:
        pass
    finally:
        conn.close()


def sink(conn: socket.socket) -> None:
    """Count bytes to EOF, then report the count."""
    total, buffer = 0, bytearray(1 << 20)
    while count := conn.recv_into(buffer):
        total += count
    conn.sendall(b"%d\n" % total)


def make_source(size: int):  # noqa: ANN201
    def source(conn: socket.socket) -> None:
        conn.recv(16)  # the client's "go"
        sent = 0
        while sent < size:
            chunk = BLOCK[: min(len(BLOCK), size - sent)]
            conn.sendall(chunk)
            sent += len(chunk)
    return source


def greeter(conn: socket.socket) -> None:
    conn.sendall(b"220 ready\r\n")
    conn.recv(16)


def echo(conn: socket.socket) -> None:
    while data := conn.recv(65536):
        conn.sendall(data)


def serve_udp_echo() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("127.0.0.1", 0))

    def run() -> None:
        while True:
            try:
                data, peer = sock.recvfrom(65535)
            except OSError:
                return
            if peer is None:
                return
            sock.sendto(data, peer)

    threading.Thread(target=run, daemon=True).start()
    return sock, sock.getsockname()[1]


def udp_echo_rate(port: int, count: int, size: int = 512, in_flight: int = 64) -> tuple[float, int]:
    """Datagrams per second echoed with up to `in_flight` outstanding, and how many never came back."""
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    client.connect(("127.0.0.1", port))
    client.settimeout(2)
    payload = bytes(size)
    received = lost = 0
    started = time.perf_counter()
    for index in range(count):
        client.send(payload)
        if index >= in_flight:
            try:
                client.recv(65535)
                received += 1
            except TimeoutError:
                lost += 1
    while received + lost < count:
        try:
            client.recv(65535)
            received += 1
        except TimeoutError:
            lost = count - received
    elapsed = time.perf_counter() - started
    client.close()
    return received / elapsed, lost


# --- client measurements --------------------------------------------------------------------------
def upload(port: int, size: int) -> float:
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sent = 0
        while sent < size:
            chunk = BLOCK[: min(len(BLOCK), size - sent)]
            sock.sendall(chunk)
            sent += len(chunk)
        sock.shutdown(socket.SHUT_WR)
        reply = sock.makefile("rb").readline()
    assert int(reply) == size, reply
    return size / (time.perf_counter() - started)


def download(port: int, size: int) -> float:
    started = time.perf_counter()
    received, buffer = 0, bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"go")
        while count := sock.recv_into(buffer):
            received += count
    assert received == size, received
    return size / (time.perf_counter() - started)


def first_byte_latency(port: int) -> float:
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert sock.recv(64).startswith(b"220")
        elapsed = time.perf_counter() - started
        sock.sendall(b"bye")
    return elapsed


def concurrent(port: int, count: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(count + 1)

    def one(index: int) -> None:
        start.wait()
        began = time.perf_counter()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
                payload = b"%05d" % index * 200
                sock.sendall(payload)
                got = b""
                while len(got) < len(payload):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    got += chunk
            if got != payload:
                raise AssertionError("short echo")
            with lock:
                latencies.append(time.perf_counter() - began)
        except (OSError, AssertionError) as exc:
            with lock:
                errors.append(str(exc))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    total = time.perf_counter() - started
    if errors:
        raise SystemExit(f"{len(errors)} of {count} concurrent connections failed: {errors[:3]}")
    return total, latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process (Linux /proc), or None where that is not available."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds per GB moved, for the processes given, summed over the measured transfers."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.seconds = dict.fromkeys(pids, 0.0)
        self.bytes = 0
        self.available = all(cpu_seconds(pid) is not None for pid in pids.values())

    def measure(self, transfer, port: int, size: int) -> float:  # noqa: ANN001
        before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        rate = transfer(port, size)
        for name, pid in self.pids.items():
            after = cpu_seconds(pid)
            if after is not None and before[name] is not None:
                self.seconds[name] += after - before[name]
        self.bytes += size
        return rate

    def per_gb(self, name: str) -> float:
        return self.seconds[name] / (self.bytes / 1e9)


# --- the rig's ceiling: the same server path without the plugin's forwarder ------------------------
class RigClient:
    """Drives the test server's exec path like the forwarder does, minus its work per byte.

    Uploads send frames masked once up front (one fixed key; fine for a measurement, not for a
    client); downloads only parse frames; no local socket in between. The relay, the server and
    TLS are the same as port-forward's, so this is what the rig can carry at best.
    """

    FRAME = 256 * 1024  # the forwarder's read size, so the framing is comparable

    def __init__(self, kubeconfig: Path, pod: str, windows: bool, relay_name: str) -> None:
        from kubectl_win.kube import KubeFlags, connect
        from kubectl_win.kube.exec_stream import run_exec
        from kubectl_win.portforward.probe import RelaySelector

        self.cluster = connect(KubeFlags(kubeconfig=str(kubeconfig)))
        self.pod = pod
        self.selector = RelaySelector(session=os.urandom(6).hex(), forced=relay_name)
        key = ("default", pod, "app")
        self.relay = self.selector.relay_for(
            key, windows, lambda command, stdin: run_exec(self._target(command), stdin))
        self.frame = self._premasked_frame()

    def _target(self, command: list[str]):  # noqa: ANN202
        from kubectl_win.kube.exec_stream import exec_query, target_from_args

        return target_from_args(self.cluster.websocket_args(f"/api/v1/namespaces/default/pods/{self.pod}/exec",
                                                            exec_query(command, "app")))

    def _premasked_frame(self) -> bytes:
        from websockets.frames import Frame, Opcode

        from kubectl_win.kube.exec_stream import STDIN

        return Frame(Opcode.BINARY, bytes((STDIN,)) + BLOCK[: self.FRAME]).serialize(mask=True)

    def _open(self, port: int):  # noqa: ANN202
        from kubectl_win.kube.exec_stream import ExecStream

        return ExecStream.open(self._target(self.relay.command("127.0.0.1", port)))

    def upload(self, port: int, size: int) -> float:
        from kubectl_win.kube.exec_stream import STDOUT

        if size % self.FRAME:
            raise SystemExit(f"--size-mb must be a multiple of {self.FRAME >> 10} KiB for the rig ceiling")
        started = time.perf_counter()
        stream = self._open(port)
        try:
            for _ in range(size // self.FRAME):
                stream._io.send(self.frame)  # the transport's socket or TLS writer, no per-frame work
            stream.close_stdin()
            reply = b""
            while not reply.endswith(b"\n"):
                message = stream.recv_message()
                if message is None:
                    break
                if message[:1] == bytes((STDOUT,)):
                    reply += message[1:]
        finally:
            stream.abort()
        assert int(reply) == size, reply
        return size / (time.perf_counter() - started)

    def download(self, port: int, size: int) -> float:
        from kubectl_win.kube.exec_stream import STATUS, STDOUT

        started = time.perf_counter()
        stream = self._open(port)
        received = 0
        try:
            stream.send_stdin(b"go")
            while True:  # to the end of the exec, as port-forward's download runs to the local EOF
                message = stream.recv_message()
                if message is None or message[:1] == bytes((STATUS,)):
                    break
                if message[:1] == bytes((STDOUT,)):
                    received += len(message) - 1
        finally:
            stream.abort()
        assert received == size, received
        return size / (time.perf_counter() - started)

    def close(self) -> None:
        for failure in self.selector.remove_uploads():
            print(f"warning: {failure}", file=sys.stderr)


# --- kubectl exec -i, piped by hand ------------------------------------------------------------------
class KubectlExec:
    """`kubectl exec -i POD -- <relay> 127.0.0.1 PORT` with the bytes piped through it: the exec path's
    ceiling for one connection, measured the way a user would without the plugin."""

    def __init__(self, kubeconfig: Path, pod: str, relay_argv: list[str]) -> None:
        self.base = ["kubectl", "--kubeconfig", str(kubeconfig), "exec", "-i", pod, "-c", "app", "--"]
        self.relay_argv = relay_argv
        self.env = dict(os.environ, KUBECACHEDIR=str(kubeconfig.parent / "kube-cache"))

    def _start(self, port: int) -> subprocess.Popen:
        argv = [part.replace("{host}", "127.0.0.1").replace("{port}", str(port)) for part in self.relay_argv]
        return subprocess.Popen(self.base + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=self.env, bufsize=0)

    def upload(self, port: int, size: int) -> float:
        started = time.perf_counter()
        process = self._start(port)
        sent = 0
        while sent < size:
            chunk = BLOCK[: min(len(BLOCK), size - sent)]
            process.stdin.write(chunk)
            sent += len(chunk)
        process.stdin.close()
        reply = process.stdout.read()
        process.wait(60)
        assert int(reply) == size, reply
        return size / (time.perf_counter() - started)

    def download(self, port: int, size: int) -> float:
        started = time.perf_counter()
        process = self._start(port)
        process.stdin.write(b"go")
        received = 0
        while chunk := process.stdout.read(1 << 20):
            received += len(chunk)
        process.stdin.close()
        process.wait(60)
        assert received == size, received
        return size / (time.perf_counter() - started)


# --- the forwarder process ------------------------------------------------------------------------
def start_forwarder(kubeconfig: Path, pod: str, ports: list, relay: str,
                    mux: str = "auto") -> tuple[subprocess.Popen, list[int]]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    # SIGINT back to its default: a shell starts background jobs with it ignored, and the bench ends
    # the forwarder with a Ctrl-C.
    process = subprocess.Popen([sys.executable, "-m", "kubectl_win", "port-forward", f"pod/{pod}",
                                *[f":{p}" for p in ports], "--relay", relay, "--mux", mux,
                                "--kubeconfig", str(kubeconfig)],
                               stdout=subprocess.PIPE, stderr=sys.stderr, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    local = []
    for _ in ports:
        line = process.stdout.readline()
        if not line.startswith("Forwarding from"):
            raise SystemExit(f"port-forward did not start: {line!r}")
        local.append(int(line.split()[2].rsplit(":", 1)[1].removesuffix("/udp")))
    threading.Thread(target=lambda: process.stdout.read(), daemon=True).start()  # drain "Handling ..." lines
    return process, local


def init_wine(prefix: str) -> None:
    wine = wine_binary()
    if wine is None:
        raise SystemExit("wine64 is not installed; use --relay socat or python3")
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all")
    exe = str(REPO / "kubectl_win/portforward/relays/native/kwin-relay.exe")
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run([wine, exe, "--version"], env=env, check=False, timeout=180, **quiet)
    subprocess.run([shutil.which("wineserver") or "/usr/lib/wine/wineserver64", "-p"], env=env, check=False, **quiet)
    subprocess.run([wine, exe, "--version"], env=env, check=False, timeout=60, **quiet)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--relay", default="python3", choices=("python3", "socat", "native"),
                        help="python3 and native multiplex; socat falls back to one exec per connection")
    parser.add_argument("--udp-datagrams", type=int, default=20000)
    parser.add_argument("--latency-samples", type=int, default=50)
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--http", action="store_true", help="plain HTTP API server (default HTTPS)")
    args = parser.parse_args()
    size = args.size_mb << 20

    work = Path(tempfile.mkdtemp(prefix="bench-portforward-"))
    (work / "pods.yaml").write_text(PODS)
    pod = "bench-linux"
    if args.relay == "native":
        os.environ["KUBECTL_WIN_TEST_WINEPREFIX"] = str(work / "wine")
        init_wine(str(work / "wine"))
        pod = "bench-windows"

    sink_sock, sink_port = serve(sink)
    source_sock, source_port = serve(make_source(size))
    greet_sock, greet_port = serve(greeter)
    echo_sock, echo_port = serve(echo)
    udp_sock, udp_port = serve_udp_echo()

    extra = ["--http"] if args.http else []
    with spawn("--seed", str(work / "pods.yaml"), *extra, workdir=work / "apiserver") as server:
        forwarder, (f_sink, f_source, f_greet, f_echo, f_udp) = start_forwarder(
            server.kubeconfig, pod, [sink_port, source_port, greet_port, echo_port, f"{udp_port}/udp"], args.relay)
        per_connection, (o_greet, o_echo) = start_forwarder(server.kubeconfig, pod, [greet_port, echo_port],
                                                            args.relay, mux="off")
        try:
            first_byte_latency(f_greet)  # probe and (native) upload happen on the first connection
            first_byte_latency(o_greet)
            rows = []
            direct_up = max(upload(sink_port, size) for _ in range(2))
            direct_down = max(download(source_port, size) for _ in range(2))
            pids = {"forwarder": forwarder.pid, "server": server.process.pid}
            up_cpu, down_cpu = CpuMeter(pids), CpuMeter(pids)
            pf_up = max(up_cpu.measure(upload, f_sink, size) for _ in range(2))
            pf_down = max(down_cpu.measure(download, f_source, size) for _ in range(2))
            rig = RigClient(server.kubeconfig, pod, args.relay == "native", args.relay)
            try:
                rig_cpu = CpuMeter({"server": server.process.pid})
                rig_up = max(rig_cpu.measure(rig.upload, sink_port, size) for _ in range(2))
                rig_down = max(rig_cpu.measure(rig.download, source_port, size) for _ in range(2))
            finally:
                rig.close()
            rows.append(("bulk upload, one connection", direct_up, pf_up))
            rows.append(("bulk download, one connection", direct_down, pf_down))
            by_hand = None
            if shutil.which("kubectl") and args.relay != "native":
                from kubectl_win.portforward.relays.posix import PYTHON, SOCAT

                piped = KubectlExec(server.kubeconfig, pod, list((PYTHON if args.relay == "python3" else SOCAT)
                                                                 .argv_template))
                by_hand = (max(piped.upload(sink_port, size) for _ in range(2)),
                           max(piped.download(source_port, size) for _ in range(2)))

            direct_lat = [first_byte_latency(greet_port) for _ in range(args.latency_samples)]
            pf_lat = [first_byte_latency(f_greet) for _ in range(args.latency_samples)]
            off_lat = [first_byte_latency(o_greet) for _ in range(args.latency_samples)]
            direct_total, _ = concurrent(echo_port, args.concurrent)
            pf_total, pf_conc = concurrent(f_echo, args.concurrent)
            off_total, off_conc = concurrent(o_echo, args.concurrent)
            direct_udp = udp_echo_rate(udp_port, args.udp_datagrams)
            pf_udp = udp_echo_rate(f_udp, args.udp_datagrams)
        finally:
            for process in (forwarder, per_connection):
                process.send_signal(2)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    print("warning: port-forward did not exit within 30 s of Ctrl-C; killed", file=sys.stderr)
                    process.kill()
                    process.wait()
    for sock in (sink_sock, source_sock, greet_sock, echo_sock, udp_sock):
        sock.close()

    scheme = "HTTP" if args.http else "HTTPS"
    print(f"relay: {args.relay}; {args.size_mb} MB per transfer; API server over {scheme} in its own process")
    print(f"{'measurement':34} {'direct TCP':>12} {'port-forward':>13} {'ratio':>7}")
    for name, direct, forwarded in rows:
        print(f"{name:34} {direct / 1e6:9.0f} MB/s {forwarded / 1e6:10.0f} MB/s {forwarded / direct:7.1%}")
    if by_hand is not None:
        print()
        print(f"{'one connection vs kubectl exec -i':34} {'direct TCP':>12} {'kubectl exec':>13} {'port-forward':>13} "
              f"{'pf/kubectl':>10}")
        for name, direct, forwarded, piped_rate in (("upload", direct_up, pf_up, by_hand[0]),
                                                    ("download", direct_down, pf_down, by_hand[1])):
            print(f"{'  ' + name:34} {direct / 1e6:7.0f} MB/s {piped_rate / 1e6:8.0f} MB/s {forwarded / 1e6:8.0f} MB/s "
                  f"{forwarded / piped_rate:10.0%}")
        bar = min(pf_up / by_hand[0], pf_down / by_hand[1])
        print(f"bulk bar (>= kubectl exec -i piped by hand): {'met' if bar >= 1 else 'NOT met'} ({bar:.0%})")
    print()
    print(f"{'new connections':34} {'direct TCP':>12} {'--mux=auto':>13} {'--mux=off':>13} {'auto/off':>9}")
    for label, q in (("set-up to first byte, p50", 50), ("set-up to first byte, p99", 99)):
        print(f"{label:34} {pct(direct_lat, q) * 1e3:9.2f} ms {pct(pf_lat, q) * 1e3:10.2f} ms "
              f"{pct(off_lat, q) * 1e3:10.2f} ms {pct(pf_lat, q) / pct(off_lat, q):9.3f}")
    print(f"{f'{args.concurrent} concurrent echo connections':34} {direct_total:10.2f} s {pf_total:11.2f} s "
          f"{off_total:11.2f} s {pf_total / off_total:9.3f}")
    print(f"{'  per connection p50 / p99':34} {'':12} {statistics.median(pf_conc) * 1e3:6.0f}/"
          f"{pct(pf_conc, 99) * 1e3:.0f} ms {statistics.median(off_conc) * 1e3:7.0f}/{pct(off_conc, 99) * 1e3:.0f} ms")
    ratio = max(pct(pf_lat, 50) / pct(off_lat, 50), pct(pf_lat, 99) / pct(off_lat, 99))
    print(f"set-up bar (p50 and p99 <= 1/10 of --mux=off): {'met' if ratio <= 0.1 else 'NOT met'} ({ratio:.3f})")
    print()
    print(f"UDP echo, {args.udp_datagrams} datagrams of 512 bytes, 64 in flight:")
    print(f"{'  direct':34} {direct_udp[0]:9.0f} /s   lost {direct_udp[1]}")
    print(f"{'  port-forward (mux)':34} {pf_udp[0]:9.0f} /s   lost {pf_udp[1]}")

    from kubectl_win.kube.exec_stream import masking_accelerated

    print()
    print(f"isolating the plugin ({os.cpu_count()} CPUs; websocket masking in "
          f"{'C (websockets.speedups)' if masking_accelerated() else 'pure Python'}):")
    print(f"{'':34} {'upload':>12} {'download':>13}")
    if up_cpu.available:
        for name in ("forwarder", "server"):
            print(f"{name + ' CPU per GB moved':34} {up_cpu.per_gb(name):10.2f} s {down_cpu.per_gb(name):11.2f} s")
    print(f"{'rig ceiling (minimal client)':34} {rig_up / 1e6:7.0f} MB/s {rig_down / 1e6:8.0f} MB/s"
          f"   ({rig_up / direct_up:.0%} / {rig_down / direct_down:.0%} of direct)")
    print(f"{'port-forward / rig ceiling':34} {pf_up / rig_up:12.1%} {pf_down / rig_down:13.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
