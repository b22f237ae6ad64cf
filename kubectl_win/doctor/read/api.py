"""Read the live cluster through kubectl_win.kube into a SnapshotBuilder, page by page (GET/LIST only).

A 403 on one resource, or a 429/5xx that outlasts the access layer's retries, becomes a `skipped` entry
and the rest is still read; a 404 on the gMSA CRD means the cluster does not serve it; anything else
(unreachable, 401, nodes unreadable) propagates as a typed error with its exit code.

Pages are fetched (and decoded) by one reader thread ahead of the main thread, which hands each page to the
builder as it arrives: the API server prepares (and the reader decodes) the next page while this one is
turned into records, and no resource is ever held whole. Without a sink (no --save-dump) a page is decoded
straight from its bytes into typed records of the fields doctor reads (read/typed.py), never into dicts of
the whole objects; with one, into dicts, so that the sink has the objects as the server sent them. The
queue holds at most AHEAD pages, so memory stays bounded; the order of resources and pages is kept.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kubectl_win.doctor.read.plan import plan

if TYPE_CHECKING:
    from kubectl_win.doctor.build import SnapshotBuilder

PAGE_SIZE = 500
SERVER_ERRORS = frozenset({429, 500, 502, 503, 504})
AHEAD = 2  # pages queued ahead of processing (one more is being fetched): each parsed page holds ~10 MiB

Progress = Callable[[str, int], None]


def read_cluster(cluster, builder: SnapshotBuilder, scope: str, namespace: str | None,  # type: ignore[no-untyped-def]
            progress: Progress | None = None) -> None:
    from kubectl_win.kube import ApiError, Forbidden, NotFound

    version = cluster.server_version()
    builder.server_version = str(version.get("gitVersion") or "") or None if isinstance(version, dict) else \
        (str(version) if version else None)
    builder.namespace = namespace
    cluster_scoped, namespaced = plan(scope)
    requests = []
    for resource in cluster_scoped + namespaced:
        ns = namespace if resource in namespaced else None
        field_selector = f"metadata.name={namespace}" if resource == "namespaces" and namespace else None
        requests.append((resource, ns, field_selector))
    for resource, pages in _read_ahead(cluster, requests, typed=builder.sink is None):
        seen = 0
        try:
            for page in pages:
                list_kind = str(page.get("kind") or "")
                kind = list_kind[: -len("List")] if list_kind.endswith("List") else ""
                items = page.get("items") or ()
                if isinstance(page, dict):
                    builder.add_page(kind, page.get("apiVersion") or "", items)
                else:  # typed records (read/typed.py)
                    builder.add_typed_page(kind, page.get("apiVersion") or "", items)
                seen += len(items) if isinstance(items, list) else 0
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


_DONE = object()


def _read_ahead(cluster: Any, requests: list[tuple[str, str | None, str | None]], typed: bool = False
                ) -> Iterator[tuple[str, Iterator[Any]]]:
    """(resource, its pages) in order, the pages fetched by a reader thread ahead of the consumer; an error
    of the access layer is raised from the resource's page iterator, where the caller handles it. `typed`:
    pages decoded into typed records of the fields doctor reads (read/typed.py) rather than dicts."""
    if typed:
        from kubectl_win.doctor.read.typed import page_decoder
    pages: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=AHEAD)
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                pages.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def reader() -> None:
        for resource, ns, field_selector in requests:
            try:
                decode = page_decoder(resource) if typed else None
                for page in cluster.list_pages(resource, namespace=ns, field_selector=field_selector,
                                               page_size=PAGE_SIZE, decode=decode):
                    if not put(("page", page)):
                        return
                outcome: tuple[str, Any] = ("done", None)
            except BaseException as exc:  # handed to the consumer, which decides what it means
                outcome = ("error", exc)
            if not put(outcome):
                return

    def resource_pages() -> Iterator[Any]:
        while True:
            try:
                what, value = pages.get(timeout=0.1)  # a timeout keeps Ctrl+C responsive
            except queue.Empty:
                if not thread.is_alive() and pages.empty():
                    raise RuntimeError("the page reader stopped") from None
                continue
            if what == "page":
                yield value
            elif what == "error":
                raise value
            else:
                return

    thread = threading.Thread(target=reader, name="doctor-pages", daemon=True)
    thread.start()
    try:
        for resource, _ns, _selector in requests:
            current = resource_pages()
            yield resource, current
            for _ in current:  # a consumer that stopped early: drain to the resource's end
                pass
    finally:
        stop.set()
