"""Start the test API server in a separate process (benchmarks: the server must not share a CPU-bound
interpreter with the client being measured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ServerProcess:
    process: subprocess.Popen
    url: str
    kubeconfig: Path
    counts: dict
    workdir: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn(*args: str, timeout: float = 300.0, workdir: str | Path | None = None) -> ServerProcess:
    """`spawn("--synthetic", "nodes=5000,pods=150000")`: returns once the server answers."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="kubectl-win-apiserver-"))
    ready = workdir / "ready.json"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--workdir", str(workdir),
                             "--ready-file", str(ready), *args],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"test API server exited with {proc.returncode}: {err.strip()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError("test API server did not become ready")
        time.sleep(0.05)
    info = json.loads(ready.read_text())
    return ServerProcess(proc, info["url"], Path(info["kubeconfig"]), info.get("counts", {}), workdir)
