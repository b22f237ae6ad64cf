"""Cold start of kubectl-win against kubectl's own, measured in the same run.

    python bench/bench_startup.py [--runs 15] [--venv bench/out/venv]

Installs the project into a fresh virtual environment (as pipx does; the machine-wide
site-packages may run start-up hooks that a user's pipx environment would not), then times:
`kubectl-win --help`, `kubectl-win explain -f one.yaml`, and one completion round trip
(`kubectl_complete-win explain -o ""`), each as a ratio to `kubectl version --client`.
The bars: a TAB 1.5x, --help 2.5x, explain -f 3x. Then, in process, loading every knowledge file (their
compiled JSON) against parsing one of them (field_rules.yaml) as YAML, best of the runs; the bar: 1x.
Prints medians and the ratios; no absolute number is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
  - name: web
    image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--venv", type=Path, default=ROOT / "bench" / "out" / "venv")
    parser.add_argument("--kubectl", default="/usr/bin/kubectl")
    args = parser.parse_args()

    bin_dir = _fresh_venv(args.venv)
    work = args.venv.parent
    (work / "one.yaml").write_text(POD, encoding="utf-8")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    anchor_label = "kubectl version --client (anchor)"
    # (label, command, bar): the bar is the most the case may cost, as a multiple of the anchor.
    cases = [
        (anchor_label, [args.kubectl, "version", "--client"], None),
        ("kubectl-win --help", [str(bin_dir / "kubectl-win"), "--help"], 2.5),
        ("kubectl-win explain -f one.yaml", [str(bin_dir / "kubectl-win"), "explain", "-f", "one.yaml"], 3.0),
        ("kubectl_complete-win explain -o ''", [str(bin_dir / "kubectl_complete-win"), "explain", "-o", ""], 1.5),
    ]
    for _, command, _ in cases:  # warm the page cache once; "cold" means a new process, not a cold disk
        subprocess.run(command, env=env, cwd=work, capture_output=True)
    # Round-robin, so that a burst of load elsewhere on the machine hits every case alike.
    samples: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for _ in range(args.runs):
        for label, command, _ in cases:
            started = time.perf_counter()
            subprocess.run(command, env=env, cwd=work, capture_output=True)
            samples[label].append(time.perf_counter() - started)
    medians = {label: statistics.median(times) for label, times in samples.items()}
    anchor = medians[anchor_label]
    print(f"{'case':40} {'median ms':>10} {'ratio':>7} {'bar':>6}")
    over = []
    for label, _, bar in cases:
        ratio = medians[label] / anchor
        verdict = "" if bar is None else f"{bar:6.1f} {'ok' if ratio <= bar else 'OVER'}"
        if bar is not None and ratio > bar:
            over.append(label)
        print(f"{label:40} {medians[label] * 1000:10.1f} {ratio:7.2f} {verdict}")
    knowledge = _knowledge_ratio(args.runs)
    print(f"{'knowledge: load all / parse one YAML':40} {'':>10} {knowledge:7.2f} {1.0:6.1f} "
          f"{'ok' if knowledge <= 1.0 else 'OVER'}")
    if knowledge > 1.0:
        over.append("knowledge load")
    print("all within their bars" if not over else f"over the bar: {', '.join(over)}")
    return 0 if not over else 1


def _knowledge_ratio(runs: int) -> float:
    """Loading every knowledge file without a cache, as a ratio to parsing field_rules.yaml: the best of `runs`
    each, so that load elsewhere on the machine does not decide it."""
    sys.path.insert(0, str(ROOT))
    from kubectl_win import knowledge

    def best(action) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            action()
            times.append(time.perf_counter() - started)
        return min(times)

    def load_all() -> None:
        knowledge.load.cache_clear()
        for name in knowledge.names():
            knowledge.load(name)

    raw = (ROOT / "kubectl_win" / "knowledge" / "field_rules.yaml").read_bytes()
    return best(load_all) / best(lambda: knowledge.parse(raw))


def _fresh_venv(path: Path) -> Path:
    bin_dir = path / ("Scripts" if os.name == "nt" else "bin")
    if not (bin_dir / "kubectl-win").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(ROOT)], check=True,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    else:  # reuse the environment but pick up source changes
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                        str(ROOT)], check=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return bin_dir


if __name__ == "__main__":
    sys.exit(main())
