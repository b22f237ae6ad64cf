"""doctor over a fleet in one run vs once per context in a shell loop.

    python bench/bench_fleet.py [--clusters 8] [--nodes 500] [--pods 15000] [--parallel 4] [--repeat 3]
                                [--latency SECONDS]

Each stand-in cluster is its own test API server process on loopback (a generated cluster, a different seed
each, its objects shaped as a real kube-apiserver returns them; --small serves the bare objects); one
kubeconfig holds a context per cluster. Measured in the same run: one cluster's single run (`kubectl-win
doctor --context c0`, the memory anchor), a shell loop of `kubectl-win doctor --context cN` for every context
(the time anchor), and `kubectl-win doctor --all-contexts --parallel 4`. Peak RSS is that of the whole process
tree, sampled, so worker processes or threads cannot hide memory. Prints both ratios and exits 1 when a bar
is missed: time <= 0.35x the loop's (0.5x with --small), peak RSS <= 1.5x the single run's. `--latency`
delays every list page, as a remote control plane would; the bars are for loopback (no latency).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.apiserver.process import spawn  # noqa: E402

TIME_BAR = 0.35  # realistic objects
SMALL_TIME_BAR = 0.5
RSS_BAR = 1.5
SAMPLE_SECONDS = 0.02


def tree_rss_mib(pid: int) -> float:
    """The resident memory of pid and all its descendants (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/status") as status:
                total += next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except OSError:
            continue
    return total / 1024


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak tree RSS in MiB) of one command, its stdout discarded; exit 0 or 1 expected."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            peak[0] = max(peak[0], tree_rss_mib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(argv[:6])} ... failed with {proc.returncode}: {err.decode()[-1000:]}")
    return wall, peak[0]


def fleet_kubeconfig(servers: list, path: Path) -> list[str]:
    config: dict = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [],
                    "current-context": "c0"}
    for index, server in enumerate(servers):
        own = yaml.safe_load(server.kubeconfig.read_text())
        name = f"c{index}"
        config["clusters"].append({"name": name, "cluster": own["clusters"][0]["cluster"]})
        config["users"].append({"name": name, "user": own["users"][0]["user"]})
        config["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return [context["name"] for context in config["contexts"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=15_000)
    parser.add_argument("--windows", type=float, default=0.2)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--small", action="store_true",
                        help="serve the bare objects (about 1 KB a pod) rather than a real server's (about 5 KB)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for each measurement (default 3)")
    parser.add_argument("--latency", type=float, default=0.0, metavar="SECONDS",
                        help="delay every list request by this much, like a remote control plane (default 0)")
    args = parser.parse_args()

    print(f"starting {args.clusters} test API servers, {args.nodes} nodes and {args.pods} pods each ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp, ExitStack() as stack:
        latency = ["--fault", f"delay:{args.latency}@[?&]limit="] if args.latency else []
        servers = [stack.enter_context(spawn(
            "--synthetic", f"nodes={args.nodes},pods={args.pods},windows={args.windows},seed={index + 1},"
            f"shape={'small' if args.small else 'realistic'}",
            *latency, timeout=600)) for index in range(args.clusters)]
        kubeconfig = Path(tmp) / "config"
        contexts = fleet_kubeconfig(servers, kubeconfig)
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), HOME=tmp, PYTHONPATH=str(REPO))
        env.pop("CI", None)
        doctor = [sys.executable, "-m", "kubectl_win", "doctor", "-o", "json", "--progress", "never"]
        loop = "; ".join(f"{shlex.join(doctor)} --context {c} > /dev/null" for c in contexts) + "; true"
        measure([*doctor, "--context", contexts[0]], env)  # warm the page cache and the servers
        singles, loops, fleets = [], [], []
        for _ in range(args.repeat):
            singles.append(measure([*doctor, "--context", contexts[0]], env))
            loops.append(measure(["sh", "-c", loop], env))
            fleets.append(measure([*doctor, "--all-contexts", "--parallel", str(args.parallel)], env))
    single_rss = min(rss for _, rss in singles)
    loop_time = min(wall for wall, _ in loops)
    fleet_time, fleet_rss = min(wall for wall, _ in fleets), min(rss for _, rss in fleets)
    time_ratio, rss_ratio = fleet_time / loop_time, fleet_rss / single_rss
    time_bar = SMALL_TIME_BAR if args.small else TIME_BAR
    print(f"one cluster, single run:               {min(w for w, _ in singles):.2f}s, peak RSS {single_rss:.0f} MiB")
    print(f"shell loop, {args.clusters} runs:                  {loop_time:.2f}s")
    print(f"--all-contexts --parallel {args.parallel}:          {fleet_time:.2f}s, peak RSS {fleet_rss:.0f} MiB")
    print(f"time ratio fleet/loop:                 {time_ratio:.2f}x (bar <= {time_bar}x; "
          f"{'small' if args.small else 'realistic'} objects)")
    print(f"peak RSS ratio fleet/one cluster:      {rss_ratio:.2f}x (bar <= {RSS_BAR}x)")
    return 0 if time_ratio <= time_bar and rss_ratio <= RSS_BAR else 1


if __name__ == "__main__":
    raise SystemExit(main())
