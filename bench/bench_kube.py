"""The access layer listing every pod vs `kubectl get pods -A -o json > /dev/null`, same server, same run.

    python bench/bench_kube.py [--nodes 5000] [--pods 150000] [--windows 0.2] [--repeat 1] [--http]

The test API server runs in its own process with a synthetic cluster. Three children are timed:
the anchor (kubectl), the layer streaming every pod (`Cluster.list`), and the same keeping every
pod in memory. Prints wall times, ratios against the anchor and each child's peak RSS. kubectl's
own client-side rate limit (5 requests/s after a burst of 10) dominates its time on big clusters,
so the ratio mostly measures page count; the absolute client CPU is printed too.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.child import run_child  # noqa: E402
from tests.apiserver.process import spawn  # noqa: E402

KUBECTL = "/usr/bin/kubectl"

LAYER = """
import sys, time
from kubectl_win.kube import KubeFlags, connect
keep = sys.argv[1] == "keep"
cluster = connect(KubeFlags())
items = [] if keep else None
count = 0
for pod in cluster.list("pods", None):
    count += 1
    if keep:
        items.append(pod)
print(count, time.process_time(), file=sys.stderr)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--windows", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--http", action="store_true", help="serve plain HTTP instead of HTTPS")
    args = parser.parse_args()
    if not Path(KUBECTL).exists():
        print(f"{KUBECTL} not found: no anchor to compare against", file=sys.stderr)
        return 2
    spec = f"nodes={args.nodes},pods={args.pods},windows={args.windows}"
    extra = ["--http"] if args.http else []
    with tempfile.TemporaryDirectory(prefix="bench-kube-") as tmp, \
            spawn("--synthetic", spec, *extra, timeout=1800) as server:
        env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), KUBECACHEDIR=str(Path(tmp) / "cache"),
                   HOME=tmp, PYTHONPATH=str(REPO))
        print(f"server ready: {server.counts}", flush=True)
        run_child([KUBECTL, "get", "nodes", "-o", "name"], env)  # warm discovery cache and server
        rows: dict[str, list[tuple[float, float, float]]] = {"kubectl": [], "stream": [], "keep": []}
        for _ in range(args.repeat):
            runs = {"kubectl": run_child([KUBECTL, "get", "pods", "-A", "-o", "json"], env)}
            for mode in ("stream", "keep"):
                runs[mode] = run_child([sys.executable, "-c", LAYER, mode], env)
            for key, run in runs.items():
                rows[key].append((run.wall, run.cpu, run.rss_mib))
    anchor = min(r[0] for r in rows["kubectl"])
    labels = {"kubectl": "kubectl get pods -A -o json", "stream": "Cluster.list, streaming",
              "keep": "Cluster.list, keeping all pods"}
    for key, label in labels.items():
        wall = min(r[0] for r in rows[key])
        cpu = min(r[1] for r in rows[key])
        rss = max(r[2] for r in rows[key])
        print(f"{label:32} {wall:7.2f}s  {wall / anchor:5.2f}x  cpu {cpu:6.2f}s  peak RSS {rss:6.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
