"""Run the test API server as a process.

    python -m tests.apiserver --port 0 --seed DIR [--synthetic nodes=5000,pods=150000,windows=0.2,seed=1]
                              [--http] [--token T] [--kubeconfig PATH] [--fault SPEC]... [--ready-file PATH]

Prints the URL on the first line of stdout and `kubeconfig: PATH` on the second, then serves
until interrupted. Default: HTTPS with a generated CA and a bearer token (kubectl sends tokens
only over TLS); --http serves plain HTTP without authentication.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from tests.apiserver.faults import FaultInjector
from tests.apiserver.seed import seed
from tests.apiserver.server import DEFAULT_TOKEN, ApiServer
from tests.apiserver.synthetic import SyntheticSpec, generate


def parse_synthetic(text: str) -> SyntheticSpec:
    names = {"nodes": ("nodes", int), "pods": ("pods", int), "windows": ("windows_share", float),
             "windows_share": ("windows_share", float), "services": ("services", int), "events": ("events", int),
             "namespaces": ("namespaces", int), "seed": ("seed", int)}
    kw: dict[str, object] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key == "shape":
            if value not in ("realistic", "small"):
                raise argparse.ArgumentTypeError(f"unknown shape {value!r} (known: realistic, small)")
            kw["realistic"] = value == "realistic"
            continue
        if key not in names:
            raise argparse.ArgumentTypeError(f"unknown synthetic option {key!r} (known: {', '.join(names)}, shape)")
        field, kind = names[key]
        kw[field] = kind(value)
    return SyntheticSpec(**kw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.apiserver", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--seed", action="append", default=[], metavar="PATH",
                        help="YAML/JSON file or directory to load (repeatable)")
    parser.add_argument("--synthetic", type=parse_synthetic, metavar="SPEC",
                        help="generate a cluster, e.g. nodes=5000,pods=150000,windows=0.2,seed=1 "
                             "(shape=small: bare objects rather than a real server's)")
    parser.add_argument("--http", action="store_true", help="plain HTTP without authentication")
    parser.add_argument("--token", default=DEFAULT_TOKEN, help="bearer token to accept (HTTPS mode)")
    parser.add_argument("--server-version", default="v1.32.0", help="gitVersion reported by /version")
    parser.add_argument("--kubeconfig", type=Path, help="where to write the kubeconfig (default: in the workdir)")
    parser.add_argument("--workdir", type=Path, help="directory for the PKI and kubeconfig (default: a temp dir)")
    parser.add_argument("--fault", action="append", default=[], metavar="SPEC",
                        help="ACTION[:ARG][:count=N][:method=M]@PATH_REGEX, e.g. status:429:count=2@^/api/v1/pods")
    parser.add_argument("--ready-file", type=Path, help="write {url, kubeconfig, pid, counts} as JSON when ready")
    args = parser.parse_args(argv)

    server = ApiServer(token=None if args.http else args.token, tls=not args.http, workdir=args.workdir,
                       git_version=args.server_version, host=args.host, port=args.port)
    counts: dict[str, int] = {}
    for path in args.seed:
        loaded, skipped = seed(server.store, path)
        counts["seeded"] = counts.get("seeded", 0) + loaded
        for line in skipped:
            print(f"skipped: {line}", file=sys.stderr)
    if args.synthetic:
        counts.update(generate(server.store, args.synthetic))
    for spec in args.fault:
        server.faults.add(**FaultInjector.parse_spec(spec))
    server.start()
    kubeconfig = server.write_kubeconfig(args.kubeconfig)
    print(server.url)
    print(f"kubeconfig: {kubeconfig}", flush=True)
    if args.ready_file:
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"url": server.url, "kubeconfig": str(kubeconfig), "pid": os.getpid(),
                                   "counts": counts}))
        tmp.replace(args.ready_file)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
