"""UDP forwarding: datagrams on a local UDP socket, one mux flow per local peer address.

Each datagram travels as one DATA frame, so boundaries are kept; answers go back to the peer
that opened the flow. A flow with no traffic for the idle timeout is closed (like a NAT entry).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from kubectl_win.kube.exec_stream import ExecError
from kubectl_win.portforward.listener import Listening
from kubectl_win.portforward.mux import Channel, ChannelClosed

# (listener, deliver-to-peer) -> an open flow; raises with a one-line reason when it cannot.
OpenFlow = Callable[[Listening, Callable[[bytes], None]], Channel]


class UdpForward:
    def __init__(self, listener: Listening, open_flow: OpenFlow, idle_timeout: float,
                 on_new_flow: Callable[[Listening, tuple], None], on_error: Callable[[str], None]) -> None:
        self.listener = listener
        self._open_flow = open_flow
        self.idle_timeout = idle_timeout
        self._on_new_flow = on_new_flow
        self._on_error = on_error
        self._flows: dict[tuple, tuple[Channel, list[float]]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"port-forward-udp-{listener.port}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def flows(self) -> int:
        return sum(1 for channel, _ in self._flows.values() if not channel.closed)

    def _run(self) -> None:
        sock = self.listener.sock
        sock.settimeout(0.5)
        last_sweep = time.monotonic()
        while not self._stop.is_set():
            try:
                data, peer = sock.recvfrom(65535)
            except TimeoutError:
                data, peer = None, None
            except OSError:
                if self._stop.is_set():
                    return
                continue  # e.g. an ICMP error for an earlier answer
            now = time.monotonic()
            if peer is not None:
                self._forward(sock, data, peer, now)
            if now - last_sweep >= min(1.0, self.idle_timeout / 2):
                self._sweep(now)
                last_sweep = now

    def _forward(self, sock: socket.socket, data: bytes, peer: tuple, now: float) -> None:
        entry = self._flows.get(peer)
        if entry is None or entry[0].closed:
            last = [now]

            def deliver(payload: bytes, peer: tuple = peer, last: list[float] = last) -> None:
                last[0] = time.monotonic()  # answers keep a flow alive too
                try:
                    sock.sendto(payload, peer)
                except OSError:
                    pass
            try:
                channel = self._open_flow(self.listener, deliver)
            except Exception as exc:  # noqa: BLE001 - one line per failed flow; the listener stays
                self._on_error(f"UDP flow from {_peer(peer)} ({self.listener}/udp): {exc}")
                return
            entry = (channel, last)
            self._flows[peer] = entry
            self._on_new_flow(self.listener, peer)
        channel, last = entry
        try:
            channel.send(data)
        except (ChannelClosed, ExecError):
            pass  # the relay went away; the next datagram opens a new flow
        last[0] = time.monotonic()  # after the send: starting the mux may have taken a while

    def _sweep(self, now: float) -> None:
        for peer, (channel, last) in list(self._flows.items()):
            if channel.closed:
                del self._flows[peer]
            elif now - last[0] >= self.idle_timeout:
                channel.abort("idle")
                del self._flows[peer]

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(2)
        for channel, _ in list(self._flows.values()):
            channel.abort("closing")
        self._flows.clear()


def _peer(peer: tuple) -> str:
    host, port = peer[0], peer[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
