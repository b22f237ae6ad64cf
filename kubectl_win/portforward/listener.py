"""Local listening sockets and the accept loop (one thread for every listener)."""

from __future__ import annotations

import errno
import selectors
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kubectl_win.errors import KubectlWinError
from kubectl_win.portforward.ports import format_hostport


@dataclass
class Listening:
    address: str
    port: int
    pair_index: int
    sock: socket.socket
    protocol: str = "tcp"

    def __str__(self) -> str:
        return format_hostport(self.address, self.port)


def bind_all(addresses: list[str], local_ports: list[int], protocols: list[str] | None = None) -> list[Listening]:
    """Bind every (address, local port). Port 0 picks a free port, shared by all addresses of that pair.

    An address that cannot be bound fails the whole command unless it came from `localhost` and
    its sibling bound (the caller passes addresses already expanded, so any failure is fatal here
    except a missing IPv6 loopback when IPv4 works).
    """
    listeners: list[Listening] = []
    try:
        for index, requested in enumerate(local_ports):
            port = requested
            bound_any = False
            protocol = protocols[index] if protocols else "tcp"
            for address in addresses:
                try:
                    sock = _listen(address, port) if protocol == "tcp" else _bind_udp(address, port)
                except OSError as exc:
                    if address == "::1" and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) and bound_any:
                        continue  # no IPv6 loopback on this machine
                    raise KubectlWinError(f"unable to listen on {format_hostport(address, port or 0)}: "
                                          f"{exc.strerror or exc}", exit_code=1) from None
                port = sock.getsockname()[1]
                bound_any = True
                listeners.append(Listening(address, port, index, sock, protocol))
    except BaseException:
        for listener in listeners:
            listener.sock.close()
        raise
    return listeners


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        _claim_exclusively(sock)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(512)
    except OSError:
        sock.close()
        raise
    return sock


def _claim_exclusively(sock: socket.socket) -> None:
    """No other socket may bind our port while we listen. On Windows SO_REUSEADDR would let any
    process bind it too (and steal connections), so the listener claims it with SO_EXCLUSIVEADDRUSE.
    Elsewhere SO_REUSEADDR only allows re-binding a port whose old connections are in TIME_WAIT."""
    if hasattr(socket, "SO_EXCLUSIVEADDRUSE"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
    else:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)


def _bind_udp(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        # Bursts of datagrams wait here while the mux is busy rather than being dropped.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        sock.bind((address, port))
    except OSError:
        sock.close()
        raise
    return sock


class AcceptLoop:
    """Accepts on every listener and hands each connection to `on_connection` (which must not block)."""

    def __init__(self, listeners: list[Listening], on_connection: Callable[[socket.socket, Listening], None]) -> None:
        self.listeners = listeners
        self.on_connection = on_connection
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="port-forward-accept", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for listener in self.listeners:
            if listener.protocol != "tcp":
                continue
            listener.sock.setblocking(False)
            selector.register(listener.sock, selectors.EVENT_READ, listener)
        try:
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=0.1):
                    listener: Listening = key.data
                    try:
                        conn, _peer = listener.sock.accept()
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        if self._stop.is_set():
                            return
                        continue
                    conn.setblocking(True)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.on_connection(conn, listener)
        finally:
            selector.close()

    def close(self) -> None:
        """Stop accepting and close the listening sockets."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(2)
        for listener in self.listeners:
            listener.sock.close()
