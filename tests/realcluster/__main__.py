"""python -m tests.realcluster build [--version 1.37] [--krew] [--registry] [--crane] [--promtool]
| up --version 1.37 --dir DIR | gen-module NAME"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from tests.realcluster import build as builder
from tests.realcluster.cluster import RealCluster, StartError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.realcluster", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build missing binaries (all the tests need without options)")
    b.add_argument("--version", action="append", choices=builder.KUBERNETES_MINORS, help="Kubernetes minor")
    b.add_argument("--krew", action="store_true", help="krew and validate-krew-manifest")
    b.add_argument("--registry", action="store_true", help="the reference container registry (distribution)")
    b.add_argument("--promtool", action="store_true", help="Prometheus's promtool (rule checks and rule unit tests)")
    b.add_argument("--crane", action="store_true", help="crane (go-containerregistry), the images bench's anchor")
    u = sub.add_parser("up", help="run etcd + kube-apiserver until SIGINT/SIGTERM")
    u.add_argument("--version", required=True, choices=builder.KUBERNETES_MINORS)
    u.add_argument("--dir", required=True, type=Path, help="state directory; DIR/kubeconfig is written")
    g = sub.add_parser("gen-module", help="regenerate modules/NAME/go.mod for the newest served patch")
    g.add_argument("name", choices=sorted(c for c in builder.COMPONENTS if not c.startswith("kcm-")))
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            components = [f"{kind}-{v}" for v in args.version or () for kind in ("k8s", "kcm")]
            components += ["krew"] if args.krew else []
            components += [name for name in ("registry", "crane", "promtool") if getattr(args, name)]
            # Without options: what the tests need (crane is for bench/bench_images.py only: --crane).
            for component in components or [c for c in builder.COMPONENTS if c != "crane"]:
                for path in builder.build(component).values():
                    print(path)
            return 0
        if args.command == "gen-module":
            print(builder.generate_module(args.name) / "go.mod")
            return 0
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        with RealCluster(args.version, args.dir.resolve()) as cluster:
            print(cluster.kubeconfig, flush=True)
            print(f"kube-apiserver {cluster.version} at {cluster.url}", file=sys.stderr, flush=True)
            stop.wait()
        return 0
    except (builder.BuildError, StartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
