"""The windows/amd64 krew archive, built here by the release code and run under Wine through its own
kubectl-win.exe: offline commands, output encodings, inputs Windows users write, a live cluster,
port-forward, Ctrl-C, the launchers and the krew manifest. Wine's gaps and how they are worked
around: tests/windows/__init__.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import zipfile
from pathlib import Path, PureWindowsPath

import pytest
import yaml

from kubectl_win import __version__
from release import archive, krew, platforms
from tests.apiserver.exec import wine_binary
from tests.support.paths import ROOT, SAMPLE_DUMP
from tests.support.portforward_rig import (  # noqa: F401 - fixtures
    Upstream,
    echo_then_report,
    exec_settings,
    run_wine,
    windows_exec,
    windows_pod,
    wine_prefix,
)
from tests.support.tools import in_ci, missing_tool
from tests.support.waiting import HANG_GUARD, wait_until
from tests.windows import cache_dir

TAG = f"v{__version__}"
POD = """apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeSelector:
    kubernetes.io/os: windows
  securityContext:
    runAsUser: 1000
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
"""


def windows_path(path: Path) -> str:
    """The path as a Windows program names it: Wine's Z: drive is the Unix root."""
    return str(PureWindowsPath("Z:\\") / PureWindowsPath(*path.resolve().parts[1:]))


def _requirements() -> None:
    if wine_binary() is None:
        missing_tool("wine64 is not installed (CI installs it from Debian)")
    for tool, package in (("x86_64-w64-mingw32-gcc", "mingw-w64"), ("osslsigncode", "osslsigncode")):
        if shutil.which(tool) is None:
            missing_tool(f"{tool} is not installed (CI installs {package} from Debian)")


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _requirements()
    from release.build import build_windows_archive

    out = tmp_path_factory.mktemp("windows-release")
    try:
        build_windows_archive(TAG, out, out / "work", cache_dir())
    except SystemExit as exc:  # the build's one-line error (a download that failed, say)
        if in_ci():
            raise
        pytest.skip(str(exc))
    return out


@pytest.fixture(scope="module")
def installed(release_dir: Path, wine_prefix: str, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The archive extracted as krew would; the one Wine work-around on the files: no _wmi.pyd."""
    root = tmp_path_factory.mktemp("windows-install")
    with zipfile.ZipFile(release_dir / platforms.archive_name(TAG, "windows", "amd64")) as bundle:
        bundle.extractall(root)
    (root / "kubectl-win" / "python" / "_wmi.pyd").unlink()
    compiled_dependencies(root / "kubectl-win", wine_prefix)
    return root / "kubectl-win"


def compiled_dependencies(folder: Path, prefix: str) -> None:
    """Speed only: the dependencies' .pyc files, compiled once per wheel lock under Wine and cached
    (unchecked-hash, so the archive's timestamps do not matter). A user's first run writes them."""
    from release.windows import LOCK, PYTHON_EMBED

    key = hashlib.sha256(LOCK.read_bytes() + PYTHON_EMBED[2].encode()).hexdigest()[:16]
    cached = cache_dir() / f"pycache-{key}"
    lib = folder / "lib"
    if not cached.is_dir():
        tops = sorted(p.name for p in lib.iterdir() if p.is_dir() and not p.name.endswith(".dist-info")
                      and p.name != "kubectl_win")
        env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all")
        result = run_wine([wine_binary(), str(folder / "python" / "python.exe"), "-I", "-m", "compileall", "-q",
                           "--invalidation-mode", "unchecked-hash", *tops], cwd=lib, env=env, capture_output=True,
                          timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr
        staging = cached.with_suffix(".partial")
        shutil.rmtree(staging, ignore_errors=True)
        for pyc in lib.rglob("*.pyc"):
            target = staging / pyc.relative_to(lib)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pyc, target)
        staging.rename(cached)
        return
    shutil.copytree(cached, lib, dirs_exist_ok=True)


class Wine:
    def __init__(self, prefix: str, folder: Path) -> None:
        self.env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        self.folder = folder
        self.exe = folder / "kubectl-win.exe"

    def run(self, *args: str, stdin: bytes = b"", exe: Path | None = None, cwd: Path | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
        return run_wine([wine_binary(), str(exe or self.exe), *args], input=stdin, capture_output=True,
                        env=self.env, cwd=cwd, timeout=timeout)

    def cmd(self, script: str, folder: Path, timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
        """Run a batch file with cmd.exe (redirections happen inside Windows)."""
        batch = folder / "run.cmd"
        batch.write_bytes(("@echo off\r\n" + script.replace("\n", "\r\n")).encode("ascii"))
        return run_wine([wine_binary(), "cmd", "/c", windows_path(batch)], input=b"", capture_output=True,
                        env=self.env, cwd=folder, timeout=timeout)


@pytest.fixture(scope="module")
def wine(installed: Path, wine_prefix: str) -> Wine:  # noqa: F811
    runner = Wine(wine_prefix, installed)
    result = runner.run("version")  # also writes the first .pyc files
    assert result.returncode == 0, result.stderr
    return runner


def text(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode("utf-8")


# --- the archive ---------------------------------------------------------------------------------
def test_the_archive_is_what_krew_needs_and_the_manifest_lists_it(release_dir):
    target = release_dir / platforms.archive_name(TAG, "windows", "amd64")
    assert archive.problems(target, platforms.bin_path("windows")) == []
    with zipfile.ZipFile(target) as bundle:
        names = set(bundle.namelist())
    assert {"LICENSE", "kubectl-win/kubectl-win.exe", "kubectl-win/kubectl_complete-win.exe",
            "kubectl-win/python/python.exe", "kubectl-win/python/python313.zip",
            "kubectl-win/lib/kubectl_win/__init__.py", "kubectl-win/lib/kubectl_win/knowledge/compiled/"
            "field_rules.json"} <= names
    unwanted = ("kubectl-win/lib/cryptography", "kubectl-win/lib/pydantic", "kubectl-win/lib/bin/")
    assert not [name for name in names if name.endswith(".pyc") or name.startswith(unwanted)]
    text_ = krew.render(TAG, {("windows", "amd64"): archive.sha256(target)}, base_url="https://example.invalid/dl")
    manifest = yaml.safe_load(text_)
    assert krew.validate(manifest, "win.yaml") == []
    from tests.test_krew import real_validation

    assert real_validation(manifest, "win.yaml") is None  # krew's own validate-krew-manifest
    assert krew.select(manifest, "windows", "amd64")["bin"] == "kubectl-win/kubectl-win.exe"


def test_the_root_manifest_windows_entry_installs_with_krew_and_runs(release_dir, wine_prefix, tmp_path):  # noqa: F811
    """krew-manifest.yaml's windows/amd64 entry, with this build's checksum recorded: krew (its Linux build;
    krew.exe cannot run under Wine 8) installs it as on Windows (KREW_OS=windows), and the kubectl-win.exe it
    links runs."""
    from tests.test_krew_install import krew_install, root_manifest_with

    text_, _ = root_manifest_with(release_dir, "windows", "amd64")
    manifest_path = tmp_path / "krew-manifest.yaml"
    manifest_path.write_text(text_)
    krew_root = tmp_path / "krew"
    result = krew_install(manifest_path, release_dir / platforms.archive_name(TAG, "windows", "amd64"), krew_root,
                          target=("windows", "amd64"))
    assert result.returncode == 0, result.stderr
    assert "Installed plugin: win" in result.stdout + result.stderr
    store = krew_root / "store" / "win" / TAG
    link = krew_root / "bin" / "kubectl-win.exe"  # krew names the link for Windows
    assert link.is_symlink() and link.resolve() == store / "kubectl-win" / "kubectl-win.exe"
    assert (store / "LICENSE").is_file()
    (store / "kubectl-win" / "python" / "_wmi.pyd").unlink()  # the one Wine work-around (tests/windows)
    compiled_dependencies(store / "kubectl-win", wine_prefix)
    runner = Wine(wine_prefix, store / "kubectl-win")
    version = runner.run("version", exe=link)
    assert version.returncode == 0, version.stderr
    assert __version__ in text(version)


def test_a_rebuild_gives_the_same_bytes(release_dir, tmp_path):
    from release.build import build_windows_archive

    again = build_windows_archive(TAG, tmp_path, tmp_path / "work", cache_dir())
    first = release_dir / platforms.archive_name(TAG, "windows", "amd64")
    assert archive.sha256(again) == archive.sha256(first)


def test_the_launchers_build_reproducibly_without_build_paths(tmp_path):
    _requirements()
    from release import windows

    a = windows.launcher("kubectl_win", TAG, tmp_path / "a.exe").read_bytes()
    elsewhere = tmp_path / "other" / "checkout"
    shutil.copytree(windows.LAUNCHER.parent, elsewhere)
    b = tmp_path / "b.exe"
    subprocess.run([*_compile_command(windows, elsewhere), "-o", str(b), "launcher.c"], check=True, cwd=elsewhere,
                   env=dict(os.environ, SOURCE_DATE_EPOCH="0"), timeout=120)
    assert a == b.read_bytes() and a[:2] == b"MZ" and len(a) < 64 * 1024
    pe = int.from_bytes(a[0x3C:0x40], "little")
    assert int.from_bytes(a[pe + 8:pe + 12], "little") == 0  # no PE timestamp


def _compile_command(windows, folder: Path) -> list[str]:  # noqa: ANN001
    return ["x86_64-w64-mingw32-gcc", "-std=c99", "-Os", "-Wall", "-Wextra", "-Werror", "-fno-ident",
            f"-ffile-prefix-map={folder}=.", "-s", "-Wl,--no-insert-timestamp", "-Wl,--build-id=none",
            '-DMODULE=L"kubectl_win"', f'-DVERSION=L"{TAG}"']


def test_a_bundled_file_whose_signature_does_not_match_is_refused(installed, tmp_path):
    from release.windows import WindowsBuildError, check_signatures

    for name in ("python.exe", "vcruntime140.dll"):  # signed by the PSF and by Microsoft
        shutil.copyfile(installed / "python" / name, tmp_path / name)
    check_signatures(tmp_path)
    data = bytearray((tmp_path / "python.exe").read_bytes())
    data[0x400] ^= 0xFF  # one byte of code
    (tmp_path / "python.exe").write_bytes(bytes(data))
    with pytest.raises(WindowsBuildError, match="python.exe: no intact Authenticode signature"):
        check_signatures(tmp_path)


# --- offline commands ------------------------------------------------------------------------------
def test_version_runs_on_windows_cpython(wine):
    result = wine.run("version", "-o", "json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["platform"] == "windows/amd64" and info["python"].startswith("3.13.")
    assert info["kubectlWin"] == __version__ and info["kubernetesClient"].startswith("34.")


def test_doctor_from_a_dump_piped_in_every_format_is_utf8(wine):
    dump = windows_path(SAMPLE_DUMP)
    outputs = {}
    for output in ("table", "json", "html"):
        result = wine.run("doctor", "--from-dump", dump, "-o", output)
        assert result.returncode in (0, 1), result.stderr
        assert not result.stderr, result.stderr
        outputs[output] = text(result)  # raises unless it is UTF-8
    assert json.loads(outputs["json"])["findings"]
    assert outputs["html"].lstrip().lower().startswith("<!doctype html")
    assert any(ord(ch) > 127 for ch in outputs["html"])  # the report's symbols came through


def test_doctor_redirected_to_files_by_cmd_writes_utf8(wine, tmp_path):
    dump = windows_path(SAMPLE_DUMP)
    result = wine.cmd(f'"{windows_path(wine.exe)}" doctor --from-dump "{dump}" -o html > report.html\n'
                      f'echo html %ERRORLEVEL%\n'
                      f'"{windows_path(wine.exe)}" doctor --from-dump "{dump}" -o json > report.json\n'
                      f'echo json %ERRORLEVEL%\n', tmp_path)
    assert b"html 1" in result.stdout and b"json 1" in result.stdout, result.stdout + result.stderr
    html = (tmp_path / "report.html").read_bytes().decode("utf-8")
    assert "</html>" in html and any(ord(ch) > 127 for ch in html)
    assert json.loads((tmp_path / "report.json").read_bytes())["findings"]


def test_explain_reads_crlf_utf16_and_stdin_under_drive_letter_unc_and_non_ascii_paths(wine, tmp_path):
    folder = tmp_path / "Übersicht café"
    folder.mkdir()
    crlf = folder / "pod-crlf.yaml"
    crlf.write_bytes(POD.replace("\n", "\r\n").encode())
    utf16 = folder / "pod-utf16.yaml"
    utf16.write_bytes(b"\xff\xfe" + POD.replace("\n", "\r\n").encode("utf-16-le"))  # PowerShell 5.1's `>`
    for path in (windows_path(crlf), "\\\\?\\" + windows_path(utf16)):
        result = wine.run("explain", "-f", path, "-o", "json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert any("runAsUser" in json.dumps(finding) for finding in report["findings"]), report
    piped = wine.run("explain", "-f", "-", "-o", "json", stdin=b"\xff\xfe" + POD.encode("utf-16-le"))
    assert piped.returncode == 0, piped.stderr
    from_file = json.loads(wine.run("explain", "-f", windows_path(crlf), "-o", "json").stdout)["findings"]
    from_stdin = json.loads(piped.stdout)["findings"]
    assert [(f["id"], f["line"]) for f in from_stdin] == [(f["id"], f["line"]) for f in from_file]
    assert {f["file"] for f in from_stdin} == {"<stdin>"}


def test_scaffold_writes_files_and_hns_reads_a_file_and_completion_speaks_powershell(wine, tmp_path):
    out = tmp_path / "out"
    result = wine.run("scaffold", "deployment", "web", "--image",
                      "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022", "--out",
                      windows_path(out))
    assert result.returncode == 0, result.stderr
    written = list(out.rglob("*.yaml"))
    assert written and "kubernetes.io/os: windows" in written[0].read_text(encoding="utf-8")
    hns_dumps = sorted((ROOT / "tests" / "fixtures" / "hns").glob("win-*.json"))
    if hns_dumps:
        result = wine.run("hns", "--from-file", windows_path(hns_dumps[0]))
        assert result.returncode in (0, 1), result.stderr
        assert result.stdout
    script = wine.run("completion", "powershell")
    assert script.returncode == 0 and b"Register-ArgumentCompleter" in script.stdout


def test_the_completion_launcher_answers_a_tab(wine):
    result = wine.run("doc", exe=wine.folder / "kubectl_complete-win.exe")
    assert result.returncode == 0
    assert b"doctor" in result.stdout


def test_exit_codes_and_command_lines_pass_through_the_launcher(wine):
    result = wine.run("explain", "--no-such-flag")
    assert result.returncode == 2 and b"error:" in result.stderr
    # Quotes and spaces reach Python exactly as Windows splits them.
    result = wine.run("explain", 'spec.containers[*].securityContext "quoted"')
    assert result.returncode == 2 and b'"quoted"' in result.stderr, result.stderr


def test_plain_windows_cpython_without_utf8_mode_writes_utf8_too(wine):
    # What a pip install runs: python.exe without -X utf8; stdout would be cp1252.
    result = wine.run("-I", "-m", "kubectl_win", "doctor", "--from-dump", windows_path(SAMPLE_DUMP), "-o", "html",
                      exe=wine.folder / "python" / "python.exe")
    assert result.returncode == 1, result.stderr
    assert any(ord(ch) > 127 for ch in text(result))


# --- a cluster -------------------------------------------------------------------------------------
def _kubeconfig(apiserver, folder: Path, token_bytes: bytes) -> Path:  # noqa: ANN001
    """A kubeconfig with Windows paths (drive letters) and a tokenFile next to it."""
    (folder / "token.txt").write_bytes(token_bytes)
    config = yaml.safe_load(apiserver.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    cluster["certificate-authority"] = windows_path(Path(cluster["certificate-authority"]))
    config["users"][0]["user"] = {"tokenFile": "token.txt"}
    path = folder / "config"
    path.write_text(yaml.safe_dump(config).replace("\n", "\r\n"))
    return path


def test_live_doctor_and_explain_with_token_files_written_on_windows(wine, apiserver, tmp_path):
    # Each live run imports the kubernetes client, ~900 modules: 20 s under Wine (its file look-ups),
    # so one doctor and one explain (tests/test_windows_io.py covers both token files for both).
    token = apiserver.token
    apiserver.server.seed(SAMPLE_DUMP)
    echo = tmp_path / "cmd"
    echo.mkdir()
    kubeconfig = windows_path(_kubeconfig(apiserver, echo, f"{token} \r\n".encode()))  # cmd: echo %T% > f
    result = wine.run("doctor", "--kubeconfig", kubeconfig, "-o", "json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["findings"]
    powershell = tmp_path / "powershell"
    powershell.mkdir()
    kubeconfig = windows_path(_kubeconfig(apiserver, powershell, b"\xff\xfe" + f"{token}\r\n".encode("utf-16-le")))
    explained = wine.run("explain", "pods", "--kubeconfig", kubeconfig, "-A", "-o", "json")
    assert explained.returncode in (0, 1), explained.stderr
    assert json.loads(explained.stdout)["findings"]
    assert token.encode() not in result.stdout + result.stderr + explained.stdout + explained.stderr


def test_port_forward_listens_relays_and_ends_cleanly_on_ctrl_c(wine, apiserver, windows_exec, tmp_path):  # noqa: F811
    upstream = Upstream(echo_then_report)
    apiserver.put(windows_pod("iis"))
    kubeconfig = windows_path(_kubeconfig(apiserver, tmp_path, apiserver.token.encode()))
    process = subprocess.Popen([wine_binary(), str(wine.exe), "port-forward", "--kubeconfig", kubeconfig, "pod/iis",
                                f":{upstream.port}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=wine.env, start_new_session=True)
    try:
        line = process.stdout.readline().decode()
        assert "Forwarding from 127.0.0.1:" in line, line + process.stderr.read1().decode()
        port = int(line.split("127.0.0.1:")[1].split()[0])

        from tests.support.portforward_rig import exchange

        try:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                reply = exchange(sock, b"hello from windows\r\n")
        except OSError as exc:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"{exc}: {process.stderr.read().decode()}") from None
        assert reply == b"hello from windows\r\nEOF after 20\n"
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the console's CTRL_C_EVENT
        code = process.wait(60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        upstream.close()
    assert code == 0, process.stderr.read()
    wait_until(lambda: not listening(port), "the listener to close after Ctrl-C")


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD).close()
    except OSError:
        return False
    return True


def test_ctrl_break_and_console_close_unwind_like_ctrl_c(wine):
    script = (
        "import signal, threading\n"
        "from kubectl_win.console import console_events_interrupt, _handlers\n"
        "for event in ('break', 'close'):\n"
        "    try:\n"
        "        with console_events_interrupt():\n"
        "            if event == 'break':\n"
        "                signal.raise_signal(signal.SIGBREAK)\n"
        "            else:\n"
        "                threading.Thread(target=_handlers[-1], args=(2,)).start()  # CTRL_CLOSE_EVENT\n"
        "                time.sleep(3600)  # only the event ends it: the run's timeout is the hang guard\n"
        "        print(event, 'not interrupted')\n"
        "    except KeyboardInterrupt:\n"
        "        print(event, 'unwound like Ctrl-C', len(_handlers))\n"
    )
    result = wine.run("-I", "-c", "import time\n" + script,
                      exe=wine.folder / "python" / "python.exe", timeout=120)
    lines = result.stdout.decode().split("\r\n")[:2]
    assert lines == ["break unwound like Ctrl-C 0", "close unwound like Ctrl-C 0"], result.stderr


def test_fix_commands_are_quoted_for_the_shell_that_started_the_tool(wine, tmp_path):
    # No --shell: the tool finds cmd.exe among its ancestors (past the launcher) and quotes for it.
    dump = windows_path(SAMPLE_DUMP)
    result = wine.cmd(f'"{windows_path(wine.exe)}" doctor --from-dump "{dump}" -o json > fixes.json\n', tmp_path)
    findings = json.loads((tmp_path / "fixes.json").read_bytes())["findings"]
    commands = [c for f in findings if f["fix"] for c in f["fix"]["commands"]]
    patch = next(c for c in commands if c.startswith("kubectl patch daemonset node-exporter"))
    assert patch.endswith('-p "{spec: {template: {spec: {nodeSelector: {kubernetes.io/os: linux}}}}}"'), \
        (patch, result.stderr)
