"""YAML and JSON read safely: libyaml's safe loader, aliases checked against expansion bombs, nesting bounded
(a NestingError, a ValueError, rather than a RecursionError)."""

from __future__ import annotations

import json
from collections.abc import Iterator

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

def loader_class() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose_all(text: str) -> Iterator[Any]:
    loader = loader_class()(text)
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


class NestingError(ValueError):
    """JSON or YAML nested deeper than the parsers go (Kubernetes objects are a few dozen levels deep)."""


class AliasBomb(ValueError):
    """YAML whose aliases expand far beyond the document's own size (a "billion laughs")."""


MAX_EXPANDED_NODES = 2_000_000  # what a YAML document's aliases may expand to


def json_loads(text: str) -> Any:
    """json.loads, with absurd nesting a NestingError (a ValueError) instead of a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestingError("nested too deeply") from None


def check_aliases(node: Any, limit: int = MAX_EXPANDED_NODES) -> None:
    """Raise AliasBomb when a composed YAML node tree, with its aliases expanded, has more than `limit`
    nodes. Each node is measured once (aliases share node objects), so this costs the tree's own size."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        children = _children(current)
        if not expanded and children:
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        if total > limit:
            raise AliasBomb(f"its aliases expand to more than {limit:,} values (an alias bomb?)")
        sizes[key] = total


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    if getattr(node, "tag", "").endswith(":map") or (value and isinstance(value[0], tuple)):
        return [part for pair in value for part in pair]
    return value


def vet_yaml(text: str) -> None:
    """Compose every document of `text` (libyaml, bounded nesting) and check its aliases, for readers
    that then parse it with another library (ruamel.yaml keeps comments but has neither guard)."""
    try:
        for node in compose_all(text):
            check_aliases(node)
    except RecursionError:
        raise NestingError("nested too deeply") from None


def yaml_load_all(text: str) -> list[Any]:
    """Every YAML document of `text`, read as yaml_load reads one."""
    loader = loader_class()(text)
    docs = []
    try:
        while loader.check_node():
            node = loader.get_node()
            check_aliases(node)
            docs.append(loader.construct_document(node))
    except RecursionError:
        raise NestingError("nested too deeply") from None
    finally:
        loader.dispose()
    return docs


def yaml_load(text: str) -> Any:
    """The first YAML document of `text`, read safely (no tags, aliases checked, nesting bounded).
    Raises yaml.YAMLError, NestingError or AliasBomb (both ValueErrors)."""
    loader = loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_aliases(node)
        return loader.construct_document(node)
    except RecursionError:
        raise NestingError("nested too deeply") from None
    finally:
        loader.dispose()
