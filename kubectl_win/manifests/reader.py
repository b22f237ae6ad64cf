"""Kubernetes objects from files, directories and stdin: multi-document YAML and JSON, kind: List expanded,
each object with its source, document and line locator, and a Problem in place of whatever cannot be used."""

from __future__ import annotations

import os
from collections.abc import Container, Iterable, Iterator

from kubectl_win.manifests.inputs import Problem, iter_sources, one_line, read_text
from kubectl_win.manifests.lines import LazyLocator, LineLocator
from kubectl_win.manifests.objects import ManifestObject, type_word
from kubectl_win.manifests.yamlsafe import AliasBomb, NestingError, check_aliases, json_loads, loader_class

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any

def read_objects(
    paths: Iterable[str], stdin: IO[str] | None = None, kinds: Container[str] | None = None
) -> Iterator[ManifestObject | Problem]:
    """Every object in every source; Problems are yielded in place and reading goes on. A directory
    that holds no object at all is a fatal Problem: a CI gate pointed at the wrong folder must not pass.

    With `kinds`, YAML documents of other kinds are skipped before they are constructed (the cheap part
    of YAML is libyaml's parse; building Python objects costs more than linting them)."""
    for path in paths:
        found = False
        for source in iter_sources([path]):
            text = read_text(source, stdin)
            name = "<stdin>" if source == "-" else source
            if isinstance(text, Problem):
                found = True  # said why already
                yield text
                continue
            for item in parse_text(text, name, kinds, count_skipped=True):
                if item is _SKIPPED_OBJECT:
                    found = True
                    continue
                found = found or isinstance(item, ManifestObject) or item.fatal
                yield item
        if not found and path != "-" and os.path.isdir(path):
            yield Problem(path, "no objects found (no Kubernetes object in its .yaml, .yml or .json files)",
                          fatal=True)


_SKIPPED_OBJECT = Problem("", "an object of a kind not asked for")


def parse_text(text: str, source: str, kinds: Container[str] | None = None,
               count_skipped: bool = False) -> Iterator[ManifestObject | Problem]:
    """Objects of a YAML or JSON text (multi-document, kind: List expanded). With `count_skipped`, a
    document skipped for its kind is yielded as the _SKIPPED_OBJECT marker (read_objects counts it)."""
    if not text.strip():
        yield Problem(source, "empty file, nothing to check")
        return
    if source.lower().endswith(".json") or text.lstrip()[:1] in ("{", "["):
        try:
            data = json_loads(text)
        except NestingError:
            yield Problem(source, "nested too deeply to be a Kubernetes object", fatal=True)
            return
        except ValueError:
            pass  # not strict JSON (or JSON with comments): read it as YAML, which also names the line
        else:
            yield from _objects_of(data, source, 0, LazyLocator(text, 0))
            return
    yield from _parse_yaml(text, source, kinds, count_skipped)


def _top_level_kind(node: Any) -> str | None:
    """The `kind` of a document from its node tree, without constructing it (None if not a plain mapping)."""
    if not getattr(node, "tag", "").endswith(":map"):
        return None
    for key_node, value_node in node.value:
        if getattr(key_node, "value", None) == "kind" and isinstance(getattr(value_node, "value", None), str):
            return value_node.value
    return None


def _parse_yaml(text: str, source: str, kinds: Container[str] | None = None,
                count_skipped: bool = False) -> Iterator[ManifestObject | Problem]:
    import yaml

    loader = loader_class()(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if kinds is not None:
                kind = _top_level_kind(node)
                if kind is not None and kind not in kinds and not kind.endswith("List"):
                    index += 1
                    if count_skipped:
                        yield _SKIPPED_OBJECT
                    continue
            check_aliases(node)
            data = loader.construct_document(node)
            if data is not None:
                yield from _objects_of(data, source, index, LineLocator(node))
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        yield Problem(source, f"invalid YAML: {exc.problem or exc.context or 'syntax error'}", line=line, fatal=True)
    except yaml.YAMLError as exc:
        yield Problem(source, f"invalid YAML: {one_line(exc)}", fatal=True)
    except AliasBomb as exc:
        yield Problem(source, f"document {index + 1}: {exc}", fatal=True)
    except RecursionError:
        yield Problem(source, f"document {index + 1} is nested too deeply to be a Kubernetes object", fatal=True)
    except (ValueError, TypeError) as exc:  # e.g. unhashable keys
        yield Problem(source, f"cannot construct document {index + 1}: {one_line(exc)}", fatal=True)
    finally:
        loader.dispose()


def _objects_of(data: Any, source: str, document: int, locator: LineLocator) -> Iterator[ManifestObject | Problem]:
    if not isinstance(data, dict):
        kind = type(data).__name__
        yield Problem(
            source,
            f"document {document + 1} is a {type_word(kind)}, not a Kubernetes object; skipped",
            line=locator.line(()),
        )
        return
    if data.get("kind") == "List" or (str(data.get("kind", "")).endswith("List") and "items" in data):
        items = data.get("items")
        if not isinstance(items, list):
            if items is not None:
                yield Problem(
                    source, f"document {document + 1}: 'items' is not a list; skipped", line=locator.line(("items",))
                )
            return
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield ManifestObject(item, source, document, ("items", index), locator)
            else:
                yield Problem(
                    source,
                    f"document {document + 1}: items[{index}] is not an object; skipped",
                    line=locator.line(("items", index)),
                )
        return
    yield ManifestObject(data, source, document, (), locator)
