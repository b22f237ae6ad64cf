"""doctor against a large generated cluster vs the bare floor of reading what it reads.

    python bench/bench_doctor.py [--nodes 5000] [--pods 150000] [--windows 0.2] [--repeat 1]

The test API server runs in its own process with the synthetic cluster. Three children run against it in
the same run, best of --repeat: the floor (every page doctor lists, fetched through kubectl_win.kube and
parsed with orjson, nothing else done with it), doctor itself, and `kubectl get nodes,pods -A -o json` for
reference. Prints the wall times, the ratio of doctor to the floor (bar: <= 1.5x) and doctor's peak RSS
(bar: <= 150 MiB), and exits 1 when a bar is missed.
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
RATIO_BAR = 1.5
RSS_BAR_MIB = 150

# Every page doctor reads, in its order and page size, fetched and parsed (orjson) and dropped.
FLOOR = """
import sys, time
from kubectl_win.doctor.read.live import PAGE_SIZE
from kubectl_win.doctor.read.plan import plan
from kubectl_win.kube import ApiError, KubeFlags, connect
cluster = connect(KubeFlags())
cluster.server_version()
pages = 0
for resource in sum(plan("cluster"), ()):
    try:
        for page in cluster.list_pages(resource, page_size=PAGE_SIZE):
            pages += 1
    except ApiError:
        pass
print(pages, time.process_time(), file=sys.stderr)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--windows", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if not Path(KUBECTL).exists():
        print(f"{KUBECTL} not found: no anchor to compare against", file=sys.stderr)
        return 2

    print(f"generating {args.nodes} nodes ({args.windows:.0%} Windows) and {args.pods} pods ...", flush=True)
    spec = f"nodes={args.nodes},pods={args.pods},windows={args.windows}"
    with tempfile.TemporaryDirectory(prefix="bench-doctor-") as tmp, spawn("--synthetic", spec, timeout=1800) as server:
        env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), KUBECACHEDIR=str(Path(tmp) / "cache"),
                   HOME=tmp, PYTHONPATH=str(REPO))
        print(f"server ready: {server.counts}", flush=True)
        # Warm kubectl's discovery cache and the server, so both measurements see the same state.
        run_child([KUBECTL, "get", "nodes", "-o", "name"], env)
        kubectl_times, floor_times, doctor_times, doctor_rss, floor_rss = [], [], [], [], []
        for _ in range(args.repeat):
            kubectl_times.append(run_child([KUBECTL, "get", "nodes,pods", "-A", "-o", "json"], env).wall)
            floor = run_child([sys.executable, "-c", FLOOR], env)
            floor_times.append(floor.wall)
            floor_rss.append(floor.rss_mib)
            run = run_child([sys.executable, "-m", "kubectl_win", "doctor", "-o", "json"], env, ok_codes=(0, 1))
            doctor_times.append(run.wall)
            doctor_rss.append(run.rss_mib)
    anchor, base, doctor, rss = min(kubectl_times), min(floor_times), min(doctor_times), max(doctor_rss)
    ratio = doctor / base
    print(f"kubectl get nodes,pods -A -o json: {anchor:.2f}s (reference)")
    print(f"floor (fetch + orjson, nothing else): {base:.2f}s, peak RSS {max(floor_rss):.0f} MiB")
    print(f"kubectl win doctor -o json:        {doctor:.2f}s")
    print(f"ratio doctor/floor:                {ratio:.2f}x (bar <= {RATIO_BAR:.1f}x)")
    print(f"doctor peak RSS:                   {rss:.0f} MiB (bar <= {RSS_BAR_MIB} MiB)")
    return 0 if ratio <= RATIO_BAR and rss <= RSS_BAR_MIB else 1


if __name__ == "__main__":
    raise SystemExit(main())
