"""pytest fixtures over the reference registry: one server per auth mode per test session, with the images
the tests read pushed once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.registry.server import RegistryServer, registry_binary
from tests.support.paths import FIXTURES
from tests.support.tools import missing_tool

WINDOWS_BUILDS = ("10.0.17763.6054", "10.0.20348.2582", "10.0.26100.1742")


def _require_binary() -> None:
    if not registry_binary().is_file():
        missing_tool("the reference registry is not built: run `python -m tests.realcluster build --registry`")


def seed(registry: RegistryServer, prefix: str) -> dict[str, str]:
    """Push the standard set under `prefix/`; returns name -> digest."""
    import json

    windows = [{"os": "windows", "architecture": "amd64", "os.version": v} for v in WINDOWS_BUILDS]
    linux = [{"os": "linux", "architecture": "amd64"}, {"os": "linux", "architecture": "arm64", "variant": "v8"}]
    out = {
        "multi-oci": registry.push_index(f"{prefix}/multi", "oci", windows + linux, oci=True, attestations=True),
        "multi-docker": registry.push_index(f"{prefix}/multi", "docker", windows[:2] + linux[:1], oci=False),
        "ltsc2019-only": registry.push_image(f"{prefix}/single", "ltsc2019", "windows", "amd64",
                                             WINDOWS_BUILDS[0], foreign_layer=True),
        "ltsc2025-oci": registry.push_image(f"{prefix}/single", "ltsc2025", "windows", "amd64",
                                            WINDOWS_BUILDS[2], oci=True, foreign_layer=True),
        "linux-only": registry.push_index(f"{prefix}/linux", "latest", linux, oci=True, attestations=True),
    }
    for name in ("hello-world-latest", "pause-3.8"):
        index = json.loads((FIXTURES / "images" / f"{name}.json").read_text())["index"]
        out[name] = registry.push_published_index(f"{prefix}/published", name, index)
    return out


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """TLS + token auth: anonymous pull on public/, `reader` and `admin` everywhere else."""
    _require_binary()
    with RegistryServer(tmp_path_factory.mktemp("registry-token"), auth="token") as registry:
        registry.seeded = {"public": seed(registry, "public"), "private": seed(registry, "private")}
        yield registry


@pytest.fixture(scope="session")
def htpasswd_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    _require_binary()
    with RegistryServer(tmp_path_factory.mktemp("registry-htpasswd"), auth="htpasswd") as registry:
        registry.seeded = {"team": seed(registry, "team")}
        yield registry


@pytest.fixture(scope="session")
def plain_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """No TLS, no auth: reachable only with --insecure-registry."""
    _require_binary()
    with RegistryServer(tmp_path_factory.mktemp("registry-plain"), auth="none", tls=False) as registry:
        registry.seeded = {"lib": seed(registry, "lib")}
        yield registry
