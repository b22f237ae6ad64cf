"""Pure parts of port-forward: port pairs, hosts, targets, status decoding, relay argv."""

from __future__ import annotations

import base64
import ipaddress
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_win.errors import UsageError
from kubectl_win.kube.exec_stream import ExecStatus
from kubectl_win.portforward.ports import (
    PortPair,
    parse_listen_addresses,
    parse_port_pair,
    validate_port,
    validate_remote_host,
)
from kubectl_win.portforward.probe import is_missing
from kubectl_win.portforward.relays import posix, powershell, windows_native
from kubectl_win.portforward.targets import Target, TargetError, parse_target, validate_container


@pytest.mark.parametrize("text, expected", [
    ("8080", PortPair(8080, 8080)),
    ("8080:80", PortPair(8080, 80)),
    (":80", PortPair(0, 80)),
    ("5000:http", PortPair(5000, "http")),
    (":http-alt", PortPair(0, "http-alt")),
    ("http", PortPair(0, "http", local_from_remote=True)),
    ("65535:1", PortPair(65535, 1)),
    ("5353:53/udp", PortPair(5353, 53, protocol="udp")),
    (":53/UDP", PortPair(0, 53, protocol="udp")),
    ("8080:80/tcp", PortPair(8080, 80)),
    ("dns/udp", PortPair(0, "dns", local_from_remote=True, protocol="udp")),
])
def test_port_pairs(text, expected):
    assert parse_port_pair(text) == expected


@pytest.mark.parametrize("text", ["0", "65536", "8080:0", "-1", "80:80:80", "a:80", "80:", "", "HTTP",
                                  "80:-http", "８０", "99999999999", "80;rm", "toolongportname1",
                                  "53/sctp", "53/", "53/udp/udp", "/udp"])
def test_bad_port_pairs_are_one_line_usage_errors(text):
    with pytest.raises(UsageError) as info:
        parse_port_pair(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("[::1]", "::1"), ("0:0::1", "::1"),
    ("10.1.2.3", "10.1.2.3"), ("Redis.Default.svc.cluster.local", "redis.default.svc.cluster.local"),
    ("localhost", "localhost"), ("db-1", "db-1"), ("fe80::1%eth0", "fe80::1%eth0"),
])
def test_remote_hosts(text, expected):
    assert validate_remote_host(text) == expected


@pytest.mark.parametrize("text", ["", "a;b", "$(id)", "a b", "-h", "a..b", "-a.b", "a_b", "1.2.3.4.5",
                                  "x" * 64, "a'b", 'a"b', "a`b", "a\nb", "%TEMP%", "256.1.1.1", "ä.com", "[::1",
                                  "fe80::1%$(id)", "fe80::1%a b", "fe80::1%'", "fe80::1%"])
def test_bad_remote_hosts(text):
    with pytest.raises(UsageError):
        validate_remote_host(text)


# `$` matches before a trailing newline: these once passed the checks (the fuzz test found the port name).
@pytest.mark.parametrize("text", ["8080:a\n", ":web\n", "web\n"])
def test_a_port_name_with_a_trailing_newline_is_refused(text):
    with pytest.raises(UsageError):
        parse_port_pair(text)


@pytest.mark.parametrize("text", ["example.com\n", "fe80::1%eth0\n"])
def test_a_remote_host_with_a_trailing_newline_is_refused(text):
    with pytest.raises(UsageError):
        validate_remote_host(text)


def test_listen_addresses():
    assert parse_listen_addresses(None) == ["127.0.0.1", "::1"]  # kubectl's default, localhost
    assert parse_listen_addresses(["localhost"]) == ["127.0.0.1", "::1"]
    assert parse_listen_addresses(["127.0.0.1,::1", "0.0.0.0"]) == ["127.0.0.1", "::1", "0.0.0.0"]
    with pytest.raises(UsageError, match="invalid listen address 'example.com'"):
        parse_listen_addresses(["example.com"])
    with pytest.raises(UsageError, match="invalid --address 'example.com'"):
        parse_listen_addresses(["example.com"], "--address")


@pytest.mark.parametrize("text, expected", [
    ("web", Target("pods", "web")), ("pod/web", Target("pods", "web")), ("po/web-1", Target("pods", "web-1")),
    ("deploy/api", Target("deployments", "api")), ("deployment/api", Target("deployments", "api")),
    ("sts/db", Target("statefulsets", "db")), ("rs/x.y", Target("replicasets", "x.y")),
    ("svc/sql", Target("services", "sql")), ("service/sql", Target("services", "sql")),
])
def test_targets(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text", ["job/x", "ds/x", "pod/", "pod/Web", "pod/a b", "pod/a/b", "pod/-a", "/x"])
def test_bad_targets(text):
    with pytest.raises(UsageError):
        parse_target(text)


def test_container_names():
    assert validate_container(None) is None
    assert validate_container("iis") == "iis"
    with pytest.raises(UsageError):
        validate_container("IIS;x")
    assert issubclass(TargetError, UsageError)


def test_status_channel_decoding():
    assert ExecStatus.parse(b'{"metadata":{},"status":"Success"}').success
    failure = ExecStatus.parse(json.dumps({
        "metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
        "message": "command terminated with non-zero exit code: exit status 4",
        "details": {"causes": [{"reason": "ExitCode", "message": "4"}]}}).encode())
    assert (failure.success, failure.exit_code, failure.reason) == (False, 4, "NonZeroExitCode")
    internal = ExecStatus.parse(json.dumps({
        "status": "Failure", "reason": "InternalError", "code": 500,
        "message": "failed to exec in container: ... The system cannot find the file specified."}).encode())
    assert internal.exit_code is None and is_missing(internal)
    assert not is_missing(failure)
    plain = ExecStatus.parse(b"some v1 text error")
    assert not plain.success and plain.message == "some v1 text error"


# --- relay command lines never carry unvalidated text ----------------------------------------------
_ALLOWED_HOST = re.compile(r"^[a-zA-Z0-9.:%-]{1,253}$")
_ALL_RELAYS = [posix.SOCAT, posix.PYTHON, posix.NC, posix.BASH, powershell.POWERSHELL, powershell.PWSH,
               windows_native.native_relay("0123abcd")]


def _fixed_parts(relay) -> set[str]:
    return {part for part in relay.argv_template if "{host}" not in part and "{port}" not in part}


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(host=st.one_of(st.text(max_size=80), st.ip_addresses().map(str),
                      st.ip_addresses(v=6).map(str).flatmap(lambda a: st.text(max_size=8).map(lambda z: f"{a}%{z}")),
                      st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True)),
       port=st.one_of(st.text(max_size=8), st.integers(-5, 70000).map(str)))
def test_fuzzed_host_and_port_reach_relays_only_when_valid(host, port):
    try:
        clean_host = validate_remote_host(host)
        clean_port = validate_port(port)
    except UsageError:
        return
    assert _ALLOWED_HOST.match(clean_host), clean_host
    assert isinstance(clean_port, int) and 1 <= clean_port <= 65535
    for relay in _ALL_RELAYS:
        argv = relay.command(clean_host, clean_port)
        if relay in (powershell.POWERSHELL, powershell.PWSH):
            script = base64.b64decode(argv[-1]).decode("utf-16-le")
            assert script == powershell.relay_script(clean_host, clean_port)
            assert f"Connect('{clean_host}', {clean_port})" in script
            assert script.replace(clean_host, "H").replace(str(clean_port), "P").count("'H'") == 1
            assert argv[:-1] == [relay.argv_template[0], "-NoLogo", "-NoProfile", "-NonInteractive",
                                 "-InputFormat", "None", "-EncodedCommand"]
            continue
        variable = [part for part in argv if part not in _fixed_parts(relay)]
        # Everything that is not template text is exactly the clean host or port (socat: inside TCP:...).
        for part in variable:
            if relay is posix.SOCAT:
                shown = f"[{clean_host}]" if ":" in clean_host else clean_host
                assert part == f"TCP:{shown}:{clean_port}"
            else:
                assert part in (clean_host, str(clean_port))


def test_powershell_relay_refuses_unvalidated_text():
    with pytest.raises(ValueError):
        powershell.relay_script("a'; Remove-Item C:\\ -Recurse; '", 80)
    with pytest.raises(ValueError):
        powershell.relay_script("127.0.0.1", 0)


def test_powershell_relay_is_launched_without_reading_the_script_from_stdin():
    argv = powershell.POWERSHELL.command("::1", 1433)
    assert "-Command" not in argv and "-File" not in argv
    script = base64.b64decode(argv[-1]).decode("utf-16-le")
    assert "OpenStandardInput()" in script and "Shutdown([System.Net.Sockets.SocketShutdown]::Send)" in script
    assert "Connect('::1', 1433)" in script
    probe = base64.b64decode(powershell.POWERSHELL.probe_command()[-1]).decode("utf-16-le")
    assert "LanguageMode" in probe


def test_native_relay_paths_and_upload_archive():
    import io
    import tarfile

    session = "0123abcd"
    assert windows_native.upload_command() == ["tar.exe", "-xf", "-", "-C", "C:\\Windows\\Temp"]
    assert windows_native.remove_command(session) == [
        "cmd.exe", "/c", "rmdir", "/s", "/q", "C:\\Windows\\Temp\\kubectl-win-0123abcd"]
    with pytest.raises(ValueError):
        windows_native.upload_directory("..\\evil")
    archive = tarfile.open(fileobj=io.BytesIO(windows_native.upload_archive(session)))
    member = archive.getmember("kubectl-win-0123abcd/kwin-relay.exe")
    assert archive.extractfile(member).read() == windows_native.relay_bytes()
    assert windows_native.upload_archive(session) == windows_native.upload_archive(session)


def test_relays_reject_ports_outside_the_range():
    for relay in _ALL_RELAYS:
        with pytest.raises(ValueError):
            relay.command("127.0.0.1", 0)
        with pytest.raises(ValueError):
            relay.command("127.0.0.1", "80; id")  # type: ignore[arg-type]


def test_relay_failure_messages():
    assert posix.SOCAT.describe_failure(1, b"2026/01/01 E connect(5, AF=2 127.0.0.1:1, 16): Connection refused\n") \
        == "connection refused inside the pod"
    native = windows_native.native_relay("0123abcd")
    assert native.describe_failure(4, b"") == "connection refused inside the pod"
    assert native.describe_failure(3, b"") == "the host name did not resolve inside the pod"
    assert posix.BASH.describe_failure(137, b"") == "bash relay exited with code 137"


def test_ip_canonical_forms_are_what_relays_get():
    assert validate_remote_host("0000:0000::0001") == str(ipaddress.ip_address("::1"))


@settings(max_examples=200, deadline=None)
@given(host=st.text(max_size=40), port=st.text(max_size=12))
def test_fuzzed_command_line_flags_never_reach_a_relay_unvalidated(host, port):
    """Through the real argument parser and option builder, as `kubectl win port-forward` runs them."""
    from kubectl_win.cli import parse_args

    try:
        command, flags = parse_args(["port-forward", "pod/web", port, "--remote-host", host])
        command.validate(flags)
        options = flags.forward
    except (UsageError, SystemExit):
        return
    assert _ALLOWED_HOST.match(options.remote_host)
    assert options.remote_host == validate_remote_host(options.remote_host)  # canonical, re-rendered
    for pair in options.pairs:
        # Port names never reach a relay: they are resolved to numbers against the pod or Service.
        assert (isinstance(pair.remote, int) and 1 <= pair.remote <= 65535) or re.fullmatch(r"[a-z0-9-]{1,15}",
                                                                                            pair.remote)
