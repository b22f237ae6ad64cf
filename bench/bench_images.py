"""Resolving many distinct images: the registry client vs a `crane manifest` loop vs a bare-client floor.

    python bench/bench_images.py [--images 300] [--repos 6] [--concurrency 8] [--repeat 3]

The reference registry (built by `python -m tests.realcluster build --registry`) runs on loopback with TLS;
the bench pushes `--images` distinct OCI indexes (Windows entries at three builds and a Linux one) across
`--repos` repositories. Timed in the same run:
- anchor: `crane manifest IMAGE` once per image, one after another (what a script does; crane from
  `python -m tests.realcluster build --crane`);
- floor: the same GET /v2/<repo>/manifests/<tag> requests with the same concurrency from a bare
  http.client pool (kept-alive connections, nothing parsed);
- client: kubectl_win.registry's RegistryClient.resolve_many (parses indexes, drops attestations);
- cli: `kubectl win images IMAGE... --build ltsc2022 -o json` as a child process (start-up included).
Goals: the client at least 10x faster than the crane loop, and within 1.5x of the floor. Best of --repeat.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubectl_win.registry.client import RegistryClient, RegistryOptions  # noqa: E402
from kubectl_win.registry.credentials import CredentialStore  # noqa: E402
from kubectl_win.registry.media import ACCEPT, OCI_INDEX, OCI_MANIFEST  # noqa: E402
from kubectl_win.registry.reference import parse_reference  # noqa: E402
from tests.realcluster.build import binary_path  # noqa: E402
from tests.registry.server import RegistryServer  # noqa: E402

BUILDS = ("10.0.17763.6054", "10.0.20348.2582", "10.0.26100.1742")


def _fake_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def seed(registry: RegistryServer, images: int, repos: int) -> list[str]:
    """Distinct indexes (children are not stored: index validation is off), pushed 16 at a time."""
    def push(i: int) -> str:
        repo, tag = f"bench/app{i % repos}", f"v{i}"
        entries = [{"mediaType": OCI_MANIFEST, "size": 500, "digest": _fake_digest(f"{i}-{b}"),
                    "platform": {"os": "windows", "architecture": "amd64", "os.version": b}} for b in BUILDS]
        entries.append({"mediaType": OCI_MANIFEST, "size": 500, "digest": _fake_digest(f"{i}-linux"),
                        "platform": {"os": "linux", "architecture": "amd64"}})
        registry.push_manifest(repo, tag, {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries},
                               OCI_INDEX)
        return f"{registry.host}/{repo}:{tag}"

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(push, range(images)))


def crane_loop(crane: str, refs: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    for ref in refs:
        subprocess.run([crane, "manifest", ref], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def floor(registry: RegistryServer, refs: list[str], concurrency: int) -> float:
    """The same requests from a bare pool of kept-alive connections, one per worker thread, verifying TLS the
    same way (the system store plus the registry's CA)."""
    local = threading.local()
    started = time.perf_counter()
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=str(registry.ca_cert))

    def get(ref: str) -> int:
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPSConnection("localhost", registry.port, context=context)
        path = ref.split("/", 1)[1]
        repo, tag = path.rsplit(":", 1)
        connection.request("GET", f"/v2/{repo}/manifests/{tag}", headers={"Accept": ACCEPT})
        response = connection.getresponse()
        response.read()
        return response.status

    with ThreadPoolExecutor(concurrency) as pool:
        statuses = list(pool.map(get, refs))
    elapsed = time.perf_counter() - started
    assert set(statuses) == {200}, set(statuses)
    return elapsed


def client(registry: RegistryServer, refs: list[str], concurrency: int) -> float:
    parsed = [parse_reference(r) for r in refs]
    started = time.perf_counter()
    with RegistryClient(RegistryOptions(ca_files=(str(registry.ca_cert),), per_registry=concurrency),
                        CredentialStore()) as registry_client:
        results = registry_client.resolve_many(parsed)
    elapsed = time.perf_counter() - started
    assert all(r.error is None and len(r.platforms) == 4 for r in results), next(r.error for r in results if r.error)
    return elapsed


def cli(registry: RegistryServer, refs: list[str], concurrency: int, env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "kubectl_win", "images", *refs, "--build", "ltsc2022",
                          "--registry-ca", str(registry.ca_cert), "--concurrency", str(concurrency), "-o", "json"],
                         env=env, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    verdicts = [v["verdict"] for i in json.loads(out.stdout)["images"] for v in i["verdicts"]]
    assert verdicts == ["runs"] * len(refs), out.stderr[-500:]
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--repos", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    crane = binary_path("crane", "crane")
    if not crane.is_file() or not binary_path("registry", "registry").is_file():
        print("build first: python -m tests.realcluster build --registry --crane", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, RegistryServer(Path(tmp) / "registry", auth="none") as registry:
        refs = seed(registry, args.images, args.repos)
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env.update({"SSL_CERT_FILE": str(registry.ca_cert), "DOCKER_CONFIG": str(Path(tmp) / "docker"),
                    "HOME": tmp})
        times: dict[str, list[float]] = {"crane loop": [], "floor": [], "client": [], "cli": []}
        for _ in range(args.repeat):
            times["floor"].append(floor(registry, refs, args.concurrency))
            times["client"].append(client(registry, refs, args.concurrency))
            times["cli"].append(cli(registry, refs, args.concurrency, env))
            times["crane loop"].append(crane_loop(str(crane), refs, env))
        best = {name: min(values) for name, values in times.items()}
    print(f"{args.images} images in {args.repos} repositories, concurrency {args.concurrency}, "
          f"best of {args.repeat}")
    for name, seconds in best.items():
        print(f"  {name:<11} {seconds:8.3f} s")
    print(f"crane loop / client : {best['crane loop'] / best['client']:6.1f}x   (goal >= 10x)")
    print(f"crane loop / cli    : {best['crane loop'] / best['cli']:6.1f}x")
    print(f"client / floor      : {best['client'] / best['floor']:6.2f}x   (goal <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
