"""Shared fixtures: a running test API server and its kubeconfig.

    def test_something(apiserver):
        apiserver.store.put({...})         # seed objects (or apiserver.server.seed(path))
        apiserver.faults.status("^/api/v1/pods", 500, count=1)
        run(["--kubeconfig", str(apiserver.kubeconfig)])

One server is started per test module (cheap: ~20 ms) and reset before each test, so tests
do not see each other's objects, faults or RBAC denials.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# A shell that starts a job in the background without job control (`cmd &` in a script) leaves SIGINT
# ignored, and exec passes an ignored signal on: the tool started by a test would then never see the
# Ctrl-C the test sends it. A handler here is reset to the default in every child, as a terminal gives it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from tests.apiserver import ApiServer, FaultInjector, Store
from tests.apiserver.auth import Auth
from tests.realcluster.fixtures import real_cluster, real_sample, sample_refused  # noqa: F401 - fixtures
from tests.registry.fixtures import htpasswd_registry, plain_registry, token_registry  # noqa: F401 - fixtures
from tests.tools import require_kubectl


@dataclass
class ApiServerHandle:
    server: ApiServer
    url: str
    kubeconfig: Path
    store: Store
    faults: FaultInjector
    auth: Auth
    token: str

    def seed(self, path: str | Path) -> int:
        return self.server.seed(path)

    def put(self, *objs: dict) -> None:
        for obj in objs:
            self.store.put(obj)

    def kubectl_env(self) -> dict[str, str]:
        """Environment for running the real kubectl against this server (isolated discovery cache)."""
        env = dict(os.environ)
        env["KUBECONFIG"] = str(self.kubeconfig)
        env["KUBECACHEDIR"] = str(self.server.workdir / "kube-cache")
        env["HOME"] = str(self.server.workdir)
        return env


def _reset(server: ApiServer) -> None:
    server.store.clear()
    server.faults.clear()
    server.auth.clear_denials()
    server.auth.expired_tokens.clear()
    server.requests.clear()
    server.node_logs.clear()


@pytest.fixture(scope="module")
def _apiserver_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = ApiServer(tls=True, workdir=tmp_path_factory.mktemp("apiserver"))
    with server:
        yield server


@pytest.fixture
def apiserver(_apiserver_module: ApiServer) -> ApiServerHandle:
    """A running test API server over HTTPS (generated CA, bearer token; kubectl sends tokens only
    over TLS), emptied of objects, faults and denials for this test. `server.pki` holds the CA and
    a client certificate (CN=admin) for certificate-auth tests."""
    server = _apiserver_module
    _reset(server)
    return ApiServerHandle(server, server.url, server.write_kubeconfig(), server.store, server.faults,
                           server.auth, server.token or "")


@pytest.fixture(scope="module")
def _http_apiserver_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = ApiServer(token=None, workdir=tmp_path_factory.mktemp("apiserver-http"))
    with server:
        yield server


@pytest.fixture
def http_apiserver(_http_apiserver_module: ApiServer) -> ApiServerHandle:
    """The same over plain HTTP without authentication (every request is admin)."""
    server = _http_apiserver_module
    _reset(server)
    return ApiServerHandle(server, server.url, server.write_kubeconfig(), server.store, server.faults,
                           server.auth, "")


@pytest.fixture
def kubectl() -> str:
    """The real kubectl (from the test virtualenv or PATH); fails under CI when it is missing."""
    return require_kubectl()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The failure corpora's figures (tests/corpus_figures.py), when a test measured one."""
    import sys

    figures = sys.modules.get("tests.corpus_figures")
    lines = figures.summary_lines() if figures is not None else []
    if lines:
        terminalreporter.section("failure corpora")
        for line in lines:
            terminalreporter.write_line(line)
