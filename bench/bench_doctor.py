"""doctor against a large generated cluster vs the bare floor of reading what it reads.

    python bench/bench_doctor.py [--nodes 5000] [--pods 150000] [--windows 0.2] [--rounds 3] [--small] [--kubectl]

The test API server runs in its own process with the synthetic cluster, its objects shaped as a running
cluster's kube-apiserver returns them (managedFields, the service-account volume, default tolerations, the
kubelet's full status: about 5 KB a pod; tests/test_synthetic_shape.py holds the shape to a real server's);
--small serves the bare objects instead (about 1 KB a pod). The bytes per pod the server sends are measured
once and printed beside the figures. Each round runs two children against the server, one after the other:
the floor (every page doctor lists, fetched through kubectl_win.kube and parsed with orjson into dicts,
nothing else done with it), then doctor itself. Every round prints both wall times, the ratio of doctor to
that round's floor (bar: <= 0.75x in every round on the realistic objects, <= 1.25x on --small) and
doctor's peak RSS (bar: <= 150 MiB), beside the machine's load average and CPU count: the server shares the
CPUs with the client (and with whatever else runs), so a loaded machine lengthens the floor's waits and
doctor's work differently. Exits 1 when a bar is missed in any round. --kubectl also times `kubectl get
nodes,pods -A -o json` once, for reference (about 40x the floor).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.child import run_child  # noqa: E402
from tests.apiserver.process import spawn  # noqa: E402

KUBECTL = "/usr/bin/kubectl"
RATIO_BAR = 0.75  # realistic objects: doctor decodes only what it reads, the floor parses everything
SMALL_RATIO_BAR = 1.25  # bare objects: little to skip, so doctor's own work shows
RSS_BAR_MIB = 150

# Every page doctor reads, in its order and page size, fetched and parsed (orjson) and dropped.
FLOOR = """
import sys, time
from kubectl_win.doctor.read.api import PAGE_SIZE
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

# The pods' pages as the server sends them: bytes and items, to print the bytes per pod.
POD_BYTES = """
import orjson
from kubectl_win.doctor.read.api import PAGE_SIZE
from kubectl_win.kube import KubeFlags, connect
cluster = connect(KubeFlags())
params, size, pods = {"limit": PAGE_SIZE}, 0, 0
while True:
    status, body = cluster.get_raw("/api/v1/pods", params)
    page = orjson.loads(body)
    size, pods = size + len(body), pods + len(page["items"])
    token = page["metadata"].get("continue")
    if not token:
        break
    params["continue"] = token
print(size, pods)
"""


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f} (1/5 min) on {_cpus()} CPUs"


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what nproc prints
    except AttributeError:
        return os.cpu_count() or 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--windows", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of floor then doctor; every one must pass")
    parser.add_argument("--small", action="store_true",
                        help="serve the bare objects (about 1 KB a pod) rather than a real server's (about 5 KB)")
    parser.add_argument("--kubectl", action="store_true",
                        help=f"also time {KUBECTL} get nodes,pods -A -o json once, for reference (slow)")
    args = parser.parse_args()
    if args.kubectl and not Path(KUBECTL).exists():
        print(f"{KUBECTL} not found", file=sys.stderr)
        return 2

    shape = "small" if args.small else "realistic"
    bar = SMALL_RATIO_BAR if args.small else RATIO_BAR
    print(f"generating {args.nodes} nodes ({args.windows:.0%} Windows) and {args.pods} {shape} pods ...", flush=True)
    spec = f"nodes={args.nodes},pods={args.pods},windows={args.windows},shape={shape}"
    with tempfile.TemporaryDirectory(prefix="bench-doctor-") as tmp, spawn("--synthetic", spec, timeout=1800) as server:
        env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), KUBECACHEDIR=str(Path(tmp) / "cache"),
                   HOME=tmp, PYTHONPATH=str(REPO))
        print(f"server ready: {server.counts}", flush=True)
        if args.kubectl:
            run_child([KUBECTL, "get", "nodes", "-o", "name"], env)  # warm its discovery cache
            anchor = run_child([KUBECTL, "get", "nodes,pods", "-A", "-o", "json"], env).wall
            print(f"kubectl get nodes,pods -A -o json: {anchor:.2f}s (reference)")
        sizes = subprocess.run([sys.executable, "-c", POD_BYTES], env=env, cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.split()
        per_pod = int(sizes[0]) / max(1, int(sizes[1]))
        print(f"pods as served: {per_pod:,.0f} bytes per pod ({shape} objects)", flush=True)
        run_child([sys.executable, "-c", FLOOR], env)  # warm the server and the page cache once
        ratios, rss = [], []
        for number in range(1, args.rounds + 1):
            load = _load()
            floor = run_child([sys.executable, "-c", FLOOR], env)
            run = run_child([sys.executable, "-m", "kubectl_win", "doctor", "-o", "json"], env, ok_codes=(0, 1))
            ratios.append(run.wall / floor.wall)
            rss.append(run.rss_mib)
            print(f"round {number}: floor {floor.wall:.2f}s (cpu {floor.cpu:.2f}s), doctor {run.wall:.2f}s "
                  f"(cpu {run.cpu:.2f}s), ratio {ratios[-1]:.2f}x, doctor peak RSS {run.rss_mib:.0f} MiB; "
                  f"{load}", flush=True)
    missed = [f"{r:.2f}x" for r in ratios if r > bar]
    print(f"ratios doctor/floor: {', '.join(f'{r:.2f}x' for r in ratios)} (bar <= {bar:.2f}x each) "
          f"on {per_pod:,.0f}-byte pods ({shape})")
    print(f"doctor peak RSS:     {max(rss):.0f} MiB (bar <= {RSS_BAR_MIB} MiB); now {_load()}")
    return 0 if not missed and max(rss) <= RSS_BAR_MIB else 1


if __name__ == "__main__":
    raise SystemExit(main())
