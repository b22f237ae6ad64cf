"""The registry client against the reference registry (distribution, built from Go modules) with TLS,
htpasswd and token auth, and against a stand-in for slow, throttling, broken and dead registries."""

from __future__ import annotations

import base64
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from kubectl_win.registry.client import RegistryClient, RegistryOptions, parse_mirrors
from kubectl_win.registry.credentials import CredentialStore
from kubectl_win.registry.reference import parse_reference
from tests.registry.faults import FaultRegistry, dead_host
from tests.registry.fixtures import WINDOWS_BUILDS
from tests.registry.tokens import USERS


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no proxies, no CA bundle, an empty DOCKER_CONFIG unless given."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "DOCKER_CONFIG": str(tmp_path / "docker")}
    env.update(extra)
    return env


def client_for(registry, tmp_path: Path, config: dict | None = None, env: dict | None = None,  # noqa: ANN001
               **options) -> RegistryClient:  # noqa: ANN003
    environ = env or env_for(tmp_path)
    if config is not None:
        Path(environ["DOCKER_CONFIG"]).mkdir(parents=True, exist_ok=True)
        (Path(environ["DOCKER_CONFIG"]) / "config.json").write_text(json.dumps(config))
    cas = []
    if registry is not None and registry.ca_cert:
        cas.append(str(registry.ca_cert))
    options.setdefault("ca_files", tuple(cas))
    options.setdefault("budget", 60.0)
    return RegistryClient(RegistryOptions(**options), CredentialStore.from_environment(environ), environ)


def auth_entry(user: str) -> dict:
    return {"auth": base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()}


def test_anonymous_pull_of_a_public_index_drops_attestations(token_registry, tmp_path) -> None:
    with client_for(token_registry, tmp_path) as client:
        result = client.resolve(parse_reference(f"{token_registry.host}/public/multi:oci"))
    assert result.error is None
    assert result.digest == token_registry.seeded["public"]["multi-oci"]
    assert [(p.os, p.architecture, p.os_version) for p in result.platforms] == [
        ("windows", "amd64", v) for v in WINDOWS_BUILDS] + [("linux", "amd64", ""), ("linux", "arm64", "")]
    assert all(p.digest.startswith("sha256:") for p in result.platforms)


def test_one_token_per_scope_across_repositories(token_registry, tmp_path) -> None:
    token_registry.tokens.requests.clear()
    refs = [f"{token_registry.host}/public/{name}" for name in
            ("multi:oci", "multi:docker", "single:ltsc2019", "single:ltsc2025", "linux:latest")]
    with client_for(token_registry, tmp_path, per_registry=4) as client:
        results = client.resolve_many([parse_reference(r) for r in refs])
    assert [r.error for r in results] == [None] * 5
    assert dict(token_registry.tokens.requests) == {
        "repository:public/multi:pull": 1, "repository:public/single:pull": 1, "repository:public/linux:pull": 1}


def test_a_single_manifest_is_read_from_its_config_blob(token_registry, tmp_path) -> None:
    with client_for(token_registry, tmp_path) as client:
        docker = client.resolve(parse_reference(f"{token_registry.host}/public/single:ltsc2019"))
        oci = client.resolve(parse_reference(f"{token_registry.host}/public/single:ltsc2025"))
    assert [(p.os, p.os_version, p.digest) for p in docker.platforms] == [
        ("windows", WINDOWS_BUILDS[0], token_registry.seeded["public"]["ltsc2019-only"])]
    assert oci.platforms[0].os_version == WINDOWS_BUILDS[2]


def test_private_repositories_need_credentials_from_docker_config(token_registry, tmp_path) -> None:
    ref = parse_reference(f"{token_registry.host}/private/multi:docker")
    with client_for(token_registry, tmp_path) as client:
        anonymous = client.resolve(ref)
    assert anonymous.error.startswith("unauthorized")
    config = {"auths": {f"https://{token_registry.host}": auth_entry("reader")}}
    with client_for(token_registry, tmp_path / "a", config=config) as client:
        reader = client.resolve(ref)
    assert reader.error is None and len(reader.platforms) == 3
    wrong = {"auths": {token_registry.host: {"auth": base64.b64encode(b"reader:wrong").decode()}}}
    with client_for(token_registry, tmp_path / "b", config=wrong) as client:
        refused = client.resolve(ref)
    assert refused.error.startswith("unauthorized: the token service") and "wrong" not in refused.error


def _helper(tmp_path: Path, name: str, answers: dict[str, tuple[str, str]]) -> Path:
    """A docker-credential-NAME program speaking the helper protocol (host on stdin, JSON out)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / f"docker-credential-{name}"
    program.write_text(f"#!{sys.executable}\nimport json, sys\nanswers = {answers!r}\n"
                       "assert sys.argv[1] == 'get'\nhost = sys.stdin.read().strip()\n"
                       "if host not in answers:\n    print('credentials not found in native keychain'); sys.exit(1)\n"
                       "user, secret = answers[host]\nprint(json.dumps({'ServerURL': host, 'Username': user, "
                       "'Secret': secret}))\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.mark.parametrize("style", ["credsStore", "credHelpers"])
def test_credential_helpers_are_asked_with_the_host_on_stdin(token_registry, tmp_path, style) -> None:
    bin_dir = _helper(tmp_path, "kwtest", {token_registry.host: ("reader", USERS["reader"])})
    config = {"credsStore": "kwtest"} if style == "credsStore" else {"credHelpers": {token_registry.host: "kwtest"}}
    env = env_for(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    with client_for(token_registry, tmp_path, config=config, env=env) as client:
        result = client.resolve(parse_reference(f"{token_registry.host}/private/single:ltsc2019"))
    assert result.error is None
    assert token_registry.tokens.users["reader"] >= 1


def test_a_missing_helper_is_a_reason_not_a_crash(token_registry, tmp_path) -> None:
    with client_for(token_registry, tmp_path, config={"credsStore": "nonexistent-kw"}) as client:
        result = client.resolve(parse_reference(f"{token_registry.host}/private/single:ltsc2019"))
    assert result.error == "credential helper docker-credential-nonexistent-kw is not on PATH"


def test_basic_auth_with_htpasswd(htpasswd_registry, tmp_path) -> None:
    ref = parse_reference(f"{htpasswd_registry.host}/team/multi:oci")
    with client_for(htpasswd_registry, tmp_path) as client:
        assert client.resolve(ref).error.startswith("unauthorized")
    config = {"auths": {htpasswd_registry.host: {"username": "reader", "password": USERS["reader"]}}}
    with client_for(htpasswd_registry, tmp_path / "c", config=config) as client:
        result = client.resolve(ref)
        again = client.resolve(parse_reference(f"{htpasswd_registry.host}/team/single:ltsc2025"))
    assert result.error is None and len(result.platforms) == 5
    assert again.error is None


def test_tls_is_verified_against_ssl_cert_file_and_registry_ca(token_registry, tmp_path) -> None:
    ref = parse_reference(f"{token_registry.host}/public/linux")
    with client_for(token_registry, tmp_path, ca_files=()) as client:
        untrusted = client.resolve(ref)
    assert untrusted.error.startswith(f"TLS: certificate of {token_registry.host} not trusted")
    assert "--registry-ca" in untrusted.error
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(token_registry.ca_cert.read_bytes())
    with client_for(token_registry, tmp_path, env=env_for(tmp_path, SSL_CERT_FILE=str(bundle)), ca_files=()) as c:
        assert c.resolve(ref).error is None


def test_plain_http_only_for_insecure_registries(plain_registry, tmp_path) -> None:
    ref = parse_reference(f"{plain_registry.host}/lib/multi:docker")
    with client_for(plain_registry, tmp_path) as client:
        refused = client.resolve(ref)
    assert refused.error.startswith(f"TLS handshake with {plain_registry.host} failed")
    with client_for(plain_registry, tmp_path, insecure=(plain_registry.host,)) as client:
        result = client.resolve(ref)
    assert result.error is None and result.digest == plain_registry.seeded["lib"]["multi-docker"]


def test_one_fetch_per_digest_per_run(plain_registry, tmp_path) -> None:
    digest = plain_registry.seeded["lib"]["multi-oci"]
    refs = [f"{plain_registry.host}/lib/multi:oci", f"{plain_registry.host}/lib/multi:oci",
            f"{plain_registry.host}/lib/single:ltsc2019", f"{plain_registry.host}/lib/single:ltsc2019"]
    with client_for(plain_registry, tmp_path, insecure=(plain_registry.host,)) as client:
        results = client.resolve_many([parse_reference(r) for r in refs])
        assert [r.digest for r in results[:2]] == [digest] * 2
        # multi:oci once, single once and its config blob once, however many ask at the same time.
        assert client.requests == 3
        # A digest already seen (here: the tag's) is not fetched again.
        assert client.resolve(parse_reference(f"{plain_registry.host}/lib/multi@{digest}")).digest == digest
        assert client.requests == 3


def test_published_indexes_resolve_as_published(plain_registry, tmp_path) -> None:
    with client_for(plain_registry, tmp_path, insecure=(plain_registry.host,)) as client:
        hello = client.resolve(parse_reference(f"{plain_registry.host}/lib/published:hello-world-latest"))
    assert len(hello.platforms) == 11
    assert [p.os_version for p in hello.platforms if p.os == "windows"] == ["10.0.26100.33296", "10.0.20348.5499"]


def test_not_found_says_what(plain_registry, tmp_path) -> None:
    with client_for(plain_registry, tmp_path, insecure=(plain_registry.host,)) as client:
        tag = client.resolve(parse_reference(f"{plain_registry.host}/lib/multi:nope"))
        repo = client.resolve(parse_reference(f"{plain_registry.host}/lib/nothing:1"))
    assert tag.error == f"not found: manifest lib/multi:nope on {plain_registry.host}"
    assert repo.error.startswith("not found:")


def test_a_mirror_answers_for_docker_hub(plain_registry, tmp_path) -> None:
    mirrors = parse_mirrors([f"docker.io={plain_registry.host}"])
    with client_for(plain_registry, tmp_path, insecure=(plain_registry.host,), mirrors=mirrors) as client:
        result = client.resolve(parse_reference("lib/multi:docker"))
    assert result.error is None and result.source == plain_registry.host


def test_proxies_from_the_environment_and_no_proxy(plain_registry, tmp_path) -> None:
    """Through HTTP_PROXY for a non-loopback name (kubectl never proxies loopback), directly with NO_PROXY."""
    from tests.registry.faults import ForwardProxy

    port = plain_registry.port
    name = f"registry.kubectl-win.test:{port}"
    ref = parse_reference(f"{name}/lib/linux")
    proxy = ForwardProxy(f"127.0.0.1:{port}")
    try:
        with client_for(plain_registry, tmp_path, env=env_for(tmp_path, HTTP_PROXY=proxy.url),
                        insecure=(name,)) as client:
            via_proxy = client.resolve(ref)
        assert via_proxy.error is None and via_proxy.digest == plain_registry.seeded["lib"]["linux-only"]
        assert proxy.hits == [f"http://{name}/v2/lib/linux/manifests/latest"]
        dead = f"http://{dead_host()}"
        with client_for(plain_registry, tmp_path, env=env_for(tmp_path, HTTP_PROXY=dead), insecure=(name,)) as c:
            refused = c.resolve(ref)
        assert refused.error == f"connection refused by {name} (through proxy {dead})"
        with client_for(plain_registry, tmp_path, env=env_for(tmp_path, HTTP_PROXY=dead, NO_PROXY="kubectl-win.test"),
                        insecure=(name,)) as client:
            direct = client.resolve(ref)
        assert direct.error == "cannot resolve registry.kubectl-win.test"  # tried directly, not through the proxy
    finally:
        proxy.close()


def test_retry_after_is_honoured_and_a_long_one_gives_up(tmp_path) -> None:
    slept: list[float] = []
    with FaultRegistry(throttle_count=2) as faults:
        client = client_for(None, tmp_path, insecure=(faults.host,))
        client._sleep = slept.append
        throttled = client.resolve(parse_reference(f"{faults.host}/throttled/app:1"))
        always = client.resolve(parse_reference(f"{faults.host}/always429/app:1"))
        broken = client.resolve(parse_reference(f"{faults.host}/broken/app:1"))
        client.close()
    assert throttled.error is None and slept[:2] == [1.0, 1.0]
    assert always.error == "rate limited (429); Retry-After 3600s is beyond the time budget"
    assert broken.error.startswith(f"{faults.host} answered 500; gave up after 3 retries")


def test_a_basic_realm_is_a_label_not_a_url(tmp_path) -> None:
    with FaultRegistry() as faults:
        config = {"auths": {faults.host: {"auth": base64.b64encode(b"u:p").decode()}}}
        with client_for(None, tmp_path, config=config, insecure=(faults.host,)) as client:
            result = client.resolve(parse_reference(f"{faults.host}/basic/app:1"))
    assert result.error is None and len(result.platforms) == 8


def test_slow_and_dead_registries_end_within_the_budget(tmp_path) -> None:
    import time

    with FaultRegistry(slow_seconds=30) as faults:
        dead = dead_host()
        started = time.monotonic()
        with client_for(None, tmp_path, insecure=(faults.host, dead), budget=1.5, request_timeout=1.0) as client:
            slow, gone, fine = client.resolve_many([parse_reference(f"{faults.host}/slow/app:1"),
                                                    parse_reference(f"{dead}/app:1"),
                                                    parse_reference(f"{faults.host}/ok/app:1")])
        elapsed = time.monotonic() - started
    assert slow.error.startswith("timed out after 1s waiting for")
    assert gone.error == f"connection refused by {dead}"
    assert fine.error is None
    assert elapsed < 10


def test_credentials_are_never_shown(tmp_path) -> None:
    store = CredentialStore({"auths": {"r.example": {"auth": base64.b64encode(b"me:hunter2").decode()}}})
    credential = store.lookup("r.example")
    assert credential.secret == "hunter2"
    assert "hunter2" not in repr(credential) and "hunter2" not in str(credential)


@pytest.mark.parametrize(("value", "message"), [("docker.io", "REGISTRY=MIRROR"), ("=m:5000", "REGISTRY=MIRROR")])
def test_bad_mirror_flags(value, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_mirrors([value])
