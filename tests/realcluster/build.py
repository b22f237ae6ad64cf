"""Build kube-apiserver, etcd, krew and promtool from their Go modules, and cache the binaries by version.

Each Go module of ours lives in `modules/<name>/` (go.mod and go.sum are committed; `gen-module`
regenerates them). k8s.io/kubernetes requires its staging modules at v0.0.0 and points them at
./staging with replace directives that only its own build sees, so our go.mod carries a generated
replace block mapping each staging module to its published v0.<minor>.<patch>. Binaries land in
`~/.cache/kubectl-win-test/<binary>-<version>/` (override with KUBECTL_WIN_TEST_CACHE) and are built
only when missing.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MODULES = Path(__file__).resolve().parent / "modules"
APISERVER = "k8s.io/kubernetes/cmd/kube-apiserver"
ETCD = "go.etcd.io/etcd/server/v3"
# Only for the ValidatingAdmissionPolicy status controller (the policy's type checking); a component of its
# own (kcm-<minor>, built from the k8s-<minor> module) so a cluster starts without it.
CONTROLLER_MANAGER = "k8s.io/kubernetes/cmd/kube-controller-manager"
KREW = "sigs.k8s.io/krew/cmd/krew"
KREW_VALIDATE = "sigs.k8s.io/krew/cmd/validate-krew-manifest"
# The reference container registry (tests of `kubectl win images`) and crane (the bench's anchor).
REGISTRY_MODULE = "github.com/distribution/distribution/v3"
REGISTRY = f"{REGISTRY_MODULE}/cmd/registry"
CRANE_MODULE = "github.com/google/go-containerregistry"
CRANE = f"{CRANE_MODULE}/cmd/crane"
# Prometheus's promtool: checks and unit-tests the PrometheusRule that `scaffold monitor` writes.
PROMETHEUS_MODULE = "github.com/prometheus/prometheus"
PROMTOOL = f"{PROMETHEUS_MODULE}/cmd/promtool"
# The prometheus-operator module whose CRDs (example/prometheus-operator-crd/) the ServiceMonitor and
# PrometheusRule of `scaffold monitor` are checked against; read from the Go module cache at test time.
PROMETHEUS_OPERATOR = ("github.com/prometheus-operator/prometheus-operator", "v0.85.0")
# The Kubernetes minors the suite runs against: the newest served 1.37.x and a 1.34.x.
KUBERNETES_MINORS = ("1.37", "1.34")


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class Tool:
    binary: str
    package: str
    module: str  # the module whose version names the cache directory

    def ldflags(self, version: str) -> list[str]:
        if self.package not in (APISERVER, CONTROLLER_MANAGER):
            return []
        # What hack/lib/version.sh stamps, so /version and --version report the release, not v0.0.0-master.
        major, minor = version.lstrip("v").split(".")[:2]
        values = {"gitVersion": version, "gitMajor": major, "gitMinor": minor, "gitTreeState": "clean",
                  "buildDate": "1970-01-01T00:00:00Z"}
        return [f"-X {pkg}.{key}={value}" for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
                for key, value in values.items()]


COMPONENTS: dict[str, tuple[Tool, ...]] = {
    **{f"k8s-{minor}": (Tool("kube-apiserver", APISERVER, "k8s.io/kubernetes"), Tool("etcd", ETCD, ETCD))
       for minor in KUBERNETES_MINORS},
    **{f"kcm-{minor}": (Tool("kube-controller-manager", CONTROLLER_MANAGER, "k8s.io/kubernetes"),)
       for minor in KUBERNETES_MINORS},
    "krew": (Tool("krew", KREW, "sigs.k8s.io/krew"), Tool("validate-krew-manifest", KREW_VALIDATE, "sigs.k8s.io/krew")),
    "registry": (Tool("registry", REGISTRY, REGISTRY_MODULE),),
    "crane": (Tool("crane", CRANE, CRANE_MODULE),),
    "promtool": (Tool("promtool", PROMTOOL, PROMETHEUS_MODULE),),
}
# Go modules whose newest release (of the given major prefix) a plain `gen-module` pins, with their tools.
PLAIN_MODULES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "krew": ("sigs.k8s.io/krew", "v0.", (KREW, KREW_VALIDATE)),
    "registry": (REGISTRY_MODULE, "v3.", (REGISTRY,)),
    "crane": (CRANE_MODULE, "v0.", (CRANE,)),
    # Prometheus 3.x is published as v0.3xx.y (the v2/v3 tags are not Go-module versions).
    "promtool": (PROMETHEUS_MODULE, "v0.", (PROMTOOL,)),
}


def cache_root() -> Path:
    if os.environ.get("KUBECTL_WIN_TEST_CACHE"):
        return Path(os.environ["KUBECTL_WIN_TEST_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectl-win-test"


def go_binary() -> str | None:
    """The Go toolchain: $GO, then `go` on PATH, then the standard /usr/local/go install."""
    for candidate in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def module_folder(component: str) -> Path:
    """modules/<name>/ of a component (kcm-<minor> is built from the k8s-<minor> module)."""
    return MODULES / (component.replace("kcm-", "k8s-", 1) if component.startswith("kcm-") else component)


def module_versions(component: str) -> dict[str, str]:
    """Module path -> version from the committed go.mod (require lines), read without Go."""
    text = (module_folder(component) / "go.mod").read_text()
    return dict(re.findall(r"^\s*(?:require\s+)?([\w./-]+)\s+(v[\w.+-]+)(?:\s*//.*)?$", text, re.M))


def binary_path(component: str, binary: str) -> Path:
    (tool,) = [t for t in COMPONENTS[component] if t.binary == binary]
    version = module_versions(component)[tool.module]
    return cache_root() / f"{binary}-{version}" / binary


def missing(component: str) -> list[Tool]:
    return [t for t in COMPONENTS[component] if not binary_path(component, t.binary).is_file()]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One build at a time per cache (two test processes must not build the same binary twice)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    # Static binaries, as upstream builds them; no C toolchain needed.
    env.setdefault("CGO_ENABLED", "0")
    return env


def build(component: str, log=sys.stderr) -> dict[str, Path]:  # noqa: ANN001 - a text stream
    """Build the component's binaries that are not cached yet; return binary name -> path."""
    if component not in COMPONENTS:
        raise BuildError(f"unknown component {component!r} (known: {', '.join(COMPONENTS)})")
    paths = {t.binary: binary_path(component, t.binary) for t in COMPONENTS[component]}
    if not missing(component):
        return paths
    go = go_binary()
    if go is None:
        raise BuildError("Go is not installed (looked at $GO, PATH and /usr/local/go/bin/go)")
    with _locked(cache_root() / ".build.lock"):
        for tool in missing(component):
            target = paths[tool.binary]
            version = module_versions(component)[tool.module]
            target.parent.mkdir(parents=True, exist_ok=True)
            flags = " ".join(["-s", "-w", *tool.ldflags(version)])
            partial = target.with_name(f".{tool.binary}.partial")
            cmd = [go, "build", "-trimpath", "-tags=selinux,notest,grpcnotrace", f"-ldflags={flags}",
                   "-o", str(partial), tool.package]
            print(f"building {tool.binary} {version} ({tool.package})", file=log, flush=True)
            started = time.monotonic()
            result = subprocess.run(cmd, cwd=module_folder(component), env=_go_env(), capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError(f"go build {tool.package} failed:\n{result.stderr[-4000:]}")
            partial.rename(target)
            print(f"built {target} in {time.monotonic() - started:.0f}s", file=log, flush=True)
    return paths


def module_dir(module: str, version: str) -> Path:
    """A module's source in the Go module cache (`go mod download`, which fetches it when missing)."""
    go = go_binary()
    if go is None:
        raise BuildError("Go is not installed (looked at $GO, PATH and /usr/local/go/bin/go)")
    with tempfile.TemporaryDirectory() as tmp:
        info = _run([go, "mod", "download", "-json", f"{module}@{version}"], Path(tmp))
    found = re.search(r'"Dir":\s*"([^"]+)"', info)
    if not found:
        raise BuildError(f"go mod download {module}@{version} gave no directory:\n{info[-2000:]}")
    return Path(found.group(1))


def _run(cmd: list[str], cwd: Path) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=_go_env(), capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{result.stderr[-4000:]}")
    return result.stdout


def _newest(go: str, module: str, prefix: str, cwd: Path) -> str:
    versions = _run([go, "list", "-m", "-versions", module], cwd).split()[1:]
    matching = [v for v in versions if v.startswith(prefix) and "-" not in v]
    if not matching:
        raise BuildError(f"no {module} version starting with {prefix} is served")
    return max(matching, key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))


def generate_module(component: str) -> Path:
    """Write modules/<component>/go.mod and go.sum for the newest served patch release.

    For Kubernetes the staging module list is read from the .mod file the proxy serves for
    k8s.io/kubernetes itself (it keeps the upstream replace block), and each staging module is
    replaced with its published v0.<minor>.<patch>."""
    go = go_binary()
    if go is None:
        raise BuildError("Go is not installed")
    target = MODULES / component
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _run([go, "mod", "init", f"kubectl-win.test/{component}"], work)
        if component in PLAIN_MODULES:
            module, prefix, tools = PLAIN_MODULES[component]
            version = _newest(go, module, prefix, work)
            _run([go, "mod", "edit", f"-require={module}@{version}", *[f"-tool={t}" for t in tools]], work)
        else:
            minor = component.removeprefix("k8s-")
            version = _newest(go, "k8s.io/kubernetes", f"v{minor}.", work)
            staging = "v0." + version.removeprefix("v1.")
            info = _run([go, "mod", "download", "-json", f"k8s.io/kubernetes@{version}"], work)
            upstream = Path(re.search(r'"GoMod":\s*"([^"]+)"', info).group(1)).read_text()
            names = sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/", upstream, re.M)))
            if not names:
                raise BuildError(f"no staging replace block in k8s.io/kubernetes@{version}'s go.mod")
            _run([go, "mod", "edit", *[f"-replace={n}={n}@{staging}" for n in names],
                  f"-require=k8s.io/kubernetes@{version}", f"-tool={APISERVER}", f"-tool={ETCD}",
                  f"-tool={CONTROLLER_MANAGER}"], work)
        _run([go, "mod", "tidy"], work)
        target.mkdir(parents=True, exist_ok=True)
        header = (f"// Generated by `python -m tests.realcluster gen-module {component}` on "
                  f"{dt.date.today().isoformat()}; builds test binaries only.\n")
        (target / "go.mod").write_text(header + (work / "go.mod").read_text())
        shutil.copy(work / "go.sum", target / "go.sum")
    return target
