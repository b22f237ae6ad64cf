"""HTTPS_PROXY/HTTP_PROXY/NO_PROXY chosen as kubectl (Go's httpproxy) chooses them, for API requests and
exec websockets: CIDRs, IPs with and without ports, IPv6, domains with and without a leading dot, `*`."""

from __future__ import annotations

import socket

import pytest

from kubectl_win.proxies import ProxyEnvironment, proxy_for
from tests.support.cli import run_cli

PROXY = "http://proxy.corp:3128"


@pytest.mark.parametrize("no_proxy,url,proxied", [
    ("10.0.0.0/8", "https://10.20.30.40:6443", False),
    ("10.0.0.0/8", "https://11.0.0.1:6443", True),
    ("10.0.0.0/8", "https://[::ffff:10.1.1.1]:6443", False),  # IPv4-mapped, as net.IP compares
    ("fd00::/8", "https://[fd00::2]:6443", False),
    ("fd00::/8", "https://[fe80::1]:6443", True),
    ("10.1.2.3", "https://10.1.2.3:6443", False),
    ("10.1.2.3:6443", "https://10.1.2.3:6443", False),
    ("10.1.2.3:443", "https://10.1.2.3:6443", True),  # the port must match
    ("10.1.2.3:443", "https://10.1.2.3", False),  # https's default port
    ("::1", "https://[::1]:6443", False),
    ("fd00::2", "https://[fd00::2]:6443", False),
    ("[fd00::2]:6443", "https://[fd00::2]:6443", False),
    ("[fd00::2]:443", "https://[fd00::2]:6443", True),
    ("corp.example", "https://corp.example:6443", False),  # a bare domain matches itself ...
    ("corp.example", "https://api.corp.example:6443", False),  # ... and its sub-domains
    ("corp.example", "https://notcorp.example:6443", True),
    (".corp.example", "https://api.corp.example", False),  # a leading dot: sub-domains ...
    (".corp.example", "https://corp.example", True),  # ... only
    ("*.corp.example", "https://api.corp.example", False),
    ("*.corp.example", "https://corp.example", True),
    ("corp.example:6443", "https://api.corp.example:6443", False),
    ("corp.example:6443", "https://api.corp.example:443", True),
    ("CORP.Example", "https://API.corp.example", False),  # case-insensitive
    (" foo.com , 10.0.0.0/8 ", "https://10.9.9.9", False),  # spaces around entries
    ("*", "https://anything.example", False),
    ("", "https://localhost:6443", False),  # never for localhost or loopback
    ("", "https://127.0.0.5:6443", False),
    ("", "https://[::1]:6443", False),
    ("", "https://api.example.com", True),
    (":6443,,", "https://api.example.com:6443", True),  # malformed entries are ignored
    ("10.0.0.0/33", "https://10.0.0.1", True),  # an invalid CIDR is a (non-matching) name
])
def test_no_proxy_forms_as_go_reads_them(no_proxy, url, proxied):
    env = ProxyEnvironment(https_proxy=PROXY, no_proxy=no_proxy)
    assert env.proxy_for(url) == (PROXY if proxied else None)


def test_variables_and_schemes_as_go_reads_them():
    env = {"https_proxy": "proxy.lower:1", "HTTPS_PROXY": "proxy.upper:2", "http_proxy": "http://plain:3",
           "no_proxy": "skip.example"}
    assert proxy_for("https://api.example.com", env) == "http://proxy.upper:2"  # upper case wins; http:// added
    assert proxy_for("wss://api.example.com", env) == "http://proxy.upper:2"  # websockets: as https
    assert proxy_for("http://api.example.com", env) == "http://plain:3"
    assert proxy_for("https://skip.example", env) is None  # lower-case no_proxy is read
    assert proxy_for("https://api.example.com", {"HTTPS_PROXY": "", "https_proxy": "http://l:1"}) == "http://l:1"
    assert proxy_for("https://api.example.com", {}) is None


def _outside_address() -> str:
    """An address of this machine that is not loopback (loopback is never proxied, so cannot show NO_PROXY)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.254", 9))  # no packet is sent: this only picks the outgoing address
        return probe.getsockname()[0]
    except OSError:
        return ""
    finally:
        probe.close()


@pytest.fixture
def outside_apiserver(tmp_path, monkeypatch):
    from tests.apiserver.server import ApiServer

    address = _outside_address()
    if not address or address.startswith("127."):
        pytest.skip("this machine has no address besides loopback")
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with ApiServer(token=None, host=address, workdir=tmp_path) as server:
        yield server, address


def test_a_no_proxy_cidr_reaches_the_api_server_and_its_websockets_directly(outside_apiserver, monkeypatch):
    from kubectl_win.kube import KubeFlags, connect

    server, address = outside_apiserver
    kubeconfig = str(server.write_kubeconfig())
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead.getsockname()[1]}")  # nothing listens there
    dead.close()
    through_proxy = run_cli("doctor", "nodes", "--kubeconfig", kubeconfig, "--request-timeout", "5")
    assert through_proxy.exit_code == 3, through_proxy.stderr
    network = ".".join(address.split(".")[:2]) + ".0.0/16"
    monkeypatch.setenv("NO_PROXY", f"other.example,{network}")
    direct = run_cli("doctor", "nodes", "--kubeconfig", kubeconfig, "-o", "json")
    assert direct.exit_code == 0, direct.stderr
    with connect(KubeFlags(kubeconfig=kubeconfig)) as cluster:
        assert cluster.websocket_args("/api/v1/namespaces/default/pods/p/exec", []).proxy is None
    monkeypatch.setenv("NO_PROXY", "other.example")
    with connect(KubeFlags(kubeconfig=kubeconfig)) as cluster:
        assert cluster.websocket_args("/api/v1/namespaces/default/pods/p/exec", []).proxy is not None
