"""--out DIR: one file per object, atomic writes, never an overwrite without --force."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubectl_win.errors import InputError, UsageError
from kubectl_win.scaffold import writer
from tests.support.cli import run_cli

ARGS = ["deployment", "web", "--image", "example.com/web:1", "--port", "80", "--service", "ClusterIP"]


def test_out_writes_one_file_per_object(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    result = run_cli("scaffold", *ARGS, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["web-deployment.yaml", "web-service.yaml"]
    assert result.stdout.splitlines() == [f"wrote {out / 'web-deployment.yaml'}", f"wrote {out / 'web-service.yaml'}"]
    assert yaml.safe_load((out / "web-service.yaml").read_text())["kind"] == "Service"
    mode = (out / "web-service.yaml").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_existing_files_are_never_overwritten_without_force(tmp_path: Path) -> None:
    mine = tmp_path / "web-service.yaml"
    mine.write_text("# my hand-written service\n")
    result = run_cli("scaffold", *ARGS, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"error: {mine} already exists (use --force to overwrite)\n"
    assert mine.read_text() == "# my hand-written service\n"
    # All or nothing: the Deployment (which did not exist) was not written either.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web-service.yaml"]
    forced = run_cli("scaffold", *ARGS, "--out", str(tmp_path), "--force")
    assert forced.exit_code == 0
    assert yaml.safe_load(mine.read_text())["kind"] == "Service"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web-deployment.yaml", "web-service.yaml"]


def test_out_must_be_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    result = run_cli("scaffold", *ARGS, "--out", str(target))
    assert result.exit_code == 2 and "not a directory" in result.stderr
    assert target.read_text() == "x"


def test_a_file_that_appears_during_the_write_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.yaml"
    real_link = os.link

    def racing_link(src: str, dst: str) -> None:
        Path(dst).write_text("someone else's\n")  # another process wins the race
        real_link(src, dst)

    monkeypatch.setattr(writer.os, "link", racing_link)
    with pytest.raises(UsageError, match="already exists"):
        writer.write_files([(str(target), "ours\n")])
    assert target.read_text() == "someone else's\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.yaml"]  # the temporary file is gone


def test_a_failed_write_leaves_no_partial_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real_fsync = os.fsync

    def failing_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:  # the second file's data
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(writer.os, "fsync", failing_fsync)
    files = [(str(tmp_path / "one.yaml"), "1\n"), (str(tmp_path / "two.yaml"), "2\n")]
    with pytest.raises(InputError, match="No space left on device"):
        writer.write_files(files)
    assert list(tmp_path.iterdir()) == []
