"""pip/pipx installs: both console scripts land on PATH, and start-up stays light."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from kubectl_win import __version__
from tests.support.paths import ROOT
from tests.support.tools import require_kubectl

HEAVY = ("kubernetes", "aiohttp", "ruamel", "websocket", "websockets", "urllib3", "prometheus_client",
         "grafana_foundation_sdk", "msgspec")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the project installed the way `pip install .` does.

    The build runs from a copy of the sources (so nothing is written into the checkout) in pip's
    isolated build environment; the dependencies come from the site-packages this venv can see.
    """
    base = tmp_path_factory.mktemp("pkg")
    source = base / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "kubectl_win", source / "kubectl_win", ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True)
    # The dependencies of the interpreter running the tests (a virtualenv's too, which
    # --system-site-packages alone would not see).
    (site,) = (env_dir / "lib").glob("python3*/site-packages")
    (site / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(source)],
                   check=True, capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return env_dir


def run_in(venv: Path, *command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(list(command), capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_pip_install_puts_both_console_scripts_on_path(venv, tmp_path):
    for script in ("kubectl-win", "kubectl_complete-win"):
        assert (venv / "bin" / script).exists(), script
    result = run_in(venv, "kubectl-win", "--version", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, f"kubectl-win {__version__}")
    result = run_in(venv, "kubectl_complete-win", "vers", cwd=tmp_path)
    assert result.stdout.splitlines()[-1] == ":4" and result.stdout.startswith("version\t")
    assert result.stderr == ""


def test_installed_package_carries_its_knowledge_files(venv, tmp_path):
    result = run_in(venv, "kubectl-win", "scaffold", "deployment", "web", "--image", "iis",
                    "--windows-build", "ltsc2022", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "windows" in result.stdout


def test_kubectl_finds_the_installed_plugin_and_its_completer(venv, tmp_path):
    kubectl = require_kubectl()
    result = run_in(venv, kubectl, "win", "version", "-o", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kubectlWin"] == __version__
    result = run_in(venv, kubectl, "__complete", "win", "completion", "", cwd=tmp_path)
    assert result.stdout.splitlines() == ["bash", "zsh", "fish", "powershell", "kubectl", ":4"]


def test_version_flag_and_command_agree():
    code = textwrap.dedent("""\
        import contextlib, io, json
        from kubectl_win.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["version", "-o", "json"])
        print(json.loads(out.getvalue())["kubectlWin"])
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == __version__


@pytest.mark.parametrize("argv,heavy", [
    (["--help"], HEAVY + ("tabulate",)),
    (["completion", "bash"], HEAVY + ("tabulate",)),
    (["completion", "__complete", "explain", "-o", ""], HEAVY + ("tabulate", "typer", "click")),
    (["version", "-o", "json"], HEAVY + ("tabulate",)),
    (["version"], HEAVY),  # prints a table: tabulate may load
    (["explain", "--help"], HEAVY + ("tabulate",)),
    (["port-forward", "--help"], HEAVY + ("tabulate",)),
    (["serve", "--help"], HEAVY + ("tabulate",)),
    (["scaffold", "monitor", "--help"], HEAVY + ("tabulate",)),
    (["images", "--help"], HEAVY + ("tabulate", "ssl")),
    (["completion", "__complete", "images", "--build", ""], HEAVY + ("tabulate", "typer", "click", "ssl")),
])
def test_help_completion_and_version_import_nothing_heavy(argv, heavy):
    code = textwrap.dedent(f"""\
        import contextlib, io, sys
        from kubectl_win.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main({argv!r})
            except SystemExit as exit:
                code = exit.code
        heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
        print(code, heavy)
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "0 []", result.stdout + result.stderr


def test_installed_package_has_every_data_file_of_the_source_tree(venv):
    package = ROOT / "kubectl_win"
    wanted = {p.relative_to(package).as_posix() for p in package.rglob("*")
              if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    (installed,) = (venv / "lib").glob("python3*/site-packages/kubectl_win")
    shipped = {p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()}
    assert wanted - shipped == set(), "add them to [tool.setuptools.package-data] in pyproject.toml"


def test_the_bundled_hns_example_runs_from_the_installed_package(venv, tmp_path):
    """README's `hns --from-file kubectl_win/examples/...` works after `pip install` (files from site-packages)."""
    (installed,) = (venv / "lib").glob("python3*/site-packages/kubectl_win")
    examples = installed / "examples"
    result = run_in(venv, "kubectl-win", "hns", "--from-file", str(examples / "hns-win-b.json"),
                    "--cluster-from-dump", str(examples / "hns-cluster.json"), "-o", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [f["id"] for f in json.loads(result.stdout)["findings"]] == ["hns-stale-loadbalancer"]
