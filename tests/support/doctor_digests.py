"""The doctor outputs that a move of doctor's modules must leave byte for byte as they were.

Cases: the bundled sample dump, the same with hostile names, and synthetic clusters of the test API server's
generator (several seeds and Windows shares, the bare objects; and one cluster dressed as a real server returns
it, `shape=realistic`) written as dumps; and two of those clusters served by the test API server and read
live, page by page, the way doctor reads a cluster (LIVE). Each is run in process as `doctor -o json`,
`-o wide`, `doctor nodes -o json` and `doctor workloads -A -o yaml`; the sha256 of each output is compared
with `tests/golden/doctor-outputs.sha256`, recorded once with the code before the move
(`python -m tests.support.doctor_digests --record`).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from tests.apiserver.store import Store
from tests.support.cli import run_cli
from tests.support.html_reports import hostile_dump
from tests.support.paths import GOLDEN, SAMPLE_DUMP

DIGESTS = GOLDEN / "doctor-outputs.sha256"
SYNTHETIC = (
    ("nodes=40,pods=1200,windows=0.5,seed=1"),
    ("nodes=120,pods=3000,windows=0.2,seed=2"),
    ("nodes=60,pods=2400,windows=0.8,seed=3"),
    ("nodes=80,pods=2400,windows=0.3,seed=4,shape=realistic"),
)
LIVE = ("nodes=40,pods=1200,windows=0.5,seed=1", "nodes=80,pods=2400,windows=0.3,seed=4,shape=realistic")
RUNS = (("-o", "json"), ("-o", "wide"), ("nodes", "-o", "json"), ("workloads", "-A", "-o", "yaml"))


def synthetic_store(spec_text: str) -> Store:
    from tests.apiserver.__main__ import parse_synthetic
    from tests.apiserver.synthetic import generate

    store = Store()
    spec = parse_synthetic(spec_text)
    if "shape=" not in spec_text:  # the cases recorded before the generator dressed its objects
        spec = replace(spec, realistic=False)
    generate(store, spec)
    return store


def synthetic_dump(spec_text: str, folder: Path) -> Path:
    from tests.apiserver.resources import RESOURCES

    store = synthetic_store(spec_text)
    items = [obj for resource in RESOURCES for obj in store.objects(resource)]
    path = folder / (spec_text.replace(",", "_").replace("=", "-") + ".json")
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


def cases(folder: Path) -> Iterator[tuple[str, Path]]:
    yield "sample", SAMPLE_DUMP
    yield "hostile", hostile_dump(folder)
    for spec in SYNTHETIC:
        yield spec, synthetic_dump(spec, folder)


def digests() -> dict[str, str]:
    from tests.apiserver.server import ApiServer

    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, dump in cases(Path(tmp)):
            for args in RUNS:
                result = run_cli("doctor", "--from-dump", str(dump), *args)
                assert result.exit_code in (0, 1), (name, args, result.stderr)
                out[f"{name}: doctor {' '.join(args)}"] = hashlib.sha256(result.stdout.encode()).hexdigest()
        for spec in LIVE:
            with ApiServer(token=None, workdir=Path(tmp) / "server", store=synthetic_store(spec)) as server:
                kubeconfig = str(server.write_kubeconfig())
                for args in RUNS:
                    result = run_cli("doctor", "--kubeconfig", kubeconfig, "--progress", "never", *args)
                    assert result.exit_code in (0, 1), (spec, args, result.stderr)
                    out[f"live {spec}: doctor {' '.join(args)}"] = hashlib.sha256(result.stdout.encode()).hexdigest()
                saved = Path(tmp) / "saved.json"
                result = run_cli("doctor", "--kubeconfig", kubeconfig, "--progress", "never", "-o", "json",
                                 "--save-dump", str(saved), "--force")
                assert result.exit_code in (0, 1), (spec, result.stderr)
                out[f"live {spec}: doctor --save-dump"] = hashlib.sha256(saved.read_bytes()).hexdigest()
    return out


def recorded() -> dict[str, str]:
    lines = DIGESTS.read_text(encoding="utf-8").splitlines()
    return dict(reversed(line.split("  ", 1)) for line in lines if line.strip())


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        DIGESTS.write_text("".join(f"{digest}  {name}\n" for name, digest in digests().items()), encoding="utf-8")
    else:
        print(json.dumps(digests(), indent=2))
