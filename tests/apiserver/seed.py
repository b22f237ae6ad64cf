"""Seeding: read YAML/JSON files (multi-document, `kind: List` flattened) into the store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from tests.apiserver.resources import resource_for_kind
from tests.apiserver.store import Store, StoreError

SUFFIXES = (".yaml", ".yml", ".json")


def iter_documents(path: Path) -> Iterator[dict]:
    """Every object in a file or a directory tree (sorted, so seeding is deterministic)."""
    files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES) if path.is_dir() else [path]
    for file in files:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".json":
            docs = [json.loads(text)]
        else:
            import yaml

            docs = list(yaml.safe_load_all(text))
        for doc in docs:
            yield from _flatten(doc)


def _flatten(doc: object) -> Iterator[dict]:
    if not isinstance(doc, dict):
        return
    if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and "items" in doc):
        for item in doc.get("items") or []:
            yield from _flatten(item)
    else:
        yield doc


def seed(store: Store, path: str | Path, strict: bool = False) -> tuple[int, list[str]]:
    """Load a file or directory; returns (objects loaded, descriptions of documents skipped)."""
    loaded, skipped = 0, []
    for doc in iter_documents(Path(path)):
        name = (doc.get("metadata") or {}).get("name", "?")
        if resource_for_kind(doc.get("apiVersion", ""), doc.get("kind", "")) is None:
            skipped.append(f"{doc.get('apiVersion')}/{doc.get('kind')} {name}: kind not served")
            if strict:
                raise StoreError(400, "BadRequest", skipped[-1])
            continue
        store.put(doc)
        loaded += 1
    return loaded, skipped
