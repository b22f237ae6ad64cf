"""Read the live cluster through kubectl_win.kube into a SnapshotBuilder, page by page (GET/LIST only).

A 403 on one resource becomes a `skipped` entry and the rest is still read; a 404 on the gMSA CRD means
the cluster does not serve it; anything else (unreachable, 401, retries exhausted) propagates as a typed
error with its exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from kubectl_win.doctor.snapshot import SnapshotBuilder

CLUSTER_RESOURCES = ("nodes", "namespaces", "runtimeclasses", "gmsacredentialspecs")
NAMESPACED_RESOURCES = ("pods", "deployments", "statefulsets", "daemonsets", "jobs", "cronjobs",
                        "replicationcontrollers", "services", "events")
PAGE_SIZE = 500

Progress = Callable[[str, int], None]


def plan(scope: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cluster-scoped, namespaced) resources to read for a scope."""
    if scope == "nodes":
        return ("nodes",), ()
    return CLUSTER_RESOURCES, NAMESPACED_RESOURCES


def collect(cluster, builder: SnapshotBuilder, scope: str, namespace: str | None,  # type: ignore[no-untyped-def]
            progress: Progress | None = None) -> None:
    from kubectl_win.kube import Forbidden, NotFound

    version = cluster.server_version()
    builder.server_version = str(version.get("gitVersion") or "") or None if isinstance(version, dict) else \
        (str(version) if version else None)
    builder.namespace = namespace
    cluster_scoped, namespaced = plan(scope)
    for resource in cluster_scoped + namespaced:
        ns = namespace if resource in namespaced else None
        if resource == "namespaces" and namespace:
            field_selector = f"metadata.name={namespace}"
        else:
            field_selector = None
        seen = 0
        try:
            for page in cluster.list_pages(resource, namespace=ns, field_selector=field_selector,
                                           page_size=PAGE_SIZE):
                kind = str(page.get("kind") or "")
                kind = kind[: -len("List")] if kind.endswith("List") else None
                for item in page.get("items") or ():
                    builder.add(item, kind or item.get("kind"))
                seen += len(page.get("items") or ())
                if progress is not None:
                    progress(resource, seen)
        except Forbidden as exc:
            builder.skip(resource, f"forbidden: {exc}")
            continue
        except NotFound:
            if resource == "gmsacredentialspecs":
                builder.gmsa_not_served()
            else:
                builder.skip(resource, "the API server does not serve it")
            continue
        builder.mark_read(resource)
