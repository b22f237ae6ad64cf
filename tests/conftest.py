"""Shared fixtures (a running test API server and its kubeconfig) and the test tiers.

    def test_something(apiserver):
        apiserver.store.put({...})         # seed objects (or apiserver.server.seed(path))
        apiserver.faults.status("^/api/v1/pods", 500, count=1)
        run(["--kubeconfig", str(apiserver.kubeconfig)])

One server is started per test module (cheap: ~20 ms) and reset before each test, so tests
do not see each other's objects, faults or RBAC denials.

Tiers are markers (registered in pyproject.toml) given at collection from what a test uses, so a new test
gets its tier without saying so: a server fixture (apiserver, real_cluster, registries), the browser or Wine
fixtures, or a module that drives its tool itself (imports pty, the browser, Wine, a server package, or
subprocess). Everything else is `unit`: in process, no server, no subprocess; `pytest -m unit` runs in
seconds, and a unit test that starts a process or a server fails, naming the tier it belongs in.
"""

from __future__ import annotations

import functools
import os
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
from tests.support.tools import require_kubectl

if TYPE_CHECKING:
    from tests.support.browser import Browser

# Tier -> the fixtures that bring its server or tool (the fixture closure counts, so fixtures built on
# these, such as exec_settings or real_sample, bring the tier too).
TIER_FIXTURES = {
    "apiserver": {"_apiserver_module", "_http_apiserver_module"},
    "realcluster": {"real_cluster"},
    "registry": {"plain_registry", "htpasswd_registry", "token_registry"},
    "browser": {"browser"},
    "wine": {"wine_prefix"},
    "tools": {"kubectl"},
}
# Tier -> modules whose import by a test module means its tests drive that tool themselves.
TIER_MODULES = {
    "pty": ("pty",),
    "browser": ("tests.support.browser",),
    "wine": ("tests.windows", "tests.apiserver.exec"),
    "apiserver": ("tests.apiserver", "tests.apiserver.server", "tests.apiserver.process"),
    "realcluster": ("tests.realcluster", "tests.realcluster.cluster"),
    "registry": ("tests.registry", "tests.registry.server"),
    "tools": ("subprocess",),
}
TIERS = ("unit", *dict.fromkeys([*TIER_FIXTURES, *TIER_MODULES]))


@functools.cache
def _imported(path: str) -> frozenset[str]:
    """The modules a test module imports, at its top or inside a test (`import subprocess` in a function)."""
    text = Path(path).read_text(encoding="utf-8")
    return frozenset(re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, flags=re.M))


def tiers_of(item: pytest.Item) -> set[str]:
    fixtures = set(getattr(item, "fixturenames", ()))
    found = {tier for tier, names in TIER_FIXTURES.items() if fixtures & names}
    imported = _imported(str(item.path))
    found |= {tier for tier, modules in TIER_MODULES.items() if imported & set(modules)}
    return found


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(tier) for tier in TIERS):
            continue  # a tier said explicitly wins
        for tier in sorted(tiers_of(item)) or ["unit"]:
            item.add_marker(tier)


# The day the suite counts Windows updates to: doctor estimates the monthly updates released since its update
# data up to today (kubectl_win/updates.py today()), so every test sees the same day unless it sets another.
SUITE_TODAY = "2026-12-06"


@pytest.fixture(autouse=True)
def _one_day(monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.environ.get("KUBECTL_WIN_TODAY"):
        monkeypatch.setenv("KUBECTL_WIN_TODAY", SUITE_TODAY)


@pytest.fixture(autouse=True)
def _unit_starts_nothing(request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit test runs in process: starting a program or a server fails it, naming the fix."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    import subprocess

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{request.node.nodeid} is in the unit tier but starts a process or a server: "
                             "use the fixture that brings it, or mark the test with its tier (pytest.mark.tools)")

    patch = pytest.MonkeyPatch()
    patch.setattr(subprocess.Popen, "__init__", refuse)
    patch.setattr(ApiServer, "start", refuse)
    try:
        yield
    finally:
        patch.undo()


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


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless chromium for the session (each test opens its own page); fails under CI when missing."""
    from tests.support.browser import Browser, BrowserMissing, find_chromium

    in_ci = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
    if find_chromium() is None:
        if in_ci:
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    try:
        instance = Browser.start()
    except BrowserMissing as exc:
        pytest.fail(str(exc)) if in_ci else pytest.skip(str(exc))
    with instance:
        yield instance


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The failure corpora's figures (tests/support/corpus_figures.py), when a test measured one."""
    import sys

    figures = sys.modules.get("tests.support.corpus_figures")
    lines = figures.summary_lines() if figures is not None else []
    if lines:
        terminalreporter.section("failure corpora")
        for line in lines:
            terminalreporter.write_line(line)
