"""Orchestration: resolve the target, listen, and carry each local connection to the pod.

With `--mux=auto` (the default) one long-lived exec per container runs the multiplexing relay and
carries every connection and UDP flow (mux.py); where that relay cannot start the forwarder says
so once and falls back to one exec per connection, each running a plain relay. If the mux exec
dies its connections are reset at once and the next connection starts a new one.

Threads: one accept loop, one pinger, one per UDP listener, and two per connection (local->pod,
pod->local). A failed connection prints one line and the forwarder keeps serving. A bare pod that
disappears ends the session with exit 1; workload and Service targets are re-resolved to a new pod.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

from kubectl_win.errors import ExitStatus, KubectlWinError
from kubectl_win.kube.exec_stream import (
    CLOSE_SIGNAL,
    STATUS,
    STDERR,
    STDOUT,
    ExecError,
    ExecRejected,
    ExecStatus,
    ExecStream,
    WebsocketTarget,
    exec_query,
    run_exec,
    target_from_args,
)
from kubectl_win.kube.resources import segment
from kubectl_win.manifests.objects import is_host_process
from kubectl_win.portforward import frames, targets
from kubectl_win.portforward.listener import AcceptLoop, Listening, bind_all
from kubectl_win.portforward.mux import STDIN_PREFIX, Channel, ChannelClosed, MuxSession, MuxUnavailable
from kubectl_win.portforward.ports import PortPair
from kubectl_win.portforward.probe import RelaySelector, RelayUnavailable
from kubectl_win.portforward.relays import Relay

CHUNK = 256 * 1024
MAX_STDERR = 8 * 1024


@dataclass
class ForwardOptions:
    target: targets.Target
    namespace: str
    pairs: list[PortPair]
    addresses: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    remote_host: str = "127.0.0.1"  # validated by ports.validate_remote_host
    container: str | None = None
    relay: str | None = None  # force one relay by name
    pod_running_timeout: float = 60.0
    ping_interval: float = 5.0  # 0 disables pings
    read_timeout: float = 60.0  # no frame or pong for this long: the stream is dead
    connect_timeout: float = 30.0
    shutdown_grace: float = 2.0  # on Ctrl-C, how long open connections may finish
    # v4 cannot pass a local half-close on; after the local EOF, end the exec once the pod side
    # has been silent this long (else a keep-alive server would hold the exec open forever).
    v4_eof_linger: float = 2.0
    mux: str = "auto"  # "auto": one multiplexed exec per container where the relay can; "off": one per connection
    udp_idle_timeout: float = 60.0  # a UDP flow with no datagram either way for this long is closed


class PodGone(ExecRejected):
    """The target pod no longer exists (a bare pod target is not re-resolved)."""

    def __init__(self, message: str) -> None:
        super().__init__(404, "NotFound", message)


class Forwarder:
    def __init__(self, cluster: Any, options: ForwardOptions, out: IO[str], err: IO[str]) -> None:
        self.cluster = cluster
        self.options = options
        self.out, self.err = out, err
        self.selector = RelaySelector(session=os.urandom(6).hex(), forced=options.relay)
        self.listeners: list[Listening] = []
        self.exit_code = ExitStatus.OK
        self._pod: targets.ResolvedPod | None = None
        self._pod_lock = threading.Lock()
        self._print_lock = threading.Lock()
        self._stop = threading.Event()
        self._ids = itertools.count(1)
        self._active: dict[int, tuple[socket.socket, ExecStream | None]] = {}
        self._active_lock = threading.Lock()
        self._accept: AcceptLoop | None = None
        self._udp: list = []  # udp.UdpForward per UDP listener
        self._mux: MuxSession | None = None
        self._mux_lock = threading.Lock()
        self._no_mux: dict[tuple[str, str, str], str] = {}  # containers that fell back, and why

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> list[Listening]:
        """Resolve the target, bind the listeners and print where they are. Raises one-line errors."""
        self._pod = self._resolve()
        local_ports = [local for local, _remote in self._pod.ports]
        protocols = [pair.protocol for pair in self.options.pairs]
        self.listeners = bind_all(self.options.addresses, local_ports, protocols)
        for listener in self.listeners:
            suffix = "/udp" if listener.protocol == "udp" else ""
            self._say(f"Forwarding from {listener}{suffix} -> {self._pod.ports[listener.pair_index][1]}{suffix}")
        if is_host_process(self._pod.pod.get("spec") or {}):
            self._warn("this is a HostProcess pod: the relay runs on the node, so "
                       f"{self.options.remote_host} is the node's own address")
        self._accept = AcceptLoop(self.listeners, self._on_connection)
        self._accept.start()
        if any(listener.protocol == "udp" for listener in self.listeners):
            from kubectl_win.portforward.udp import UdpForward

            for listener in self.listeners:
                if listener.protocol == "udp":
                    forward = UdpForward(listener, self._open_udp_flow, self.options.udp_idle_timeout,
                                         self._on_udp_flow, self._error)
                    forward.start()
                    self._udp.append(forward)
        if self.options.ping_interval > 0:
            threading.Thread(target=self._ping_loop, name="port-forward-ping", daemon=True).start()
        return self.listeners

    def wait(self) -> int:
        """Block until stop() or a fatal error; then clean up and return the exit code."""
        try:
            while not self._stop.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
        return self.shutdown()

    def stop(self, exit_code: int = ExitStatus.OK) -> None:
        if exit_code:
            self.exit_code = exit_code
        self._stop.set()

    def shutdown(self) -> int:
        """Close the listeners, let open connections finish (briefly), abort the rest, remove relays."""
        self._stop.set()
        if self._accept is not None:
            self._accept.close()
        for forward in self._udp:
            forward.close()
            forward.listener.sock.close()
        deadline = time.monotonic() + self.options.shutdown_grace
        while self._active and time.monotonic() < deadline:
            time.sleep(0.05)
        with self._active_lock:
            leftovers = list(self._active.values())
        for conn, stream in leftovers:
            if stream is not None:
                stream.abort()
            _shutdown(conn, socket.SHUT_RDWR)
        with self._mux_lock:
            mux, self._mux = self._mux, None
        if mux is not None:
            mux.close()
        for failure in self.selector.remove_uploads():
            self._warn(failure)
        return int(self.exit_code)

    # --- per connection ------------------------------------------------------------------------
    def _on_connection(self, conn: socket.socket, listener: Listening) -> None:
        if self._stop.is_set():
            conn.close()
            return
        conn_id = next(self._ids)
        with self._active_lock:
            self._active[conn_id] = (conn, None)
        threading.Thread(target=self._serve, args=(conn_id, conn, listener), daemon=True,
                         name=f"port-forward-{conn_id}").start()

    def _serve(self, conn_id: int, conn: socket.socket, listener: Listening) -> None:
        self._say(f"Handling connection for {listener.port}")
        label = f"{listener} -> {self.options.target}"
        try:
            if self.options.mux != "off":
                mux = self._mux_session()
                if mux is not None:
                    remote = self._remote(listener.pair_index)
                    label = f"{listener} -> pod/{self._pod.name if self._pod else '?'}:{remote}"
                    self._serve_mux(conn_id, conn, mux, remote, label)
                    return
            stream, relay, remote = self._open(conn_id, conn, listener.pair_index)
            label = f"{listener} -> pod/{self._pod.name if self._pod else '?'}:{remote}"
            self._pump(conn_id, conn, stream, relay, label)
        except PodGone as exc:
            self._error(f"{exc}; a pod target is not re-resolved, stopping")
            self.stop(ExitStatus.FINDINGS)
        except (ExecError, RelayUnavailable, KubectlWinError) as exc:
            self._error(f"connection {conn_id} ({label}): {exc}")
        except OSError as exc:
            self._error(f"connection {conn_id} ({label}): {exc.strerror or exc}")
        finally:
            with self._active_lock:
                self._active.pop(conn_id, None)
            try:
                conn.close()
            except OSError:
                pass

    def _open(self, conn_id: int, conn: socket.socket, pair_index: int) -> tuple[ExecStream, Relay, int]:
        for attempt in (1, 2):
            pod = self._pod
            assert pod is not None
            try:
                relay = self.selector.relay_for(_key(pod), pod.windows, self._runner(pod))
                remote = pod.ports[pair_index][1]
                command = relay.command(self.options.remote_host, remote)
                stream = ExecStream.open(self._ws_target(pod, command), self.options.connect_timeout,
                                         self.options.read_timeout)
            except ExecRejected as exc:
                self._after_rejection(exc, pod, attempt)
                continue
            with self._active_lock:
                if conn_id in self._active:
                    self._active[conn_id] = (conn, stream)
            return stream, relay, remote
        raise AssertionError("unreachable")

    def _after_rejection(self, exc: ExecRejected, pod: targets.ResolvedPod, attempt: int) -> None:
        """An exec the API server refused: re-raise it unless the pod is gone and, behind a workload,
        one re-resolution may find its replacement (then return and let the caller retry)."""
        if not _pod_gone(exc):
            raise exc
        if self.options.target.is_pod:
            raise PodGone(f"pod {pod.name} is gone ({exc})") from None
        if attempt == 2:
            raise exc
        self._reresolve(pod)

    # --- the multiplexed path -----------------------------------------------------------------------
    def _mux_session(self) -> MuxSession | None:
        """The running mux for the current pod, started (or restarted) on demand; None to fall back."""
        with self._mux_lock:
            for attempt in (1, 2):
                pod = self._pod
                assert pod is not None
                key = _key(pod)
                if key in self._no_mux:
                    return None
                current = self._mux
                if current is not None and current.alive and current.key == key:
                    return current
                try:
                    relay = self.selector.relay_for(key, pod.windows, self._runner(pod))
                    command = relay.mux_command()
                    if command is None:
                        self._fall_back(key, f"the {relay.name} relay carries one connection per exec")
                        return None
                    self._mux = MuxSession.start(self._ws_target(pod, command), relay, key, self._mux_lost,
                                                 self.options.connect_timeout, self.options.read_timeout)
                    return self._mux
                except MuxUnavailable as exc:
                    self._fall_back(key, str(exc))
                    return None
                except ExecRejected as exc:
                    self._after_rejection(exc, pod, attempt)
        raise AssertionError("unreachable")

    def _fall_back(self, key: tuple[str, str, str], reason: str) -> None:
        self._no_mux[key] = reason
        self._warn(f"cannot multiplex connections in container {key[2]!r} ({reason}); "
                   "using one exec per connection")

    def _mux_lost(self, session: MuxSession, reason: str, reset: int) -> None:
        if self._stop.is_set():
            return
        pod = self._pod.name if self._pod else "?"
        connections = f"reset {reset} open connection{'s' if reset != 1 else ''}" if reset else "no open connections"
        self._error(f"lost the relay in pod/{pod}: {reason}; {connections}; the next connection starts a new one")

    def _remote(self, pair_index: int) -> int:
        assert self._pod is not None
        return self._pod.ports[pair_index][1]

    def _serve_mux(self, conn_id: int, conn: socket.socket, mux: MuxSession, remote: int, label: str) -> None:
        try:
            channel = mux.open(frames.TCP, self.options.remote_host, remote)
        except ChannelClosed as exc:
            self._error(f"connection {conn_id} ({label}): lost the relay: {exc}")
            return
        drain = threading.Thread(target=channel.drain_to, args=(conn,), daemon=True,
                                 name=f"port-forward-{conn_id}-down")
        drain.start()
        buffer = bytearray(STDIN_PREFIX + frames.MAX_PAYLOAD)
        try:
            while channel.forward_from(conn, buffer):
                pass
            channel.send_eof()
        except ChannelClosed:
            pass
        except OSError:
            channel.abort("the local client reset the connection")
        except ExecError:
            pass  # the session reader sees the broken stream and resets every channel
        drain.join()
        failure = channel.failure()
        if failure and not self._stop.is_set():
            if not failure.startswith("lost the relay"):  # a lost relay was reported once for all
                self._error(f"connection {conn_id} ({label}): {failure}")

    def _open_udp_flow(self, listener: Listening, deliver) -> Channel:  # noqa: ANN001 - Callable[[bytes], None]
        if self.options.mux == "off":
            raise KubectlWinError("UDP needs the multiplexing relay (--mux=auto)")
        mux = self._mux_session()
        if mux is None:
            assert self._pod is not None
            raise KubectlWinError(f"UDP needs the multiplexing relay: {self._no_mux.get(_key(self._pod), '')}")
        return mux.open(frames.UDP, self.options.remote_host, self._remote(listener.pair_index), on_datagram=deliver)

    def _on_udp_flow(self, listener: Listening, peer: tuple) -> None:
        self._say(f"Handling connection for {listener.port}")

    def _pump(self, conn_id: int, conn: socket.socket, stream: ExecStream, relay: Relay, label: str) -> None:
        last_stdout = [time.monotonic()]
        upstream = threading.Thread(target=self._pump_up, args=(conn, stream, last_stdout), daemon=True)
        upstream.start()
        status: ExecStatus | None = None
        stderr = bytearray()
        broken: str | None = None
        local_gone = False
        try:
            while True:
                message = stream.recv_message()
                if message is None:
                    # The server's reply to our own close (v4 linger, local client gone) carries no status.
                    local_gone = local_gone or stream.closed_by_us
                    break
                if not message:
                    continue
                channel = message[0]
                if channel == STDOUT:
                    last_stdout[0] = time.monotonic()
                    if len(message) > 1 and not local_gone:
                        try:
                            conn.sendall(memoryview(message)[1:])
                        except OSError:
                            local_gone = True  # the local client left: stop the relay
                            stream.close()
                            break
                elif channel == STDERR:
                    stderr += message[1:MAX_STDERR]
                elif channel == STATUS:
                    status = ExecStatus.parse(message[1:])
                elif channel == CLOSE_SIGNAL and message[1:] == bytes((STDOUT,)):
                    _shutdown(conn, socket.SHUT_WR)
        except ExecError as exc:
            if stream.closed or stream.closed_by_us:  # we closed it ourselves (local client gone, v4 linger)
                local_gone = True
            else:
                broken = str(exc)
        finally:
            stream.abort()
        _shutdown(conn, socket.SHUT_WR)  # everything received is delivered: send our FIN
        upstream.join(5)
        _shutdown(conn, socket.SHUT_RDWR)
        upstream.join(1)
        if local_gone or self._stop.is_set() and broken:
            return
        if broken:
            self._error(f"connection {conn_id} ({label}): lost the exec stream: {broken}")
        elif status is None:
            self._error(f"connection {conn_id} ({label}): the exec stream closed without a status")
        elif not status.success:
            if status.exit_code is None:
                self._error(f"connection {conn_id} ({label}): {status.message or status.reason}")
            else:
                reason = relay.describe_failure(status.exit_code, bytes(stderr))
                self._error(f"connection {conn_id} ({label}): {reason}")

    def _pump_up(self, conn: socket.socket, stream: ExecStream, last_stdout: list[float]) -> None:
        buffer = bytearray(CHUNK)
        view = memoryview(buffer)
        try:
            while True:
                count = conn.recv_into(buffer)
                if count == 0:
                    break
                stream.send_stdin(view[:count])
        except (OSError, ExecError):
            stream.abort()
            return
        # Local half-close: v5 passes it on as CLOSE on stdin. v4 cannot: stdin stays open, the
        # pod's server sees no FIN, and the exec ends once the pod side has been quiet a while.
        try:
            if stream.close_stdin():
                return
        except ExecError:
            return
        linger = self.options.v4_eof_linger
        last_stdout[0] = max(last_stdout[0], time.monotonic())
        while not stream.closed:
            idle = time.monotonic() - last_stdout[0]
            if idle >= linger:
                stream.close()
                return
            time.sleep(min(0.1, linger - idle))

    # --- helpers -------------------------------------------------------------------------------
    def _resolve(self) -> targets.ResolvedPod:
        o = self.options
        return targets.resolve(self.cluster, o.target, o.namespace, o.pairs, o.container, o.pod_running_timeout)

    def _reresolve(self, stale: targets.ResolvedPod) -> None:
        with self._pod_lock:
            if self._pod is not None and self._pod.uid != stale.uid:
                return  # another connection already moved on
            self.selector.forget(_key(stale))
            self._pod = self._resolve()
            self._warn(f"pod {stale.name} is gone; now forwarding to pod {self._pod.name}")

    def _ws_target(self, pod: targets.ResolvedPod, command: list[str]) -> WebsocketTarget:
        path = f"/api/v1/namespaces/{segment(pod.namespace)}/pods/{segment(pod.name)}/exec"
        return target_from_args(self.cluster.websocket_args(path, exec_query(command, pod.container)))

    def _runner(self, pod: targets.ResolvedPod):  # noqa: ANN202 - probe.Runner
        def run(command: list[str], stdin: bytes | None) -> tuple[bytes, bytes, ExecStatus]:
            try:
                return run_exec(self._ws_target(pod, command), stdin, timeout=self.options.connect_timeout)
            except ExecRejected as exc:
                if _pod_gone(exc) and self.options.target.is_pod:
                    raise PodGone(f"pod {pod.name} is gone ({exc})") from None
                raise
        return run

    def _ping_loop(self) -> None:
        while not self._stop.wait(self.options.ping_interval):
            with self._active_lock:
                streams = [s for _c, s in self._active.values() if s is not None]
            mux = self._mux
            if mux is not None and mux.alive:
                streams.append(mux.stream)
            for stream in streams:
                try:
                    stream.ping()
                except ExecError:
                    pass

    def _say(self, line: str) -> None:
        with self._print_lock:
            print(line, file=self.out, flush=True)

    def _error(self, line: str) -> None:
        with self._print_lock:
            print(f"error: {line}", file=self.err, flush=True)

    def _warn(self, line: str) -> None:
        with self._print_lock:
            print(f"warning: {line}", file=self.err, flush=True)


def _key(pod: targets.ResolvedPod) -> tuple[str, str, str]:
    return (pod.namespace, pod.uid or pod.name, pod.container)


def _pod_gone(exc: ExecRejected) -> bool:
    return exc.code == 404 or (exc.code == 400 and "completed pod" in str(exc))


def _shutdown(conn: socket.socket, how: int) -> None:
    try:
        conn.shutdown(how)
    except OSError:
        pass
