"""End to end: the forwarder against the test API server's pods/exec over real HTTPS websockets."""

from __future__ import annotations

import hashlib
import socket

from tests.test_portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exchange,
    exec_settings,
    forwarding,
    hash_until_eof,
    linux_pod,
    random_blob,
)


def test_linux_pod_echo_and_half_close(apiserver, exec_settings):  # noqa: F811
    upstream = Upstream(echo_then_report)
    apiserver.put(linux_pod("web"))
    with forwarding(apiserver, "pod/web", [f":{upstream.port}"]) as running:
        payload = random_blob(1 << 20)
        with running.connect() as sock:
            reply = exchange(sock, payload)
        assert reply == payload + b"EOF after %d\n" % len(payload)
        assert f"Forwarding from 127.0.0.1:{running.ports[0]} -> {upstream.port}" in running.out.text()
    upstream.close()
