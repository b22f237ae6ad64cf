"""explain over N generated manifests vs parsing the same files with yaml's CSafeLoader alone.

    python bench/bench_explain.py [--files 10000] [--repeat 3]

Prints both times and the ratio (the bar: explain <= 1.5x the parse alone). Both are measured in this
run, on the same files, best of --repeat, so the machine's speed cancels out.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kubectl_win.explain.service import ExplainOptions, explain_files  # noqa: E402

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


def manifest(index: int, rng: random.Random) -> str:
    windows = rng.random() < 0.4
    kind = rng.choice(KINDS)
    security = ""
    if rng.random() < 0.5:
        security = (
            "          securityContext:\n            allowPrivilegeEscalation: false\n"
            "            readOnlyRootFilesystem: true\n            capabilities: {drop: [ALL]}\n"
        )
    os_block = "      os: {name: windows}\n" if windows and rng.random() < 0.5 else ""
    selector = f"      nodeSelector: {{kubernetes.io/os: {'windows' if windows else 'linux'}}}\n"
    image = "mcr.microsoft.com/windows/servercore:ltsc2022" if windows else "nginx:1.27"
    return (
        f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: app-{index}\n  namespace: ns-{index % 50}\n"
        f"  labels: {{app: app-{index}, team: t{index % 7}}}\n"
        f"spec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: app-{index}}}\n  template:\n"
        f"    metadata:\n      labels: {{app: app-{index}}}\n    spec:\n{os_block}{selector}"
        f"      containers:\n        - name: main\n          image: {image}\n"
        f"          ports: [{{containerPort: 80}}]\n"
        f"          env: [{{name: A, value: '1'}}, {{name: B, value: '2'}}]\n"
        f"          resources:\n            requests: {{cpu: 100m, memory: 128Mi}}\n"
        f"            limits: {{cpu: 500m, memory: 512Mi}}\n{security}"
        f"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: app-{index}\nspec:\n  selector: {{app: app-{index}}}\n"
        f"  ports: [{{port: 80, targetPort: 80}}]\n"
    )


def parse_only(paths: list[Path]) -> int:
    documents = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for _ in yaml.load_all(handle.read(), Loader=yaml.CSafeLoader):
                documents += 1
    return documents


def explain(paths: list[Path]) -> int:
    report = explain_files([str(p) for p in paths], ExplainOptions(), io.StringIO())
    return len(report.findings)


def best(func, paths: list[Path], repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(paths)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for index in range(args.files):
            path = Path(tmp) / f"m{index:05d}.yaml"
            path.write_text(manifest(index, rng))
            paths.append(path)
        parse_time, documents = best(parse_only, paths, args.repeat)
        explain_time, findings = best(explain, paths, args.repeat)
    ratio = explain_time / parse_time
    print(f"files={args.files} documents={documents} findings={findings}")
    print(f"CSafeLoader parse alone: {parse_time:.3f} s")
    print(f"explain (parse + lint):  {explain_time:.3f} s")
    print(f"ratio explain/parse: {ratio:.2f}x (bar: <= 1.50x) -> {'PASS' if ratio <= 1.5 else 'FAIL'}")


if __name__ == "__main__":
    main()
