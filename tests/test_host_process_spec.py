"""One answer to "is this pod HostProcess", shared by explain, doctor and port-forward."""

from __future__ import annotations

import pytest

from kubectl_win.manifests.objects import is_host_process


def _options(host_process: object) -> dict:
    return {"securityContext": {"windowsOptions": {"hostProcess": host_process}}}


@pytest.mark.parametrize(("spec", "expected"), [
    ({"containers": [{"name": "a"}]}, False),
    ({**_options(True), "containers": [{"name": "a"}]}, True),
    ({**_options(False), "containers": [{"name": "a"}]}, False),
    # Set on a container only: the case port-forward once missed.
    ({"containers": [{"name": "a"}, {"name": "b", **_options(True)}]}, True),
    ({"initContainers": [{"name": "i", **_options(True)}], "containers": [{"name": "a"}]}, True),
    ({"containers": [{"name": "a", **_options(False)}]}, False),
    # Only a real true counts; malformed settings are not HostProcess.
    ({**_options("true"), "containers": [{"name": "a", **_options(1)}]}, False),
    ({"securityContext": "x", "containers": [{"securityContext": {"windowsOptions": []}}, "y"]}, False),
])
def test_pod_level_or_any_container(spec: dict, expected: bool) -> None:
    assert is_host_process(spec) is expected
