"""What Windows users feed and read, checked on this OS too (the Windows tier runs the same under Wine):
output to pipes in a legacy code page, stdin in UTF-16, token files written by `echo` and PowerShell."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
import yaml

from kubectl_win import console
from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n" \
      "  securityContext: {runAsUser: 1000}\n  containers:\n" \
      "  - {name: app, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}\n"


def test_a_pipe_in_a_legacy_code_page_still_gets_utf8():
    # Windows' pipes default to the ANSI code page; PYTHONIOENCODING gives Linux the same start.
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    result = subprocess.run([sys.executable, "-m", "kubectl_win", "doctor", "--from-dump", str(SAMPLE_DUMP), "-o",
                             "html"], capture_output=True, env=env, timeout=120)
    assert result.returncode == 1, result.stderr
    assert b"internal error" not in result.stderr
    html = result.stdout.decode("utf-8")
    assert any(ord(ch) > 255 for ch in html)


def test_a_console_that_cannot_show_a_character_gets_a_question_mark(monkeypatch):
    class Console(io.TextIOWrapper):
        def isatty(self) -> bool:
            return True

    raw = io.BytesIO()
    stream = Console(raw, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stream)
    console.setup_streams()
    stream.write("\u2716 broken\n")
    stream.flush()
    assert raw.getvalue() == b"? broken\n"


def test_stdin_in_utf16_is_read_like_a_file_not_in_the_streams_code_page(monkeypatch):
    from kubectl_win.manifests.inputs import read_text

    raw = b"\xff\xfe" + POD.replace("\n", "\r\n").encode("utf-16-le")  # PowerShell 5.1 piping a file
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="cp1252"))
    assert read_text("-") == POD.replace("\n", "\r\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("name: caf\u00e9\n".encode()), encoding="cp1252"))
    assert read_text("-") == "name: caf\u00e9\n"


@pytest.mark.parametrize("written_by", ["cmd echo", "powershell"])
def test_a_token_file_written_on_windows_authenticates(apiserver, tmp_path, written_by):
    token = apiserver.token
    if written_by == "powershell":  # `echo $token > token` in Windows PowerShell 5.1: UTF-16 with a BOM
        content = b"\xff\xfe" + f"{token}\r\n".encode("utf-16-le")
    else:  # `echo %TOKEN% > token` in cmd.exe: the space before > and CRLF
        content = f"{token} \r\n".encode()
    (tmp_path / "token").write_bytes(content)
    config = yaml.safe_load(apiserver.kubeconfig.read_text())
    config["users"][0]["user"] = {"tokenFile": "token"}
    kubeconfig = tmp_path / "config"
    kubeconfig.write_bytes(b"\xff\xfe" + yaml.safe_dump(config).replace("\n", "\r\n").encode("utf-16-le"))
    apiserver.seed(SAMPLE_DUMP)
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["findings"]
    assert token not in result.stdout + result.stderr
