"""`kubectl win collect`: a HostProcess pod per node runs the collection script; the bundle is built here.

Nodes are visited `parallel` at a time in worker threads. Per node, through kube.hostprocess (the pod life
cycle hns and doctor --deep share): sweep pods of ours a dead run left, create the pod (pinned, image
matching the node's build), wait for it; then run the script over exec with its parameters on stdin, stream
its stdout (a tar.gz) into memory up to the node's size cap, with a watchdog that ends the exec when the
node's time budget is spent, and delete the pod. The pods that exist are registered, so Ctrl-C, SIGTERM or
a closed console (SIGHUP) deletes them from the main thread. A failing node costs only its own part of the
bundle: bundle.json says what went wrong there.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

from kubectl_win import redact
from kubectl_win.collect import bundle as bundles
from kubectl_win.collect import script
from kubectl_win.errors import KubectlWinError, UsageError
from kubectl_win.knowledge import load

APP = "kubectl-win-collect"
GZIP_MAGIC = b"\x1f\x8b\x08"
STREAM_GRACE = 30.0  # past the node's budget: tar and the transfer itself (less for a short budget)


def archive_limit(cap_bytes: int) -> int:
    """What a node may send: its files (at most the cap; gzip only shrinks them) plus tar's headers."""
    return cap_bytes + max(1 << 20, cap_bytes // 16)


def grace(budget: float) -> float:
    return min(STREAM_GRACE, max(2.0, budget))


@dataclass
class CollectOptions:
    output: str
    nodes: list[str] = field(default_factory=list)
    all_windows: bool = False
    selector: str | None = None
    force: bool = False
    namespace: str = "kube-system"
    image: str | None = None
    parallel: int = 4
    log_bytes: int = 20 << 20
    cap_bytes: int = 200 << 20
    budget: float = 300.0
    timeout: float = 180.0  # for a pod to start
    poll_interval: float = 0.5


@dataclass
class NodeResult:
    node: str
    archive: bytes | None = None
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.archive is not None


@dataclass
class CollectResult:
    path: str
    nodes: dict[str, dict[str, Any]]
    skipped_nodes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[str]:
        return [n for n, e in self.nodes.items() if not e.get("collected")]


def collect(flags: Any, options: CollectOptions, say: Callable[[str], None] | None = None) -> CollectResult:
    """Collect from the chosen nodes into options.output; the pods are gone whatever happens."""
    from kubectl_win.kube import connect

    bundles.check_target(options.output, options.force)
    say = say or (lambda _text: None)
    with connect(flags) as cluster:
        nodes, skipped = choose_nodes(cluster, options)
        with tempfile.TemporaryDirectory(prefix="kubectl-win-collect-") as staging:
            cluster_json = os.path.join(staging, "cluster.json")
            say("reading the cluster for cluster.json")
            _save_cluster(cluster, cluster_json)
            results = collect_nodes(cluster, nodes, options, say)
            with open(cluster_json, "rb") as handle:
                cluster_bytes = handle.read()
    return write_bundle(options, cluster_bytes, results, skipped)


def choose_nodes(cluster: Any, options: CollectOptions) -> tuple[list[dict[str, Any]], list[str]]:
    """The named Windows nodes, every Windows node, or the Windows nodes the selector picks."""
    from kubectl_win.nodelogs.fetch import windows_node
    from kubectl_win.wellknown import node_os

    if options.nodes:
        seen: dict[str, dict[str, Any]] = {}
        for name in options.nodes:
            seen.setdefault(name, windows_node(cluster, name, "collect gathers from Windows nodes", linux_hint=False))
        return list(seen.values()), []
    listed = list(cluster.list("nodes", label_selector=options.selector))
    windows = [n for n in listed if node_os(n) == "windows"]
    others = [str((n.get("metadata") or {}).get("name")) for n in listed if node_os(n) != "windows"]
    if not windows:
        what = f"-l {options.selector}" if options.selector else "the cluster"
        raise UsageError(f"no Windows node in {what}" + (f" (not Windows: {', '.join(others)})" if others else ""))
    windows.sort(key=lambda n: str((n.get("metadata") or {}).get("name")))
    return windows, others if options.selector else []


def _save_cluster(cluster: Any, path: str) -> None:
    """What doctor --save-dump writes, read over the connection already open."""
    from kubectl_win.doctor.build import SnapshotBuilder
    from kubectl_win.doctor.read.api import read_cluster
    from kubectl_win.doctor.read.dump import DumpWriter

    writer = DumpWriter(path)
    builder = SnapshotBuilder(sink=writer.write)
    try:
        read_cluster(cluster, builder, "cluster", None, None)
    except BaseException:
        writer.abort()
        raise
    writer.finish(builder.header())


def collect_nodes(cluster: Any, nodes: list[dict[str, Any]], options: CollectOptions,
                  say: Callable[[str], None]) -> list[NodeResult]:
    from kubectl_win.kube.hostprocess import on_nodes

    pods: set[tuple[str, str]] = set()
    results: dict[str, NodeResult] = {}
    lock = threading.Lock()
    names = [str((n.get("metadata") or {}).get("name")) for n in nodes]
    states: dict[str, str] = dict.fromkeys(names, "waiting")
    fatal: list[KubectlWinError] = []  # the same for every node (Pod Security): the run stops

    def show() -> None:
        done = sum(1 for s in states.values() if s.startswith(("done", "failed")))
        busy = "; ".join(f"{n}: {s}" for n, s in states.items() if not s.startswith(("done", "failed", "waiting")))
        say(f"collect: {done}/{len(names)} nodes done" + (f" ({busy})" if busy else ""))

    def update(name: str, state: str) -> None:
        with lock:
            states[name] = state
            show()

    def work(node: dict[str, Any]) -> None:
        name = str((node.get("metadata") or {}).get("name"))
        try:
            result = collect_node(cluster, node, options, pods, lambda state: update(name, state))
        except PodSecurityRejected as exc:
            fatal.append(exc)
            result = NodeResult(name, errors=[str(exc)])
        except Exception as exc:  # noqa: BLE001 - one node's surprise must not lose the others
            result = NodeResult(name, errors=[f"{type(exc).__name__}: {exc}"])
        with lock:
            results[name] = result
        update(name, "done" if result.ok else "failed")

    def interrupted() -> None:
        say("interrupted: deleting the collection pods")

    try:
        on_nodes(cluster, nodes, work, options.parallel, pods, stop=lambda: bool(fatal), interrupted=interrupted)
    finally:
        say("")
    if fatal:
        raise fatal[0]
    return [results[name] for name in names]


def collect_node(cluster: Any, node: dict[str, Any], options: CollectOptions, pods: set[tuple[str, str]],
                 state: Callable[[str], None]) -> NodeResult:
    """One node: pod up, script run, archive in memory, pod deleted (always)."""
    from kubectl_win.hns.from_node import image_for
    from kubectl_win.kube.hostprocess import PodOptions, running_pod

    name = str((node.get("metadata") or {}).get("name"))
    started = time.monotonic()
    result = NodeResult(name)
    deadline = int(options.timeout + options.budget + grace(options.budget) + 60)
    live = PodOptions(node=name, namespace=options.namespace, image=options.image, timeout=options.timeout,
                      poll_interval=options.poll_interval, app=APP, purpose="collect", deadline=deadline)
    try:
        image = options.image or image_for(node)
    except KubectlWinError as exc:
        result.errors.append(str(exc))
        return result
    try:
        with running_pod(cluster, live, image, pods, state) as pod:
            state("collecting")
            result.archive, result.stderr = run_script(cluster, options, pod, name, state)
    except KubectlWinError as exc:
        if exc.exit_code == 2 and "Pod Security" in str(exc):
            raise PodSecurityRejected(str(exc), 2) from None
        result.errors.append(str(exc))
    finally:
        result.seconds = round(time.monotonic() - started, 1)
    return result


class CollectError(KubectlWinError):
    exit_code = 3


class PodSecurityRejected(KubectlWinError):
    """The namespace does not admit HostProcess pods; the message has the command to proceed."""


def run_script(cluster: Any, options: CollectOptions, pod: str, node: str,
               state: Callable[[str], None]) -> tuple[bytes, str]:
    """Exec the script with its parameters on stdin; (the tar.gz it wrote, its stderr)."""
    from kubectl_win.kube.exec_stream import ExecError, ExecStream, drain, exec_query, target_from_args

    params = script.stdin(script.parameters(options.log_bytes, options.cap_bytes, options.budget))
    path = f"/api/v1/namespaces/{options.namespace}/pods/{pod}/exec"
    target = target_from_args(cluster.websocket_args(path, exec_query(script.command(), "collect", stdin=True)))
    limit = archive_limit(options.cap_bytes)
    timed_out = threading.Event()
    try:
        stream = ExecStream.open(target, connect_timeout=options.timeout, read_timeout=None)
    except ExecError as exc:
        raise CollectError(f"cannot run the collection on {node}: {exc}") from None

    def expire() -> None:
        timed_out.set()
        stream.abort()

    watchdog = threading.Timer(options.budget + grace(options.budget), expire)
    watchdog.daemon = True
    watchdog.start()
    stdout, stderr = bytearray(), bytearray()
    last = 0

    def on_stdout(payload: bytes | bytearray) -> None:
        nonlocal last
        stdout.extend(payload)
        if len(stdout) > limit:
            raise CollectError(f"the collection on {node} sent more than its size cap "
                               f"({options.cap_bytes >> 20} MiB); stopped")
        if len(stdout) - last >= 1 << 20:
            last = len(stdout)
            state(f"received {len(stdout) / (1 << 20):.1f} MiB")

    def on_stderr(payload: bytes | bytearray) -> None:
        if len(stderr) < 1 << 20:
            stderr.extend(payload)

    try:
        stream.send_stdin(params)
        stream.close_stdin()
        status = drain(stream, on_stdout, on_stderr)
    except ExecError as exc:
        if timed_out.is_set():
            raise CollectError(f"the collection on {node} did not finish within its time budget "
                               f"({options.budget:g}s + {grace(options.budget):g}s); raise --budget") from None
        raise CollectError(f"the collection on {node} was cut off: {exc}") from None
    finally:
        watchdog.cancel()
        stream.abort()
    if timed_out.is_set():
        raise CollectError(f"the collection on {node} did not finish within its time budget "
                           f"({options.budget:g}s + {grace(options.budget):g}s); raise --budget")
    start = stdout.find(GZIP_MAGIC, 0, 1 << 16)
    if start > 0 and _is_text(stdout[:start]):  # a stray line a cmdlet wrote to the console before the archive
        stderr += b" (%d bytes before the archive on stdout were dropped)" % start
        del stdout[:start]
    error_text = " ".join(stderr.decode("utf-8", "replace").split())[:300]
    if not status.success:
        raise CollectError(f"the collection script on {node} failed: {error_text or status.message or status.reason}")
    if not stdout:
        raise CollectError(f"the collection script on {node} sent nothing" + (f": {error_text}" if error_text else ""))
    return bytes(stdout), error_text


def write_bundle(options: CollectOptions, cluster_json: bytes, results: list[NodeResult],
                 skipped_nodes: list[str]) -> CollectResult:
    """bundle.json, cluster.json and every node's files (checked again for credentials), atomically."""
    writer = bundles.BundleWriter(options.output, options.force)
    entries: dict[str, dict[str, Any]] = {}
    try:
        writer.add("cluster.json", cluster_json)
        for result in results:
            entries[result.node] = _add_node(writer, result, options)
        header = {"format": bundles.BUNDLE_FORMAT, "createdAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "cluster": "cluster.json",
                  "parameters": {"logBytes": options.log_bytes, "capBytes": options.cap_bytes,
                                 "budgetSeconds": options.budget},
                  "nodes": entries}
        if skipped_nodes:
            header["notWindows"] = skipped_nodes
        writer.add_json("bundle.json", header)
        writer.finish()
    except BaseException:
        writer.abort()
        raise
    return CollectResult(options.output, entries, skipped_nodes)


@cache
def _never_content() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in load("collect")["never_content"])


def _credential_content(text: str) -> bool:
    """A config file whose content is a credential (a kubeconfig or key under another name): dropped whole."""
    return any(p.search(text) for p in _never_content())


def _add_node(writer: bundles.BundleWriter, result: NodeResult, options: CollectOptions) -> dict[str, Any]:
    folder = bundles.node_dir(result.node)
    entry: dict[str, Any] = {"dir": folder, "collected": [], "errors": list(result.errors), "leftOut": [],
                             "seconds": result.seconds}
    if result.archive is None:
        return entry
    try:
        node = bundles.read_tar(result.archive, f"the archive from {result.node}",
                                max_total=archive_limit(options.cap_bytes))
    except KubectlWinError as exc:
        entry["errors"].append(str(exc))
        return entry
    entry["errors"].extend(f"archive: {why}" for why in node.refused)
    manifest = _manifest(node, entry)
    redacted: dict[str, dict[str, int]] = {}
    for member in sorted(node.files):
        data = node.files[member]
        if member != "manifest.json":
            text = data.decode("utf-8", "replace")
            kind = redact.kind_of(member)
            if kind == "config" and _credential_content(text):
                entry["leftOut"].append({"path": member, "reason": "credential content (dropped here)"})
                continue
            text, counts = redact.redact_counted(text, kind)
            if counts:
                redacted[member] = counts
                data = text.encode("utf-8")
            entry["collected"].append(member)
        writer.add(f"{folder}/{member}", data)
    for item in _as_list(manifest.get("items")):
        if isinstance(item, dict) and item.get("outcome") in ("error", "skipped"):
            entry["errors"].append(f"{item.get('name')}: {item.get('outcome')}: {item.get('error') or ''}".rstrip(": "))
        if isinstance(item, dict) and isinstance(item.get("redacted"), dict) and item["redacted"]:
            redacted.setdefault(str(item.get("file")), {}).update({f"{k} (on the node)": v
                                                                   for k, v in item["redacted"].items()})
    if redacted:
        entry["redacted"] = redacted
    if result.stderr:
        entry["stderr"] = result.stderr
    return entry


def _manifest(node: bundles.Bundle, entry: dict[str, Any]) -> dict[str, Any]:
    if "manifest.json" not in node.files:
        entry["errors"].append("the node's archive has no manifest.json")
        return {}
    try:
        manifest = node.json("manifest.json")
    except KubectlWinError as exc:
        entry["errors"].append(str(exc))
        return {}
    if not isinstance(manifest, dict):
        return {}
    entry["leftOut"].extend(item for item in _as_list(manifest.get("leftOut")) if isinstance(item, dict))
    if isinstance(manifest.get("seconds"), int | float):
        entry["scriptSeconds"] = manifest["seconds"]
    return manifest


def _as_list(value: Any) -> list[Any]:
    """ConvertTo-Json writes a one-element list as its element."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _is_text(data: bytes | bytearray) -> bool:
    try:
        return bytes(data).decode("utf-8").isprintable() or all(c.isprintable() or c in "\r\n\t" for c in
                                                                 bytes(data).decode("utf-8"))
    except UnicodeDecodeError:
        return False
