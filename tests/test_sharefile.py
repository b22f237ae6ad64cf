"""Files written for sharing (--save-dump, --report): 0600, atomic, never over a file without --force,
refused before the scan when they cannot be written, and never the input itself."""

from __future__ import annotations

import os
import stat

import pytest

from kubectl_win.sharefile import SharedFile, check_target, write_shared
from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP


@pytest.mark.parametrize("flag", ["--save-dump", "--report"])
def test_shared_files_are_private(tmp_path, flag):
    target = tmp_path / "out"
    old = os.umask(0o022)
    try:
        result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), flag, str(target))
    finally:
        os.umask(old)
    assert result.exit_code == 1, result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["out"]


def test_save_dump_never_overwrites_without_force(tmp_path):
    target = tmp_path / "dump.json"
    target.write_text("keep me")
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--save-dump", str(target))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: {target} already exists (use --force to overwrite)\n"
    assert target.read_text() == "keep me"
    assert run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--save-dump", str(target), "--force").exit_code == 1
    assert '"kubectlWin"' in target.read_text()


@pytest.mark.parametrize("spelling", ["dot-slash", "symlink", "hardlink", "dot-dot"])
def test_the_input_is_never_the_output_by_any_spelling(tmp_path, monkeypatch, spelling):
    big = tmp_path / "big.json"
    big.write_bytes(SAMPLE_DUMP.read_bytes())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    out = {"dot-slash": "./big.json", "dot-dot": "sub/../big.json", "symlink": "link.json",
           "hardlink": "hard.json"}[spelling]
    if spelling == "symlink":
        os.symlink(big, tmp_path / "link.json")
    if spelling == "hardlink":
        os.link(big, tmp_path / "hard.json")
    result = run_cli("doctor", "--from-dump", "big.json", "--save-dump", out, "--force")
    assert result.exit_code == 2 and "is the same file as --from-dump big.json" in result.stderr
    assert big.read_bytes() == SAMPLE_DUMP.read_bytes()


def test_a_directory_target_is_refused_before_the_cluster_is_read(apiserver, tmp_path):
    for flag in ("--save-dump", "--report"):
        apiserver.server.requests.clear()
        result = run_cli("doctor", "--kubeconfig", str(apiserver.kubeconfig), flag, str(tmp_path))
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == f"error: {flag} {tmp_path}: is a directory (name a file in it)\n"
        assert list(apiserver.server.requests) == []


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not yours")
    link = tmp_path / "report.html"
    os.symlink(elsewhere, link)
    assert run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(link)).exit_code == 2
    assert run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(link), "--force").exit_code == 1
    assert elsewhere.read_text() == "not yours"
    assert not link.is_symlink() and link.read_text().startswith("<!DOCTYPE html>")


def test_a_file_that_appears_during_the_run_is_not_replaced(tmp_path):
    target = tmp_path / "late.json"
    check_target(str(target), "--save-dump")
    out = SharedFile(str(target))
    out.write("new")
    target.write_text("appeared meanwhile")
    with pytest.raises(Exception, match="already exists"):
        out.commit()
    assert target.read_text() == "appeared meanwhile" and os.listdir(tmp_path) == ["late.json"]


def test_a_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "x.json"
    with pytest.raises(RuntimeError), SharedFile(str(target)) as out:
        out.write("half")
        raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    write_shared(str(target), "whole")
    assert target.read_text() == "whole"
