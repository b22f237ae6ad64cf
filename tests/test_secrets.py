"""No credential is printed: token files are read as client-go reads them, and every error line,
internal errors and --debug tracebacks included, goes through one redaction pass."""

from __future__ import annotations

import base64

import pytest
import yaml

from kubectl_win.redact import redact
from tests.support.cli import run_cli


def _kubeconfig(tmp_path, apiserver, user: dict, server: str | None = None) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": server or apiserver.url,
                                               "certificate-authority": str(apiserver.server.pki.ca_cert)}}],
        "users": [{"name": "me", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "me"}}]}))
    return str(path)


@pytest.mark.parametrize("ending", ["\n", "\r\n", " \t\r\n\n"], ids=["lf", "crlf", "mixed"])
def test_a_token_file_ending_in_whitespace_authenticates_as_with_kubectl(apiserver, tmp_path, ending):
    token_file = tmp_path / "token"
    token_file.write_bytes((apiserver.token + ending).encode())
    kubeconfig = _kubeconfig(tmp_path, apiserver, {"tokenFile": str(token_file)})
    result = run_cli("doctor", "nodes", "--kubeconfig", kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert apiserver.token not in result.stderr + result.stdout


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_an_internal_error_quoting_the_token_prints_no_credential(apiserver, tmp_path, debug):
    token = "s3cr3t-first-line\ns3cr3t-second-line"  # a header value http.client refuses, quoting it
    kubeconfig = _kubeconfig(tmp_path, apiserver, {"token": token})
    result = run_cli("doctor", "nodes", "--kubeconfig", kubeconfig, *(["--debug"] if debug else []))
    assert result.exit_code == 4
    assert "internal error" in result.stderr
    assert "s3cr3t" not in result.stderr and "<redacted>" in result.stderr
    if debug:
        assert "Traceback (most recent call last)" in result.stderr


def test_debug_does_not_change_the_exit_code_of_an_unreachable_cluster(apiserver, tmp_path):
    kubeconfig = _kubeconfig(tmp_path, apiserver, {"token": "whatever-token"}, server="https://127.0.0.1:1")
    plain = run_cli("doctor", "--kubeconfig", kubeconfig, "--request-timeout", "5")
    debug = run_cli("doctor", "--kubeconfig", kubeconfig, "--request-timeout", "5", "--debug")
    assert plain.exit_code == debug.exit_code == 3
    assert plain.stderr.count("\n") == 1 and "Traceback" in debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.strip()


BASIC = base64.b64encode(b"admin:hunter2hunter2").decode()


@pytest.mark.parametrize("text,secret", [
    ("Invalid header value b'Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig\\n'", "eyJhbGciOiJSUzI1NiJ9"),
    (f"headers={{'Authorization': 'Basic {BASIC}'}}", BASIC),
    ("Authorization: Bearer abcdef123456", "abcdef123456"),
    ("proxy https://alice:pa55word-x@proxy.corp:3128 refused", "pa55word-x"),
    ("user: {token: sha256~abcdefghijkl, tokenFile: /t}", "sha256~abcdefghijkl"),
    ('{"auths": {"r.io": {"auth": "dXNlcjpwYXNz", "password": "regpass-123"}}}', "regpass-123"),
    ('{"auths": {"r.io": {"auth": "dXNlcjpwYXNz"}}}', "dXNlcjpwYXNz"),
    ("client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk=", "LS0tLS1CRUdJTiBSU0"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq (cut)", "MIIEvQIBADANBgkq"),
    ("ExecCredential status: {'token': 'k8s-aws-v1.aHR0cHM6'}", "k8s-aws-v1.aHR0cHM6"),
    # The shapes the bundle check caught before the two redactors became one table.
    ("kubeadm join 10.0.0.1:6443 --discovery-token-ca-cert-hash x abcdef.0123456789abcdef", "0123456789abcdef"),
    ('{"aadClientSecret": "azure-s3cret-value"}', "azure-s3cret-value"),
    ('plugins.cri.registry.token = "ghp-registry-tok"', "ghp-registry-tok"),
], ids=["header-repr", "basic", "authorization", "url-userinfo", "kubeconfig-token", "registry-password",
        "docker-auth", "client-key-data", "pem", "pem-cut", "exec-credential", "bootstrap-token",
        "cloud-config-secret", "dotted-config-key"])
def test_redaction_removes_every_credential_shape(text, secret):
    assert secret not in redact(text)
    assert "redacted" in redact(text)


@pytest.mark.parametrize("kind,text,secret,name", [
    ("log", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk (cut)", "MHcCAQEEIBk", "private key"),
    ("log", "join with abcdef.0123456789abcdef", "0123456789abcdef", "bootstrap token"),
    ("log", "GET /v2/ Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "authorization header"),
    ("log", "retrying with bearer eyJhbGciOiJSUzI1NiJ9.x", "eyJhbGciOiJSUzI1NiJ9", "bearer token"),
    ("log", "pulling https://robot:pa55-word@registry.corp/v2/", "pa55-word", "url credentials"),
    ("config", 'password = "hunter2"', "hunter2", "credential value"),
    ("config", "identitytoken: tok-123456", "tok-123456", "credential value"),
    ("json", '{"msg": "Authorization: Bearer abcdef123456"}', "abcdef123456", "authorization header"),
])
def test_bundle_files_are_redacted_by_the_same_table(kind, text, secret, name):
    from kubectl_win.redact import redact_counted

    redacted, counts = redact_counted(text, kind)
    assert secret not in redacted and "<redacted>" in redacted
    assert name in counts


def test_log_text_keeps_credential_like_words():
    from kubectl_win.redact import redact_counted

    text = "token: expired, retrying; password reset requested"
    assert redact_counted(text, "log") == (text, {})


def test_redaction_keeps_ordinary_messages():
    for text in ('pods "web" not found in namespace "shop"', "tokenFile /var/run/token: no such file",
                 "certificate-authority: /etc/ca.crt", "secret \"pull\" is forbidden"):
        assert redact(text) == text
