"""Install the frozen linux/amd64 archive with the real krew (`kubectl krew install --manifest --archive`,
krew built from its Go module) into a temporary KREW_ROOT, and run it through the real kubectl; the same
for the linux/amd64 entry of the repository's krew-manifest.yaml.

krew: pick the platform whose selector matches, download, verify the sha256, extract (directories
and regular files only), require a license file, and symlink bin as $KREW_ROOT/bin/kubectl-<name>.
The archive is built with the real release code (PyInstaller, half a minute) once per set of inputs and cached
(tests/support/frozen_archive.py).
"""

from __future__ import annotations

import importlib.util
import os
import pty
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from kubectl_win import __version__
from release import archive, krew, platforms
from tests.realcluster.fixtures import go_tool
from tests.support.paths import DOCS, PACKAGE
from tests.support.tools import missing_tool, require_kubectl

TAG = f"v{__version__}"

pytestmark = [
    pytest.mark.skipif(platforms.current() != ("linux", "amd64"), reason="the install test builds linux/amd64"),
]


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("PyInstaller") is None:
        missing_tool("PyInstaller is not installed (it is in the test extra)")
    from tests.support.frozen_archive import cached_archive

    out = tmp_path_factory.mktemp("release")
    name = platforms.archive_name(TAG, "linux", "amd64")
    shutil.copyfile(cached_archive(TAG) / name, out / name)
    sha256s = {platforms.current(): archive.sha256(out / name)}
    (out / "win.yaml").write_text(krew.render(TAG, sha256s, base_url="https://example.invalid/dl"))
    return out


def krew_env(krew_root: Path) -> dict[str, str]:
    """kubectl finds krew as its `kubectl-krew` plugin, and the installed plugins in $KREW_ROOT/bin."""
    tools = krew_root / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    link = tools / "kubectl-krew"
    if not link.exists():
        link.symlink_to(go_tool("krew", "krew"))
    return {"PATH": f"{krew_root / 'bin'}{os.pathsep}{tools}{os.pathsep}/usr/bin:/bin", "HOME": str(krew_root),
            "KREW_ROOT": str(krew_root), "KUBECONFIG": str(krew_root / "no-such-config")}


def krew_install(manifest_path: Path, archive_path: Path, krew_root: Path, target: tuple[str, str] | None = None,
                 cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `kubectl krew install --manifest=M --archive=A` into krew_root; `target` (os, arch) installs
    another platform's entry, as krew's KREW_OS and KREW_ARCH make it (how its docs test Windows entries)."""
    env = krew_env(krew_root)
    if target is not None:
        env.update(KREW_OS=target[0], KREW_ARCH=target[1])
    return subprocess.run([require_kubectl(), "krew", "install", f"--manifest={manifest_path}",
                           f"--archive={archive_path}"], env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=cwd)


@pytest.fixture(scope="session")
def installed(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    krew_root = tmp_path_factory.mktemp("krew")
    result = krew_install(release_dir / "win.yaml", release_dir / platforms.archive_name(TAG, "linux", "amd64"),
                          krew_root)
    assert result.returncode == 0, result.stderr
    assert 'Installed plugin: win' in result.stderr + result.stdout
    return krew_env(krew_root)


def kubectl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([require_kubectl(), *args], env=env, capture_output=True, text=True, timeout=60)


def test_krew_lists_the_installed_plugin_and_kubectl_win_version_runs_through_kubectl(installed):
    receipt = yaml.safe_load((Path(installed["KREW_ROOT"]) / "receipts" / "win.yaml").read_text())
    assert receipt["metadata"]["name"] == "win" and receipt["spec"]["version"] == TAG
    link = Path(installed["KREW_ROOT"]) / "bin" / "kubectl-win"
    assert link.is_symlink() and (Path(installed["KREW_ROOT"]) / "store" / "win" / TAG) in link.resolve().parents
    result = kubectl(installed, "win", "version")
    assert result.returncode == 0, result.stderr
    assert __version__ in result.stdout


def test_kubectl_runs_the_installed_plugin(installed):
    result = kubectl(installed, "win", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: kubectl win")
    assert "explain" in result.stdout


def test_the_frozen_plugin_needs_no_python_on_path(installed):
    assert shutil.which("python3", path=installed["PATH"]) in (None, "/usr/bin/python3")
    result = kubectl(installed, "win", "version", "-o", "yaml")
    info = yaml.safe_load(result.stdout)
    assert result.returncode == 0 and info["kubectlWin"] == __version__ and info["build"] == "frozen"


def test_the_plugin_exit_codes_pass_through_kubectl(installed):
    result = kubectl(installed, "win", "explain", "--no-such-flag")
    assert result.returncode == 2 and "error:" in result.stderr


def test_completion_helper_for_krew_installs(installed):
    helper = Path(installed["KREW_ROOT"]) / "bin" / "kubectl_complete-win"
    script = kubectl(installed, "win", "completion", "kubectl")
    helper.write_text(script.stdout)
    helper.chmod(0o755)
    result = kubectl(installed, "__complete", "win", "explain", "-o", "")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[-1] == ":4"
    assert {"table", "json", "yaml"} <= set(lines)


def root_manifest_with(release_dir: Path, os_name: str, arch: str) -> tuple[str, str]:
    """krew-manifest.yaml as the release code writes it once this build's archive for os/arch is the one
    recorded (tests/test_krew.py: the committed file is that code's output), and the committed file."""
    name = platforms.archive_name(TAG, os_name, arch)
    text = krew.root_manifest(checksums={name: archive.sha256(release_dir / name)})
    committed = krew.ROOT_MANIFEST.read_text(encoding="utf-8")
    entries = [line for line in text.splitlines() if not line.startswith("#")]
    committed_entries = [line for line in committed.splitlines() if not line.startswith("#")]
    # Only that entry's checksum differs from the committed file (its comments name what is recorded).
    assert [(a, b) for a, b in zip(committed_entries, entries, strict=True) if a != b] == [
        (f"    sha256: '{krew.PLACEHOLDER_SHA256}'", f"    sha256: {archive.sha256(release_dir / name)}")]
    return text, committed


def test_the_root_manifest_linux_entry_installs_with_krew_as_docs_install_md_shows(release_dir, tmp_path):
    """docs/install.md's `kubectl krew install --manifest=krew-manifest.yaml --archive=...`, run as written in a
    folder holding the two files, prints what the page shows, and installs a plugin that runs."""
    import shlex

    from tests.support.readme_examples import console_examples, differences

    page = (DOCS / "install.md").read_text(encoding="utf-8")
    [example] = [e for e in console_examples(page) if e.command.startswith("kubectl krew install --manifest=")]
    argv = shlex.split(example.command)
    assert argv[3] == "--manifest=krew-manifest.yaml"
    text, _ = root_manifest_with(release_dir, "linux", "amd64")
    (tmp_path / "krew-manifest.yaml").write_text(text)
    archive_name = argv[4].removeprefix("--archive=")
    assert archive_name == platforms.archive_name(TAG, "linux", "amd64"), "docs/install.md names another version"
    shutil.copy(release_dir / archive_name, tmp_path / archive_name)
    krew_root = tmp_path / "krew"
    terminal, typed_on = pty.openpty()  # a user types it at a terminal (krew warns about any other stdin)
    try:
        result = subprocess.run([require_kubectl(), *argv[1:]], env=krew_env(krew_root), capture_output=True,
                                text=True, timeout=120, stdin=typed_on, cwd=tmp_path)
    finally:
        os.close(typed_on)
        os.close(terminal)
    assert result.returncode == 0, result.stderr
    assert differences(example.output, (result.stderr + result.stdout).splitlines()) == [], result.stderr
    link = krew_root / "bin" / "kubectl-win"
    assert link.resolve() == krew_root / "store" / "win" / TAG / "kubectl-win" / "kubectl-win"
    assert (krew_root / "store" / "win" / TAG / "LICENSE").is_file()
    version = kubectl(krew_env(krew_root), "win", "version")
    assert version.returncode == 0 and __version__ in version.stdout


def test_a_tampered_archive_is_refused(release_dir, tmp_path):
    tampered = tmp_path / "tampered.tar.gz"
    shutil.copy(release_dir / platforms.archive_name(TAG, "linux", "amd64"), tampered)
    with tampered.open("ab") as handle:
        handle.write(b"\0")
    result = krew_install(release_dir / "win.yaml", tampered, tmp_path / "krew")
    assert result.returncode != 0
    assert "checksum" in result.stderr.lower() or "sha256" in result.stderr.lower(), result.stderr
    assert not (tmp_path / "krew" / "bin" / "kubectl-win").exists()


def test_the_archive_has_no_links_and_carries_the_license(release_dir):
    target = release_dir / platforms.archive_name(TAG, "linux", "amd64")
    assert archive.problems(target, platforms.bin_path("linux")) == []


def source_data_files() -> set[str]:
    package = PACKAGE
    return {p.relative_to(package).as_posix() for p in package.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}


def test_the_frozen_build_carries_every_data_file(release_dir):
    with tarfile.open(release_dir / platforms.archive_name(TAG, "linux", "amd64")) as bundle:
        prefix = "kubectl-win/_internal/kubectl_win/"
        bundled = {m.name[len(prefix):] for m in bundle.getmembers() if m.name.startswith(prefix) and m.isfile()}
    assert source_data_files() <= bundled


def test_the_frozen_build_reaches_a_cluster(installed, apiserver):
    """Live names go through the kube layer (kubeconfig, TLS, HTTP): all of it must be in the bundle."""
    for name in ("default", "win-apps"):
        apiserver.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    # The names must come back, not race the 2 s TAB budget on a busy machine.
    env = {**installed, "KUBECONFIG": str(apiserver.kubeconfig), "KUBECTL_WIN_COMPLETION_TIMEOUT": "30"}
    helper = Path(installed["KREW_ROOT"]) / "bin" / "kubectl_complete-win"
    if not helper.exists():
        helper.write_text(kubectl(installed, "win", "completion", "kubectl").stdout)
        helper.chmod(0o755)
    result = kubectl(env, "__complete", "win", "doctor", "-n", "")
    assert result.stdout.splitlines() == ["default", "win-apps", ":4"]
