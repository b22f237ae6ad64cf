"""Read the live cluster through kubectl_win.kube into a SnapshotBuilder, page by page (GET/LIST only).

A 403 on one resource, or a 429/5xx that outlasts the access layer's retries, becomes a `skipped` entry
and the rest is still read; a 404 on the gMSA CRD means the cluster does not serve it; anything else
(unreachable, 401, nodes unreadable) propagates as a typed error with its exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from kubectl_win.doctor.snapshot import SnapshotBuilder

CLUSTER_RESOURCES = ("nodes", "namespaces", "runtimeclasses", "gmsacredentialspecs")
NAMESPACED_RESOURCES = ("pods", "deployments", "statefulsets", "daemonsets", "jobs", "cronjobs",
                        "replicationcontrollers", "services", "endpointslices", "events")
PAGE_SIZE = 500
SERVER_ERRORS = frozenset({429, 500, 502, 503, 504})

Progress = Callable[[str, int], None]


def plan(scope: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cluster-scoped, namespaced) resources to read for a scope."""
    if scope == "nodes":
        return ("nodes",), ()
    return CLUSTER_RESOURCES, NAMESPACED_RESOURCES


def collect(cluster, builder: SnapshotBuilder, scope: str, namespace: str | None,  # type: ignore[no-untyped-def]
            progress: Progress | None = None) -> None:
    from kubectl_win.kube import ApiError, Forbidden, NotFound

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
                list_kind = str(page.get("kind") or "")
                kind = list_kind[: -len("List")] if list_kind.endswith("List") else ""
                api_version = page.get("apiVersion") or ""
                for item in page.get("items") or ():
                    if "kind" not in item:  # list items on the wire carry no kind (ObjectRef and explain need it)
                        item["kind"] = kind
                        item["apiVersion"] = api_version
                    builder.add(item)
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
        except ApiError as exc:
            # Retries are exhausted (429/5xx): report the rest; without nodes there is nothing to report.
            if resource == "nodes" or exc.status not in SERVER_ERRORS:
                raise
            builder.skip(resource, str(exc))
            continue
        builder.mark_read(resource)
