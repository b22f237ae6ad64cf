"""scaffold's generated objects: golden files per template, the Kubernetes OpenAPI schema of the target
versions, and zero explain findings for every template and option combination that matters."""

from __future__ import annotations

import itertools
import json
import os

import pytest
import yaml

from kubectl_win.explain import lint_object
from kubectl_win.explain.hostprocess_users import service_accounts
from kubectl_win.scaffold.generate import scaffold_workload
from kubectl_win.scaffold.options import PlacementOptions, Taint, WorkloadOptions, build_name
from kubectl_win.versions import NEWEST_KNOWN, format_version
from tests.support.cli import run_cli
from tests.support.paths import GOLDEN

kubernetes_validate = pytest.importorskip("kubernetes_validate")

UPDATE = os.environ.get("KUBECTL_WIN_UPDATE_GOLDEN") == "1"
IIS = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"
# spec.os is GA since 1.25: the oldest schema the output must still pass, and the newest we know.
SCHEMA_VERSIONS = ("1.25", "1.30", format_version(NEWEST_KNOWN))
LINT_VERSIONS = ((1, 25), (1, 30), NEWEST_KNOWN)

CASES: dict[str, list[str]] = {
    "deployment-service": ["deployment", "iis", "--image", IIS, "--port", "80", "--port", "443",
                           "--windows-build", "ltsc2022", "--service", "LoadBalancer", "-n", "web"],
    "deployment-minimal": ["deployment", "app", "--image", "registry.example.com/team/app:1.4.2"],
    "statefulset-headless": ["statefulset", "db", "--image", "example.com/db:ltsc2019", "--port", "1433",
                             "--windows-build", "ltsc2019", "--replicas", "3", "--service", "ClusterIP",
                             "--memory", "4Gi", "--cpu", "2"],
    "daemonset-hostprocess": ["daemonset", "node-agent", "--image",
                              "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
                              "--hostprocess", "--port", "9182", "-n", "monitoring"],
    "job-gmsa": ["job", "report", "--image", "example.com/report:ltsc2025", "--windows-build", "ltsc2025",
                 "--gmsa", "webapp1", "--run-as-user-name", "ContainerUser"],
    "cronjob-taints": ["cronjob", "cleanup", "--image", "example.com/cleanup:2.0", "--schedule", "*/15 * * * *",
                       "--taint", "os=windows:NoSchedule", "--taint", "node.kubernetes.io/os=windows:NoSchedule",
                       "--runtime-class", "windows-2022"],
    "runtimeclass-ltsc2019": ["runtimeclass", "--windows-build", "ltsc2019"],
    "runtimeclass-handler-json": ["runtimeclass", "--windows-build", "10.0.20348",
                                  "--handler", "runhcs-wcow-hypervisor", "--name", "windows-2022-hyperv", "-o", "json"],
}


def _objects(text: str, fmt: str) -> list[dict]:
    if fmt == "json":
        data = json.loads(text)
        return data["items"] if data.get("kind") == "List" else [data]
    return [d for d in yaml.safe_load_all(text) if d is not None]


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_validates_and_lints_clean(case: str) -> None:
    argv = CASES[case]
    fmt = "json" if "json" in argv else "yaml"
    result = run_cli("scaffold", *argv)
    assert result.exit_code == 0, result.stderr
    golden = GOLDEN / "scaffold" / f"{case}.{fmt}"
    if UPDATE:
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8"), f"{golden} differs (KUBECTL_WIN_UPDATE_GOLDEN=1)"
    objects = _objects(result.stdout, fmt)
    assert objects
    for obj in objects:
        _assert_valid(obj)
        _assert_lint_clean(obj)


def _assert_valid(obj: dict, versions: tuple[str, ...] = SCHEMA_VERSIONS) -> None:
    for version in versions:
        kubernetes_validate.validate(obj, version, strict=True)


def _assert_lint_clean(obj: dict) -> None:
    for version in LINT_VERSIONS:
        for assume_windows in (False, True):
            findings = lint_object(obj, k8s_version=version, assume_windows=assume_windows)
            assert findings == [], [(f.id, f.path, f.message) for f in findings]


def test_schema_check_catches_a_misspelt_field() -> None:
    # The validator is strict: a field the API does not know fails, so the checks above can fail too.
    obj = scaffold_workload(WorkloadOptions(kind="deployment", name="a", image="x")).objects[0]
    obj["spec"]["template"]["spec"]["nodeSelecter"] = {"kubernetes.io/os": "windows"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(obj, format_version(NEWEST_KNOWN), strict=True)


BUILDS = (None, "ltsc2019", "10.0.20348")
KIND_MATRIX = ("deployment", "statefulset", "daemonset", "job", "cronjob")


@pytest.mark.parametrize("kind", KIND_MATRIX)
def test_every_option_combination_validates_and_lints_clean(kind: str) -> None:
    combos = itertools.product(BUILDS, (False, True), ((), (80, 8080)), (None, "gmsa-spec"), (False, True))
    count = 0
    for build, hostprocess, ports, gmsa, taints in combos:
        placement = PlacementOptions(
            build=build_name(build) if build else None,
            taints=(Taint("os", "windows", "NoSchedule"), Taint("dedicated", None, "NoExecute")) if taints else (),
        )
        opts = WorkloadOptions(
            kind=kind, name="app", image="example.com/app:ltsc2019", namespace="team", ports=ports,
            placement=placement, gmsa=gmsa, hostprocess=hostprocess,
            run_as_user_name=service_accounts()[1] if hostprocess else "ContainerUser",
            service="NodePort" if ports and kind in ("deployment", "statefulset", "daemonset") else None,
            runtime_class="windows-rc" if build else None,
        )
        for obj in scaffold_workload(opts).objects:
            _assert_valid(obj, SCHEMA_VERSIONS[-1:])  # the golden cases cover the older schemas
            _assert_lint_clean(obj)
            count += 1
    assert count >= 48


def _pod_spec(obj: dict) -> dict:
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["spec"]


@pytest.mark.parametrize("kind", KIND_MATRIX)
def test_placement_resources_and_probes(kind: str) -> None:
    result = run_cli("scaffold", kind, "web", "--image", IIS, "--port", "80", "--port", "81",
                     "--windows-build", "ltsc2022", "--cpu", "250m", "--memory", "700Mi")
    assert result.exit_code == 0, result.stderr
    spec = _pod_spec(_objects(result.stdout, "yaml")[0])
    assert spec["os"] == {"name": "windows"}
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}
    assert spec["tolerations"] == [{"key": "os", "operator": "Equal", "value": "Win2022", "effect": "NoSchedule"}]
    container = spec["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "250m", "memory": "700Mi"},
                                      "limits": {"cpu": "250m", "memory": "700Mi"}}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if kind in ("job", "cronjob"):  # a batch run is done when it exits: no probe restarts or gates it
            assert probe not in container
        else:
            assert container[probe]["tcpSocket"] == {"port": 80}
    assert result.stderr == ""


def test_jobs_are_bounded_as_batch_work_should_be() -> None:
    job = _objects(run_cli("scaffold", "job", "report", "--image", "example.com/r:1", "--port", "80").stdout,
                   "yaml")[0]["spec"]
    assert (job["backoffLimit"], job["activeDeadlineSeconds"], job["ttlSecondsAfterFinished"]) == (4, 3600, 86400)
    assert not {"startupProbe", "readinessProbe", "livenessProbe"} & set(job["template"]["spec"]["containers"][0])


@pytest.mark.parametrize(("schedule", "deadline", "starting"), [
    ("0 * * * *", 3240, 300), ("*/5 * * * *", 270, 150), ("*/1 * * * *", 54, 30), ("30 2 * * *", 77760, 300),
    ("0 9-17 * * 1-5", 77760, 300), ("@hourly", 3240, 300)])
def test_a_cronjob_run_ends_before_the_next_is_due(schedule: str, deadline: int, starting: int) -> None:
    """concurrencyPolicy Forbid skips every run while one hangs: each run's deadline is within its interval, and a
    missed run is not caught up after half an interval."""
    cron = _objects(run_cli("scaffold", "cronjob", "rotate", "--image", "example.com/r:1", "--schedule",
                            schedule).stdout, "yaml")[0]["spec"]
    assert cron["concurrencyPolicy"] == "Forbid" and cron["startingDeadlineSeconds"] == starting
    assert (cron["jobTemplate"]["spec"]["backoffLimit"], cron["jobTemplate"]["spec"]["activeDeadlineSeconds"]) == (
        4, deadline)


def test_limits_are_set_when_no_resources_are_given() -> None:
    result = run_cli("scaffold", "deployment", "web", "--image", "example.com/web:1")
    limits = _pod_spec(_objects(result.stdout, "yaml")[0])["containers"][0]["resources"]["limits"]
    assert set(limits) == {"cpu", "memory"}


def test_no_build_tolerates_every_value_of_the_os_taint() -> None:
    result = run_cli("scaffold", "deployment", "web", "--image", "example.com/web:1")
    spec = _pod_spec(_objects(result.stdout, "yaml")[0])
    assert spec["nodeSelector"] == {"kubernetes.io/os": "windows"}
    assert spec["tolerations"] == [{"key": "os", "operator": "Exists", "effect": "NoSchedule"}]


def test_hostprocess_pod_spec() -> None:
    result = run_cli("scaffold", "daemonset", "agent", "--image", "example.com/agent:1", "-n", "ops",
                     "--hostprocess", "--run-as-user-name", "nt authority\\networkservice")
    assert result.exit_code == 0, result.stderr
    spec = _pod_spec(_objects(result.stdout, "yaml")[0])
    assert spec["hostNetwork"] is True
    assert spec["securityContext"] == {"windowsOptions": {"hostProcess": True,
                                                          "runAsUserName": "NT AUTHORITY\\NetworkService"}}
    for container in spec["containers"]:
        # Every container inherits hostProcess; none may say otherwise.
        assert container.get("securityContext", {}).get("windowsOptions", {}).get("hostProcess", True) is True
    assert "pod-security.kubernetes.io/enforce=privileged" in result.stderr
    assert "kubectl label namespace ops" in result.stderr
    # A node agent: small requests, a memory limit (Windows pages rather than OOM-kills), no CPU cap.
    assert spec["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "256Mi"},
                                                  "limits": {"memory": "256Mi"}}


def test_hostprocess_resources_given_are_requests_and_a_memory_limit() -> None:
    result = run_cli("scaffold", "daemonset", "agent", "--image", "example.com/agent:1", "--hostprocess",
                     "--cpu", "50m", "--memory", "128Mi")
    resources = _pod_spec(_objects(result.stdout, "yaml")[0])["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "128Mi"}}


def test_hostprocess_defaults_to_system_and_ignores_the_image_build() -> None:
    result = run_cli("scaffold", "daemonset", "agent", "--image", "example.com/agent:ltsc2019", "--hostprocess",
                     "--windows-build", "ltsc2022")
    assert result.exit_code == 0
    spec = _pod_spec(_objects(result.stdout, "yaml")[0])
    assert spec["securityContext"]["windowsOptions"]["runAsUserName"] == "NT AUTHORITY\\SYSTEM"
    assert "warning" not in result.stderr  # HostProcess images need not match the node build


def test_warns_when_the_image_build_does_not_match_the_node_build() -> None:
    result = run_cli("scaffold", "deployment", "web", "--image", "mcr.microsoft.com/windows/nanoserver:1809",
                     "--windows-build", "ltsc2022")
    assert result.exit_code == 0
    assert result.stderr.startswith("warning: image mcr.microsoft.com/windows/nanoserver:1809 is built for "
                                    "Windows Server 2019 (10.0.17763)")
    assert "Windows Server 2022 (10.0.20348)" in result.stderr
    matching = run_cli("scaffold", "deployment", "web", "--image", "mcr.microsoft.com/windows/nanoserver:ltsc2022",
                       "--windows-build", "10.0.20348")
    assert matching.stderr == ""


def test_suggests_a_build_when_the_image_names_one() -> None:
    result = run_cli("scaffold", "deployment", "web", "--image", "example.com/web:4.8-windowsservercore-ltsc2019")
    assert result.exit_code == 0
    assert "pass --windows-build ltsc2019" in result.stderr


def test_out_of_support_build_warns() -> None:
    result = run_cli("scaffold", "deployment", "web", "--image", "example.com/web:1", "--windows-build", "20H2")
    assert result.exit_code == 0
    assert "not a supported Kubernetes node OS" in result.stderr
