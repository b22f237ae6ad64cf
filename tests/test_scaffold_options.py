"""Bad values for scaffold: a one-line error and exit 2, nothing on stdout. Good values pass through."""

from __future__ import annotations

import pytest

from kubectl_win.builds import build_of_image, resolve_build
from kubectl_win.errors import UsageError
from kubectl_win.scaffold import options as valid
from tests.support.cli import run_cli

IMAGE = ["--image", "example.com/app:1.0"]

BAD = {
    "uppercase name": (["deployment", "Web", *IMAGE], "invalid name 'Web'"),
    "name with underscore": (["deployment", "my_app", *IMAGE], "DNS-1123 label"),
    "name too long": (["deployment", "a" * 64, *IMAGE], "at most 63 characters"),
    "cronjob name too long": (["cronjob", "c" * 53, *IMAGE], "at most 52 characters"),
    "image with uppercase repo": (["deployment", "web", "--image", "Example.com/App"], "invalid image reference"),
    "image with spaces": (["deployment", "web", "--image", "nginx latest"], "invalid image reference"),
    "image empty tag": (["deployment", "web", "--image", "nginx:"], "invalid image reference"),
    "short digest": (["deployment", "web", "--image", "nginx@sha256:abc"], "invalid image reference"),
    "cpu word": (["deployment", "web", *IMAGE, "--cpu", "lots"], "invalid cpu quantity 'lots'"),
    "cpu zero": (["deployment", "web", *IMAGE, "--cpu", "0"], "greater than zero"),
    "memory millibytes": (["deployment", "web", *IMAGE, "--memory", "512m"], "use Mi"),
    "memory bad suffix": (["deployment", "web", *IMAGE, "--memory", "1GB"], "invalid memory quantity"),
    "unknown build": (["deployment", "web", *IMAGE, "--windows-build", "ltsc2016"], "unknown Windows build"),
    "build not 10.0": (["deployment", "web", *IMAGE, "--windows-build", "6.3.9600"], "unknown Windows build"),
    "taint without effect": (["deployment", "web", *IMAGE, "--taint", "os=windows"], "invalid taint"),
    "taint bad effect": (["deployment", "web", *IMAGE, "--taint", "os=windows:NoScheduleX"], "invalid taint"),
    "taint bad key": (["deployment", "web", *IMAGE, "--taint", "Ex_ample/os=windows:NoSchedule"],
                      "qualified name"),
    "taint bad value": (["deployment", "web", *IMAGE, "--taint", "os=win dows:NoSchedule"], "label value"),
    "port zero": (["deployment", "web", *IMAGE, "--port", "0"], "invalid port 0"),
    "port too big": (["deployment", "web", *IMAGE, "--port", "70000"], "invalid port 70000"),
    "port twice": (["deployment", "web", *IMAGE, "--port", "80", "--port", "80"], "once"),
    "port not a number": (["deployment", "web", *IMAGE, "--port", "http"], "invalid int value"),
    "negative replicas": (["deployment", "web", *IMAGE, "--replicas", "-1"], "invalid replicas"),
    "service without port": (["deployment", "web", *IMAGE, "--service", "ClusterIP"], "needs at least one --port"),
    "service type": (["deployment", "web", *IMAGE, "--port", "80", "--service", "ExternalName"], "invalid choice"),
    "service on a job": (["job", "web", *IMAGE, "--port", "80", "--service", "ClusterIP"], "unknown flag: --service"),
    "service name": (["deployment", "1web", *IMAGE, "--port", "80", "--service", "ClusterIP"], "DNS-1035"),
    "namespace": (["deployment", "web", *IMAGE, "-n", "Team.A"], "invalid namespace"),
    "gmsa name": (["deployment", "web", *IMAGE, "--gmsa", "Web_App"], "invalid gMSA credential spec name"),
    "runtime class": (["deployment", "web", *IMAGE, "--runtime-class", "Windows"], "invalid runtime class"),
    "user with two backslashes": (["deployment", "web", *IMAGE, "--run-as-user-name", "a\\b\\c"],
                                  "'a\\b\\c': it may contain at most one backslash"),
    "user with bad char": (["deployment", "web", *IMAGE, "--run-as-user-name", "user@corp"],
                           "the user name contains @"),
    "hostprocess user": (["daemonset", "web", *IMAGE, "--hostprocess", "--run-as-user-name", "CORP\\svc"],
                         "for a HostProcess pod"),
    "hostprocess container user": (["daemonset", "web", *IMAGE, "--hostprocess", "--run-as-user-name",
                                    "ContainerUser"], "ContainerUser is an account of Windows container images"),
    "hostprocess container admin": (["daemonset", "web", *IMAGE, "--hostprocess", "--run-as-user-name",
                                     "containeradministrator"], "does not exist on the host"),
    "schedule": (["cronjob", "web", *IMAGE, "--schedule", "hourly"], "invalid schedule"),
    "force without out": (["deployment", "web", *IMAGE, "--force"], "--force only applies with --out"),
    "missing image": (["deployment", "web"], "--image"),
    "missing kind": ([], "missing KIND"),
    "unknown kind": (["pod", "web", *IMAGE], "unknown command 'pod'"),
    "runtimeclass handler": (["runtimeclass", "--handler", "Bad_Handler"], "invalid handler"),
    "patch both modes": (["patch", "-f", "x.yaml", "--in-place", "--dry-run"], "not allowed with"),
    "patch stdin in place": (["patch", "-f", "-", "--in-place"], "cannot rewrite standard input"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_values_exit_2_with_one_line(case: str) -> None:
    argv, expected = BAD[case]
    result = run_cli("scaffold", *argv)
    assert result.exit_code == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("image", [
    "nginx",
    "nginx:1.27",
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
    "localhost:5000/team/app_v2:1.0",
    "registry.example.com:443/a/b/c@sha256:" + "a" * 64,
    "example.com/app:1.0@sha256:" + "0" * 64,
])
def test_image_references_accepted(image: str) -> None:
    assert valid.image_reference(image) == image


@pytest.mark.parametrize("value", ["1", "0.5", "250m", "1Gi", "512Mi", "1e3", "2k", ".5"])
def test_quantities_accepted(value: str) -> None:
    assert valid.quantity(value, "cpu") == value


@pytest.mark.parametrize(("text", "expected"), [
    ("os=Win1809:NoSchedule", ("os", "Win1809", "NoSchedule")),
    ("node.kubernetes.io/os=windows:NoExecute", ("node.kubernetes.io/os", "windows", "NoExecute")),
    ("dedicated:PreferNoSchedule", ("dedicated", None, "PreferNoSchedule")),
])
def test_taint_syntax(text: str, expected: tuple) -> None:
    taint = valid.taint(text)
    assert (taint.key, taint.value, taint.effect) == expected
    assert str(taint) == text


def test_tolerations_for_taints() -> None:
    assert valid.taint("os=windows:NoSchedule").toleration() == {
        "key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}
    assert valid.taint("os:NoSchedule").toleration() == {"key": "os", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize(("name", "version"), [
    ("ltsc2019", "10.0.17763"), ("LTSC2022", "10.0.20348"), ("ltsc2025", "10.0.26100"), ("1809", "10.0.17763"),
    ("10.0.20348", "10.0.20348"), ("10.0.99999", "10.0.99999"),
])
def test_build_names(name: str, version: str) -> None:
    assert resolve_build(name).version == version


def test_unknown_builds_carry_no_taint_value() -> None:
    assert resolve_build("10.0.99999").taint_value is None
    assert resolve_build("ltsc2019").taint_value == "Win1809"
    with pytest.raises(UsageError):
        valid.build_name("2019")


@pytest.mark.parametrize(("image", "version"), [
    ("mcr.microsoft.com/windows/servercore:ltsc2019", "10.0.17763"),
    ("mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022", "10.0.20348"),
    ("mcr.microsoft.com/windows/nanoserver:1809", "10.0.17763"),
    ("mcr.microsoft.com/windows/servercore:10.0.17763.5458", "10.0.17763"),
    ("example.com/app:ltsc2025", "10.0.26100"),
    ("example.com/app:20H2", "10.0.19042"),
    ("example.com/app:1.2.3", None),
    ("example.com/app:v1809", None),
    ("example.com/tools:1809-beta", None),  # a bare release number only counts on a Windows image
    ("localhost:5000/app", None),
    ("nginx", None),
])
def test_build_of_image(image: str, version: str | None) -> None:
    build = build_of_image(image)
    assert (build.version if build else None) == version


@pytest.mark.parametrize("user", ["ContainerUser", "ContainerAdministrator", "CORP\\svc-web", "corp.example.com\\web"])
def test_run_as_user_names_accepted(user: str) -> None:
    assert valid.run_as_user_name(user, hostprocess=False) == user


def test_hostprocess_users_are_normalised() -> None:
    assert valid.run_as_user_name("nt authority\\system", hostprocess=True) == "NT AUTHORITY\\SYSTEM"
    # A bare name is a local group on the node (containerd 1.7+).
    assert valid.run_as_user_name("hpc-users", hostprocess=True) == "hpc-users"
