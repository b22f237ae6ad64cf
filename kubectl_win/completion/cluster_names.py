"""Live names for completion: kubeconfig entries read locally, cluster objects read through
`kubectl_win.kube` with a short deadline. Every failure yields no names and prints nothing:
whatever the completer writes to stderr lands in the user's terminal mid-line.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from kubectl_win.completion.hints import KUBECONFIG_RESOURCES, LiveNames

DEFAULT_TIMEOUT = 2.0  # seconds for the whole lookup; a TAB that hangs is worse than no names
TIMEOUT_ENV = "KUBECTL_WIN_COMPLETION_TIMEOUT"
MAX_NAMES = 500  # one page; a longer menu helps nobody

Names = list[tuple[str, str]]


def live_names(hint: LiveNames, values: dict[str, str]) -> Names:
    """The NameSource the completer uses for real."""
    try:
        if hint.resource in KUBECONFIG_RESOURCES:
            return kubeconfig_names(hint.resource, values.get("kubeconfig"))
        return _within(timeout(), lambda: cluster_names(hint, values))
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


def timeout() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def kubeconfig_names(resource: str, kubeconfig: str | None = None) -> Names:
    """Context, cluster or user names from the kubeconfig files kubectl would read, in order."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    names: dict[str, str] = {}
    from kubectl_win.env import kubeconfig_candidates

    for path in kubeconfig_candidates(kubeconfig):
        try:
            document = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        for entry in document.get(resource) or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                names.setdefault(entry["name"], _kubeconfig_description(resource, entry))
    return list(names.items())


def cluster_names(hint: LiveNames, values: dict[str, str]) -> Names:
    from kubectl_win import kube

    flags = kube.KubeFlags(**_flag_values(kube.KubeFlags, values))
    with kube.connect(flags) as cluster:
        # Like kubectl: -n if typed, else the context's namespace.
        namespace = (values.get("namespace") or cluster.namespace) if hint.namespaced else None
        names = []
        for item in cluster.list(hint.resource, namespace=namespace, page_size=MAX_NAMES):
            if name := _name(item):
                names.append((name, _describe(hint.resource, item)))
            if len(names) >= MAX_NAMES:
                break
        return names


def _within(seconds: float, lookup: Any) -> Names:
    result: Names = []

    def run() -> None:
        nonlocal result
        try:
            result = lookup()
        except BaseException:  # noqa: BLE001 - a dead cluster is just "no names"
            result = []

    worker = threading.Thread(target=run, name="completion-lookup", daemon=True)
    worker.start()
    worker.join(seconds)
    return [] if worker.is_alive() else result


def _flag_values(flags_type: Any, values: dict[str, str]) -> dict[str, Any]:
    """Pass the connection flags the user typed, plus a short request timeout."""
    wanted = dict(values)
    wanted["request_timeout"] = timeout()
    fields = getattr(flags_type, "__dataclass_fields__", None)
    keys = ("kubeconfig", "context", "cluster", "user", "namespace", "request_timeout")
    return {key: wanted[key] for key in keys if key in wanted and (fields is None or key in fields)}


def _kubeconfig_description(resource: str, entry: dict[str, Any]) -> str:
    if resource != "contexts":
        return ""
    context = entry.get("context") or {}
    parts = [f"cluster {context['cluster']}" if context.get("cluster") else "",
             f"namespace {context['namespace']}" if context.get("namespace") else ""]
    return ", ".join(part for part in parts if part)


def _name(item: Any) -> str:
    metadata = item.get("metadata") if isinstance(item, dict) else getattr(item, "metadata", None)
    if isinstance(metadata, dict):
        return str(metadata.get("name") or "")
    return str(getattr(metadata, "name", "") or "")


def _describe(resource: str, item: Any) -> str:
    """A few words that help pick the right one: the OS of a node, the phase and node of a pod."""
    if not isinstance(item, dict):
        return ""
    if resource == "nodes":
        labels = (item.get("metadata") or {}).get("labels") or {}
        from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL

        return " ".join(filter(None, (labels.get(OS_LABEL), labels.get(BUILD_LABEL))))
    if resource == "pods":
        status, spec = item.get("status") or {}, item.get("spec") or {}
        return " ".join(filter(None, (status.get("phase"), f"on {spec['nodeName']}" if spec.get("nodeName") else "")))
    return ""
