"""pytest fixtures over the real kube-apiserver: one server per Kubernetes minor per test session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.realcluster.build import KUBERNETES_MINORS
from tests.realcluster.cluster import RealCluster
from tests.realcluster.seed import apply_items
from tests.support.paths import SAMPLE_DUMP
from tests.support.tools import missing_tool


@pytest.fixture(scope="session", params=KUBERNETES_MINORS, ids=lambda minor: f"k8s-{minor}")
def real_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    """etcd + kube-apiserver of one minor (tests using it run once per minor). The binaries are built by
    `python -m tests.realcluster build` (.ci/run does it); without them the test fails under CI and skips
    elsewhere, rather than spending a cold build inside the test run."""
    minor = request.param
    cluster = RealCluster(minor, tmp_path_factory.mktemp(f"realcluster-{minor}"))
    missing = cluster.binaries_missing()
    if missing:
        missing_tool(f"{', '.join(missing)} for Kubernetes {minor} not built: "
                     f"run `python -m tests.realcluster build --version {minor}`")
    with cluster:
        yield cluster


@pytest.fixture(scope="session")
def sample_refused(real_cluster: RealCluster) -> list[tuple[dict[str, Any], str]]:
    """The bundled sample cluster (Windows and Linux nodes, failing pods, events, Services, a gMSA spec)
    put into the real server once per session: nodes with their status, pods bound and status-patched.
    Returns the sample's objects the server refused."""
    return apply_items(real_cluster.client(), json.loads(SAMPLE_DUMP.read_text())["items"])


@pytest.fixture
def real_sample(real_cluster: RealCluster, sample_refused: list) -> RealCluster:
    return real_cluster


def go_tool(component: str, binary: str) -> str:
    """A binary built from one of our Go modules (`krew`, `validate-krew-manifest`, ...); fails under CI and
    skips elsewhere when `python -m tests.realcluster build` has not built it."""
    from tests.realcluster.build import binary_path

    path = binary_path(component, binary)
    if not path.is_file():
        missing_tool(f"{binary} not built: run `python -m tests.realcluster build --krew`")
    return str(path)
