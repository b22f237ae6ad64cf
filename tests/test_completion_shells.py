"""The shell scripts in completions/, run by the real bash, zsh and fish against the real program."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kubectl_win.completion.model import Directive
from kubectl_win.completion.scripts import FILE_NAMES, SHELLS, script
from tests.support.cli import run_cli
from tests.support.completion import make_bin, shell_env
from tests.support.paths import ROOT
from tests.support.tools import require_kubectl

COMPLETIONS = ROOT / "completions"


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a manifest, a text file and a subfolder, to see what file completion offers."""
    work = tmp_path_factory.mktemp("work")
    (work / "pod.yaml").write_text("kind: Pod\n")
    (work / "notes.txt").write_text("x\n")
    (work / "manifests").mkdir()
    return work


@pytest.mark.parametrize("shell", SHELLS)
def test_committed_scripts_are_exactly_what_the_command_prints(shell):
    result = run_cli("completion", shell)
    assert result.exit_code == 0 and result.stderr == ""
    committed = (COMPLETIONS / FILE_NAMES[shell]).read_text(encoding="utf-8")
    assert committed == result.stdout, "regenerate with: python -m kubectl_win.completion.scripts completions"


def test_kubectl_helper_is_executable():
    assert (COMPLETIONS / FILE_NAMES["kubectl"]).stat().st_mode & 0o111


def test_windows_kubectl_helper_is_a_cmd_file_calling_the_exe():
    committed = (COMPLETIONS / f"{FILE_NAMES['kubectl']}.cmd").read_bytes().decode("utf-8")
    assert committed == script("kubectl", windows=True).replace("\n", "\r\n")  # text mode on Windows
    assert committed.splitlines()[-1] == "kubectl-win.exe completion __complete %*"
    assert script("bash", windows=True) == script("bash")


def test_kubectl_helper_script_runs_under_sh_through_kubectl(bin_dir, tmp_path):
    """The krew path: kubectl -> the generated sh helper -> kubectl-win completion __complete."""
    kubectl = require_kubectl()
    helper_dir = tmp_path / "helper"
    helper_dir.mkdir()
    shutil.copy(COMPLETIONS / FILE_NAMES["kubectl"], helper_dir / "kubectl_complete-win")
    (helper_dir / "kubectl-win").symlink_to(bin_dir / "kubectl-win")
    env = shell_env(bin_dir)
    env["PATH"] = f"{helper_dir}:/usr/bin:/bin"
    result = subprocess.run([kubectl, "__complete", "win", "vers"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.stdout.splitlines() == ["version\tprint the kubectl-win version and the runtime it uses", ":4"]


def test_unknown_shell_is_a_usage_error():
    result = run_cli("completion", "tcsh")
    assert result.exit_code == 2 and "invalid choice" in result.stderr and result.stdout == ""


# -- bash ---------------------------------------------------------------------------------------

BASH_DRIVER = r"""
[ -f /usr/share/bash-completion/bash_completion ] && source /usr/share/bash-completion/bash_completion
source "$1"
shift
# Split the line the way readline does (COMP_WORDBREAKS included), then ask the function.
line="$1"
COMP_LINE="$line" COMP_POINT=${#line}
COMP_WORDS=() word=""
for ((i = 0; i < ${#line}; i++)); do
    c=${line:i:1}
    if [[ $c == " " ]]; then [[ -n $word ]] && COMP_WORDS+=("$word"); word=""
    elif [[ $c == "=" ]]; then [[ -n $word ]] && COMP_WORDS+=("$word"); COMP_WORDS+=("="); word=""
    else word+=$c; fi
done
COMP_WORDS+=("$word")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__kubectl_win_complete
printf '%s\n' "${COMPREPLY[@]}"
"""


def bash(line: str, bin_dir: Path, cwd: Path) -> list[str]:
    result = subprocess.run(["bash", "--norc", "-c", BASH_DRIVER, "driver", str(COMPLETIONS / FILE_NAMES["bash"]),
                             line], capture_output=True, text=True, env=shell_env(bin_dir), cwd=cwd, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return sorted(filter(None, result.stdout.splitlines()))


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
class TestBash:
    def test_commands(self, bin_dir, workdir):
        assert {"explain", "completion", "version"} <= set(bash("kubectl-win ", bin_dir, workdir))
        assert bash("kubectl-win vers", bin_dir, workdir) == ["version"]

    def test_enum_values(self, bin_dir, workdir):
        assert bash("kubectl-win explain --fail-on w", bin_dir, workdir) == ["warning"]
        assert bash("kubectl-win version -o ", bin_dir, workdir) == ["json", "text", "yaml"]

    def test_flag_equals_value(self, bin_dir, workdir):
        if not Path("/usr/share/bash-completion/bash_completion").exists():
            pytest.skip("bash-completion is not installed (it rejoins words split at '=')")
        assert bash("kubectl-win version --output=y", bin_dir, workdir) == ["yaml"]

    def test_manifest_files_filtered_by_extension(self, bin_dir, workdir):
        assert bash("kubectl-win explain -f ", bin_dir, workdir) == ["manifests", "pod.yaml"]

    def test_any_file_for_kubeconfig(self, bin_dir, workdir):
        assert bash("kubectl-win explain --kubeconfig ", bin_dir, workdir) == ["manifests", "notes.txt", "pod.yaml"]

    def test_no_files_where_none_belong(self, bin_dir, workdir):
        assert bash("kubectl-win explain -l ", bin_dir, workdir) == []


# -- zsh ------------------------------------------------------------------------------------------

# compsys builtins stand-ins that print what the script asked for; the script logic runs for real.
ZSH_DRIVER = r"""
compdef() { :; }
_describe() { local -a items; items=("${(@P)4}"); print -rl -- "describe ${@:5}" "${items[@]}"; }
_files() { print -r -- "files $*"; }
source "$1"
words=(${=2})
[[ $2 == *" " ]] && words+=("")
CURRENT=${#words}
_kubectl_win
"""


def zsh(line: str, bin_dir: Path, cwd: Path) -> list[str]:
    result = subprocess.run(["zsh", "-f", "-c", ZSH_DRIVER, "driver", str(COMPLETIONS / FILE_NAMES["zsh"]), line],
                            capture_output=True, text=True, env=shell_env(bin_dir), cwd=cwd, timeout=30)
    assert result.stderr == ""
    return result.stdout.splitlines()


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
class TestZsh:
    def test_commands_with_descriptions(self, bin_dir, workdir):
        out = zsh("kubectl-win ", bin_dir, workdir)
        assert out[0] == "describe "
        assert any(re.match(r"^explain:.+", line) for line in out[1:])

    def test_enum_values(self, bin_dir, workdir):
        assert zsh("kubectl-win explain --fail-on ", bin_dir, workdir) == ["describe ", "error", "warning", "info",
                                                                           "never"]

    def test_colons_in_values_are_escaped(self, bin_dir, workdir):
        out = zsh("kubectl-win version --output=", bin_dir, workdir)
        assert "--output=json" in out

    def test_manifest_files_use_a_glob(self, bin_dir, workdir):
        assert zsh("kubectl-win explain -f ", bin_dir, workdir) == ["files -g *.(yaml|yml|json)"]

    def test_kubeconfig_and_directories(self, bin_dir, workdir):
        assert zsh("kubectl-win explain --kubeconfig ", bin_dir, workdir) == ["files "]
        assert zsh("kubectl-win scaffold deployment web --image x --out ", bin_dir, workdir) == ["files -/"]

    def test_kinds_for_port_forward_without_a_trailing_space(self, bin_dir, workdir):
        out = zsh("kubectl-win port-forward ", bin_dir, workdir)
        assert out[0].split() == ["describe", "-S"] and "pod/" in out  # -S "": no space after


# -- fish -----------------------------------------------------------------------------------------

def fish(line: str, bin_dir: Path, cwd: Path) -> list[str]:
    script = f"source {COMPLETIONS / FILE_NAMES['fish']}; complete -C{_fish_quote(line)}"
    result = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True,
                            env=shell_env(bin_dir), cwd=cwd, timeout=30)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.splitlines()


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
class TestFish:
    def test_commands_with_descriptions(self, bin_dir, workdir):
        out = fish("kubectl-win ", bin_dir, workdir)
        assert any(line.startswith("explain\t") for line in out)

    def test_enum_values(self, bin_dir, workdir):
        assert fish("kubectl-win explain --fail-on w", bin_dir, workdir) == ["warning"]
        assert fish("kubectl-win version --output=y", bin_dir, workdir) == ["--output=yaml"]

    def test_manifest_files_filtered_by_extension(self, bin_dir, workdir):
        assert sorted(fish("kubectl-win explain -f ", bin_dir, workdir)) == ["manifests/", "pod.yaml"]

    def test_any_file_for_kubeconfig_and_none_for_selectors(self, bin_dir, workdir):
        assert {"notes.txt", "pod.yaml"} <= set(fish("kubectl-win explain --kubeconfig ", bin_dir, workdir))
        assert fish("kubectl-win explain -l ", bin_dir, workdir) == []


# -- PowerShell -----------------------------------------------------------------------------------

def test_powershell_script_speaks_the_same_protocol():
    """pwsh is not packaged for Debian, so this checks the script's contract statically."""
    text = (COMPLETIONS / FILE_NAMES["powershell"]).read_text(encoding="utf-8")
    assert "Register-ArgumentCompleter -Native -CommandName 'kubectl-win', 'kubectl-win.exe'" in text
    assert "& kubectl-win completion __complete @words" in text
    for directive in (Directive.ERROR, Directive.NO_FILE, Directive.FILTER_FILE_EXT, Directive.FILTER_DIRS):
        assert re.search(rf"\b{int(directive)}\b", text), directive
    code = re.sub(r"'[^']*'|\"[^\"]*\"|#.*", "", text)  # strings and comments out, then brackets must pair
    for opening, closing in ("{}", "()", "[]"):
        assert code.count(opening) == code.count(closing), opening + closing
    assert "@" + "REQUEST@" not in text and "\t" not in text


@pytest.mark.skipif(not shutil.which("pwsh"),
                    reason="PowerShell is not installed (no package registry here provides it)")
def test_powershell_script_loads(bin_dir):
    result = subprocess.run(["pwsh", "-NoProfile", "-Command",
                             f"Get-Content -Raw '{COMPLETIONS / FILE_NAMES['powershell']}' | Invoke-Expression"],
                            capture_output=True, text=True, env=shell_env(bin_dir), timeout=60)
    assert result.returncode == 0 and result.stderr == ""


def test_completion_kubectl_prints_the_cmd_helper_on_windows():
    import argparse
    import io

    from kubectl_win.commands import completion
    from kubectl_win.env import Env

    out = io.StringIO()
    code = completion.run(argparse.Namespace(shell="kubectl", words=[]), Env(stdout=out, is_windows=True))
    assert code == 0 and out.getvalue() == script("kubectl", windows=True)
    assert out.getvalue().startswith("@echo off")
