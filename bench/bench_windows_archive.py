"""The windows/amd64 archive against the Linux frozen build, measured in the same run.

    python bench/bench_windows_archive.py [--runs 7] [--out bench/out/windows]

Builds both archives with the release code (PyInstaller for linux/amd64, release/windows.py for
windows/amd64), unpacks them, warms each once (the Windows one writes its .pyc files then), and
times `version` and `explain -f one.yaml` on each: the frozen build natively, the Windows archive's
kubectl-win.exe under Wine (a persistent wineserver; without Python's _wmi.pyd, see
tests/windows/__init__.py). Prints the archive sizes, medians and the Windows/Linux ratio; Wine's
own start-up is part of the Windows figure, so it overstates what Windows users see.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n" \
      "  containers:\n  - name: web\n    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\n"


def median_seconds(argv: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                       check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "windows")
    args = parser.parse_args()
    from kubectl_win import __version__
    from release import platforms
    from release.build import build_archive, build_windows_archive
    from tests.apiserver.exec import wine_binary
    from tests.windows import cache_dir

    tag = f"v{__version__}"
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    linux_archive = build_archive(tag, out, out / "work")
    windows_archive = build_windows_archive(tag, out, out / "work", cache_dir())
    with tarfile.open(linux_archive) as bundle:
        bundle.extractall(out / "linux", filter="data")
    with zipfile.ZipFile(windows_archive) as bundle:
        bundle.extractall(out / "windows")
    (out / "windows" / "kubectl-win" / "python" / "_wmi.pyd").unlink()
    pod = out / "pod.yaml"
    pod.write_text(POD)

    wine = wine_binary()
    prefix = out / "wineprefix"
    env = dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all")
    server = shutil.which("wineserver") or "/usr/lib/wine/wineserver64"
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    exe = str(out / "windows" / "kubectl-win" / "kubectl-win.exe")
    subprocess.run([wine, exe, "version"], env=env, check=False, **quiet)
    subprocess.run([server, "-k"], env=env, check=False, **quiet)
    subprocess.run([server, "-w"], env=env, check=False, **quiet)
    subprocess.run([server, "-p"], env=env, check=False, **quiet)
    frozen = str(out / "linux" / "kubectl-win" / "kubectl-win")
    windows_pod = "Z:" + str(pod).replace("/", "\\")
    rows = []
    try:
        for name, linux_args, windows_args in (("version", ["version"], ["version"]),
                                               ("explain -f", ["explain", "-f", str(pod)],
                                                ["explain", "-f", windows_pod])):
            subprocess.run([frozen, *linux_args], env=env, check=False, **quiet)  # warm: page cache, .pyc
            subprocess.run([wine, exe, *windows_args], env=env, check=False, **quiet)
            linux = median_seconds([frozen, *linux_args], args.runs, env)
            windows = median_seconds([wine, exe, *windows_args], args.runs, env)
            rows.append((name, linux, windows))
    finally:
        subprocess.run([server, "-k"], env=env, check=False, **quiet)
    print(f"archive sizes: windows/amd64 {windows_archive.stat().st_size / 1e6:.1f} MB, "
          f"{platforms.archive_name(tag, 'linux', 'amd64')} {linux_archive.stat().st_size / 1e6:.1f} MB")
    for name, linux, windows in rows:
        print(f"{name:<12} linux frozen {linux * 1000:7.0f} ms   windows archive under Wine {windows * 1000:7.0f} ms"
              f"   ratio {windows / linux:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
