"""Where a Windows node keeps each component's log (knowledge/node_logs.yaml), by distribution."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from kubectl_win.knowledge import load


@dataclass(frozen=True)
class Location:
    kind: str  # file | pod | outside | query
    value: str  # relative file, outside path, query name, or "namespace/prefix" for a pod

    def describe(self, log_dir: str) -> str:
        if self.kind == "file":
            return log_dir + "\\" + self.value.replace("/", "\\")
        if self.kind == "pod":
            namespace, prefix = self.value.split("/", 1)
            return f"pod {namespace}/{prefix}-* on the node"
        if self.kind == "query":
            return f"log query {self.value} (Application event log)"
        return self.value


@dataclass(frozen=True)
class Distribution:
    id: str
    name: str
    platforms: tuple[str, ...]  # the platform ids (kubectl_win/platforms.py) whose nodes keep logs this way
    logs: dict[str, tuple[Location, ...]]
    uncertain: bool


def data() -> dict[str, Any]:
    return load("node_logs")


def log_dir() -> str:
    return str(data()["log_dir"])


def components() -> tuple[str, ...]:
    return tuple(data()["components"])


@cache
def distributions() -> tuple[Distribution, ...]:
    out = []
    for entry in data()["distributions"]:
        logs = {component: tuple(_location(item) for item in items) for component, items in entry["logs"].items()}
        out.append(Distribution(entry["id"], entry["name"], tuple(entry.get("platforms") or ()), logs,
                                bool(entry.get("uncertain"))))
    return tuple(out)


def _location(item: dict[str, Any]) -> Location:
    if "pod" in item:
        return Location("pod", f"{item['pod']['namespace']}/{item['pod']['prefix']}")
    kind = next(k for k in ("file", "outside", "query") if k in item)
    return Location(kind, str(item[kind]))


def distribution(distribution_id: str) -> Distribution:
    for entry in distributions():
        if entry.id == distribution_id:
            return entry
    raise KeyError(distribution_id)


def detect(node: dict[str, Any]) -> Distribution:
    """The distribution of the node's platform (kubectl_win/platforms.py); kubeadm's (the upstream defaults) for
    a platform no distribution lists."""
    from kubectl_win import platforms

    found = platforms.detect_node(node)
    return next((entry for entry in distributions() if found in entry.platforms), distribution("kubeadm"))
