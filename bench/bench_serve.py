"""serve's memory over many scans of a large cluster: flat, because only the figures are kept between scans.

    python bench/bench_serve.py [--nodes 5000] [--pods 50000] [--windows 0.2] [--scans 20]

The test API server runs in its own process with the synthetic cluster (objects shaped as a real
kube-apiserver returns them; --small serves the bare objects). One `doctor -o openmetrics` run
times a scan (T); `kubectl win serve` then runs in another process with --interval 1.5 T, so that each
scan is published before the next starts. Each time /metrics shows a new scan (kubectl_win_scans_total),
the serve process's resident set size is read from /proc, between two scans. /metrics is polled over one
kept-alive connection, as Prometheus does. Prints the RSS after scan 1 (the anchor) and after the last scan,
their ratio (bar: <= 1.05x; 1.10x with --small) and the peak, and exits 1 when the bar is missed.
After the last scan, a burst of `--burst` scrapes (default 200) is sent at once, each on its own connection
with a 30 s timeout (a usual Prometheus scrape_timeout): prints how many were answered 200 (bar: all) and the
99th percentile of their latency as a multiple of one scrape on a quiet server, measured just before.
Linux only (/proc).
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.apiserver.process import spawn  # noqa: E402

RATIO_BAR = 1.05  # realistic objects
SMALL_RATIO_BAR = 1.10
COUNT = "kubectl_win_scans_total"
SCRAPE_TIMEOUT = 30.0


def scrape_seconds(host: str, port: int) -> float | None:
    """One scrape on a connection of its own; its latency, or None when it was not answered 200 in time."""
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=SCRAPE_TIMEOUT)
    try:
        connection.request("GET", "/metrics", headers={"Accept": "application/openmetrics-text"})
        answer = connection.getresponse()
        answer.read()
        return time.monotonic() - started if answer.status == 200 else None
    except OSError:
        return None
    finally:
        connection.close()


def burst(host: str, port: int, count: int) -> tuple[int, float, float]:
    """(answered, p99 seconds, one quiet scrape's seconds) for `count` scrapes sent at once."""
    from concurrent.futures import ThreadPoolExecutor

    quiet = min(s for s in (scrape_seconds(host, port) for _ in range(5)) if s is not None)
    with ThreadPoolExecutor(count) as pool:
        results = list(pool.map(lambda _: scrape_seconds(host, port), range(count)))
    answered = sorted(r for r in results if r is not None)
    p99 = answered[max(0, int(len(answered) * 0.99) - 1)] if answered else float("inf")
    return len(answered), p99, quiet


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for process {pid}")


def scans(connection: http.client.HTTPConnection) -> int:
    """Scans so far, from /metrics over one kept-alive connection (as Prometheus scrapes)."""
    try:
        connection.request("GET", "/metrics")
        answer = connection.getresponse()
        body = answer.read().decode()
    except OSError:
        connection.close()  # reconnects on the next request
        return 0
    if answer.status != 200:  # 503 before the first scan
        return 0
    return next((int(float(line.split()[-1])) for line in body.splitlines() if line.startswith(COUNT + "{")), 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--windows", type=float, default=0.2)
    parser.add_argument("--scans", type=int, default=20)
    parser.add_argument("--small", action="store_true",
                        help="serve the bare objects (about 1 KB a pod) rather than a real server's (about 5 KB)")
    parser.add_argument("--burst", type=int, default=200, help="scrapes sent at once after the last scan (0: none)")
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        print("needs /proc (Linux) to read the serve process's RSS", file=sys.stderr)
        return 2

    print(f"generating {args.nodes} nodes ({args.windows:.0%} Windows) and {args.pods} pods ...", flush=True)
    spec = f"nodes={args.nodes},pods={args.pods},windows={args.windows},shape={'small' if args.small else 'realistic'}"
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp, spawn("--synthetic", spec, timeout=1800) as server:
        env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), HOME=tmp, PYTHONPATH=str(REPO))
        print(f"server ready: {server.counts}", flush=True)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "kubectl_win", "doctor", "-o", "openmetrics"], env=env, cwd=REPO,
                       stdout=subprocess.DEVNULL, check=False)
        interval = max(1.0, 1.5 * (time.monotonic() - started))
        print(f"one doctor scan: {interval / 1.5:.1f} s; serve --interval {interval:.1f}s", flush=True)
        serve = subprocess.Popen([sys.executable, "-m", "kubectl_win", "serve", "--listen", "127.0.0.1:0",
                                  "--interval", f"{interval:.1f}s", "--request-timeout", "120"],
                                 env=env, cwd=REPO, stderr=subprocess.PIPE, text=True)
        try:
            assert serve.stderr is not None
            first = serve.stderr.readline()
            if not first.startswith("serving "):
                print(f"serve did not start: {first}{serve.stderr.read()}", file=sys.stderr)
                return 2
            host, port = first.split()[1].removeprefix("http://").split("/")[0].rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=60)
            rss: dict[int, float] = {}  # scan number -> RSS once it was published
            bursts: tuple[int, float, float] | None = None
            started = time.monotonic()
            while not rss or max(rss) < args.scans:
                done = scans(connection)
                if done and done not in rss:
                    rss[done] = rss_mib(serve.pid)
                    print(f"scan {done:2d}: RSS {rss[done]:6.0f} MiB ({time.monotonic() - started:.0f} s)", flush=True)
                elif serve.poll() is not None:
                    print(f"serve exited with {serve.returncode}", file=sys.stderr)
                    return 2
                time.sleep(0.05)
            peak = rss_mib(serve.pid, "VmHWM")
            if args.burst:  # after the memory figures, so that the burst's threads do not enter them
                bursts = burst(host, int(port), args.burst)
                print(f"burst of {args.burst} scrapes at once: {bursts[0]}/{args.burst} answered, p99 "
                      f"{bursts[1]:.2f} s ({bursts[1] / bursts[2]:.0f}x one quiet scrape of "
                      f"{bursts[2] * 1000:.0f} ms)", flush=True)
        finally:
            serve.terminate()
            serve.wait(60)
    first, last = min(rss), max(rss)
    ratio = rss[last] / rss[first]
    print(f"RSS after scan {first}:  {rss[first]:.0f} MiB (anchor)")
    print(f"RSS after scan {last}: {rss[last]:.0f} MiB")
    bar = SMALL_RATIO_BAR if args.small else RATIO_BAR
    print(f"ratio scan {last}/scan {first}: {ratio:.2f}x (bar <= {bar:.2f}x; "
          f"{'small' if args.small else 'realistic'} objects); peak RSS {peak:.0f} MiB; load {os.getloadavg()[0]:.2f}")
    if bursts is not None:
        print(f"burst: {bursts[0]}/{args.burst} answered (bar: all), p99 {bursts[1]:.2f} s")
    return 0 if ratio <= bar and (bursts is None or bursts[0] == args.burst) else 1


if __name__ == "__main__":
    raise SystemExit(main())
