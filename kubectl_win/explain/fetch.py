"""Fetch live pod-bearing objects for explain through the shared access layer."""

from __future__ import annotations

from kubectl_win.errors import UsageError
from kubectl_win.kinds import POD_SPEC_PATHS

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any


def parse_live_target(words: list[str], all_namespaces: bool, selector: str | None) -> tuple[Any, str | None]:
    """TYPE/NAME, TYPE NAME or TYPE -> (resource, name); pure, so bad input fails before any connection."""
    from kubectl_win.kube.resources import resolve

    if len(words) == 2:
        type_word, name = words
    elif "/" in words[0]:
        type_word, name = words[0].split("/", 1)
    else:
        type_word, name = words[0], None
    info = resolve(type_word)
    if info.kind not in POD_SPEC_PATHS:
        raise UsageError(
            f"{info.plural} have no pod spec; explain checks pods, pod templates and workloads "
            "(deployments, statefulsets, daemonsets, replicasets, jobs, cronjobs)"
        )
    if name is not None and not name:
        raise UsageError(f"missing a name after {type_word}/")
    if name and all_namespaces:
        raise UsageError("a resource cannot be retrieved by name across all namespaces")
    if name and selector:
        raise UsageError("a name and a label selector (-l) cannot be used together")
    return info, name


def fetch_objects(
    cluster: Any, info: Any, name: str | None, namespace: str | None, all_namespaces: bool, selector: str | None
) -> list[dict[str, Any]]:
    """The objects, with kind and apiVersion filled in (list items carry neither)."""
    scope = None if all_namespaces else (namespace or cluster.namespace)
    if name:
        objects = [cluster.get_object(info.plural, name, scope)]
    else:
        objects = list(cluster.list(info.plural, namespace=scope, label_selector=selector))
    for obj in objects:
        obj.setdefault("kind", info.kind)
        obj.setdefault("apiVersion", info.api_version)
    return objects


def fetch_runtime_classes(cluster: Any, objects: list[dict[str, Any]]) -> dict[str, dict[str, str]] | None:
    """The nodeSelector of each RuntimeClass of the cluster, when an object names one (a RuntimeClass's
    scheduling may carry its OS selector, as doctor reads it); None when none is named or they cannot be read."""
    from kubectl_win.explain.placement import runtime_class_selector
    from kubectl_win.kube import ApiError, Forbidden
    from kubectl_win.manifests.objects import pod_templates

    named = any(isinstance(t.spec.get("runtimeClassName"), str) for obj in objects for t in pod_templates(obj))
    if not named:
        return None
    try:
        items = list(cluster.list("runtimeclasses"))
    except (Forbidden, ApiError):
        return None  # unread: the finding then names the RuntimeClass to look at
    return dict(runtime_class_selector(item) for item in items)
