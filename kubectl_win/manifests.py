"""Reading Kubernetes objects from files, directories and stdin, with line numbers, and finding the pod
spec(s) inside any workload kind. Shared by explain, doctor and scaffold.

Line numbers cost nothing until asked for: YAML is composed into a node tree by libyaml and constructed
once; a finding's line is looked up in that tree by path only when a finding needs it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Container, Iterable, Iterator

from kubectl_win.record import field, record

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any

Path = tuple[str | int, ...]

MAX_FILE_BYTES = 64 * 1024 * 1024
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# Where the pod spec sits in each pod-bearing kind.
POD_SPEC_PATHS: dict[str, Path] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


@record
class PodTemplate:
    """A pod spec inside an object: its path from the object root, the spec and the pod metadata."""

    spec_path: Path
    spec: dict[str, Any]
    metadata: dict[str, Any]


@record
class ManifestObject:
    """One object read from a source, with what is needed to point at its lines."""

    obj: dict[str, Any]
    source: str
    document: int  # 0-based document index within the source
    prefix: Path = ()  # path of the object within its document (items[i] for kind: List)
    locator: LineLocator | None = field(default=None, repr=False)

    def line(self, path: Path) -> int | None:
        return self.locator.line(self.prefix + tuple(path)) if self.locator else None


@record
class Problem:
    """Something in the input that could not be used: an unreadable file, or a skipped document."""

    source: str
    message: str
    line: int | None = None
    fatal: bool = False  # the input could not be read (exit 2), as opposed to a skipped document

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.message}"


class LineLocator:
    """Finds the line of a path in a composed YAML node tree (the key's line for mapping members)."""

    def __init__(self, node: Any) -> None:
        self._node = node

    def line(self, path: Path) -> int | None:
        node = self._node
        line = node.start_mark.line + 1 if node is not None else None
        for step in path:
            child = None
            if isinstance(step, int):
                if getattr(node, "tag", "").endswith(":seq") and 0 <= step < len(node.value):
                    child = node.value[step]
                    line = child.start_mark.line + 1
            elif getattr(node, "tag", "").endswith(":map"):
                for key_node, value_node in node.value:  # the last duplicate key wins, as in construction
                    if getattr(key_node, "value", None) == step:
                        child = value_node
                        line = key_node.start_mark.line + 1
            if child is None:
                return line  # the deepest part of the path that exists
            node = child
        return line


class _LazyLocator(LineLocator):
    """For JSON read with the json module: compose the YAML node tree only if a line is asked for."""

    def __init__(self, text: str, document: int) -> None:
        super().__init__(None)
        self._text: str | None = text
        self._document = document

    def line(self, path: Path) -> int | None:
        if self._text is not None:
            try:
                nodes = list(_compose_all(self._text))
                self._node = nodes[self._document] if self._document < len(nodes) else None
            except Exception:  # noqa: BLE001 - JSON that libyaml cannot read just has no line numbers
                self._node = None
            self._text = None
        return super().line(path) if self._node is not None else None


def _loader_class() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose_all(text: str) -> Iterator[Any]:
    loader = _loader_class()(text)
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


def iter_sources(paths: Iterable[str]) -> Iterator[str]:
    """Expand directories (recursively, manifest suffixes only, hidden entries skipped) in a stable order."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.lower().endswith(MANIFEST_SUFFIXES) and not name.startswith("."):
                    yield os.path.join(root, name)


def read_text(source: str, stdin: IO[str] | None = None) -> str | Problem:
    """The text of one source, or a fatal Problem saying why it cannot be read."""
    if source == "-":
        import sys

        from kubectl_win.console import stdin_bytes

        stream = stdin or sys.stdin
        try:
            raw = stdin_bytes(stream)  # decoded like a file: BOM, UTF-16, UTF-8; not the ANSI code page
            return stream.read() if raw is None else decode_text(raw, "<stdin>")
        except (OSError, UnicodeDecodeError) as exc:
            return Problem("<stdin>", f"cannot read standard input: {_one_line(exc)}", fatal=True)
    try:
        size = os.path.getsize(source)
        if size > MAX_FILE_BYTES:
            return Problem(
                source,
                f"file is too large ({size // (1024 * 1024)} MiB; the limit is {MAX_FILE_BYTES // (1024 * 1024)} MiB)",
                fatal=True,
            )
        with open(source, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return Problem(source, "no such file or directory", fatal=True)
    except IsADirectoryError:
        return Problem(source, "is a directory", fatal=True)
    except OSError as exc:
        return Problem(source, f"cannot read: {exc.strerror or _one_line(exc)}", fatal=True)
    return decode_text(raw, source)


# Windows PowerShell 5.1 writes `kubectl get ... > file.yaml` as UTF-16 with a byte-order mark.
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"))


def read_input_text(path: str, what: str) -> str:
    """A whole file a user named (a dump, say) as text, in any encoding decode_text reads; an InputError
    naming `what` ("dump", "HNS dump") when it is missing, a directory, unreadable or binary."""
    from kubectl_win.errors import InputError

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a {what} file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {' '.join(str(exc).split())}") from None
    text = decode_text(raw, path)  # also UTF-16, as Windows PowerShell 5.1 writes `... > dump.json`
    if isinstance(text, Problem):
        raise InputError(f"cannot read {what} {text}")
    return text


def decode_text(raw: bytes, source: str) -> str | Problem:
    """UTF-8 (with or without BOM), or UTF-16/32 with a BOM; a fatal Problem for binary or other encodings."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as exc:
                return Problem(source, f"not valid {encoding.upper()} text (byte {exc.start})", fatal=True)
    if b"\x00" in raw[:8192]:
        return Problem(source, "binary file, not YAML or JSON", fatal=True)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Problem(source, f"not UTF-8 text (byte {exc.start})", fatal=True)


def read_objects(
    paths: Iterable[str], stdin: IO[str] | None = None, kinds: Container[str] | None = None
) -> Iterator[ManifestObject | Problem]:
    """Every object in every source; Problems are yielded in place and reading goes on.

    With `kinds`, YAML documents of other kinds are skipped before they are constructed (the cheap part
    of YAML is libyaml's parse; building Python objects costs more than linting them)."""
    for source in iter_sources(paths):
        text = read_text(source, stdin)
        name = "<stdin>" if source == "-" else source
        if isinstance(text, Problem):
            yield text
            continue
        yield from parse_text(text, name, kinds)


def parse_text(text: str, source: str, kinds: Container[str] | None = None) -> Iterator[ManifestObject | Problem]:
    """Objects of a YAML or JSON text (multi-document, kind: List expanded)."""
    if not text.strip():
        yield Problem(source, "empty file, nothing to check")
        return
    if source.lower().endswith(".json") or text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except ValueError:
            pass  # not strict JSON (or JSON with comments): read it as YAML, which also names the line
        else:
            yield from _objects_of(data, source, 0, _LazyLocator(text, 0))
            return
    yield from _parse_yaml(text, source, kinds)


def _top_level_kind(node: Any) -> str | None:
    """The `kind` of a document from its node tree, without constructing it (None if not a plain mapping)."""
    if not getattr(node, "tag", "").endswith(":map"):
        return None
    for key_node, value_node in node.value:
        if getattr(key_node, "value", None) == "kind" and isinstance(getattr(value_node, "value", None), str):
            return value_node.value
    return None


def _parse_yaml(text: str, source: str, kinds: Container[str] | None = None) -> Iterator[ManifestObject | Problem]:
    import yaml

    loader = _loader_class()(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if kinds is not None:
                kind = _top_level_kind(node)
                if kind is not None and kind not in kinds and not kind.endswith("List"):
                    index += 1
                    continue
            data = loader.construct_document(node)
            if data is not None:
                yield from _objects_of(data, source, index, LineLocator(node))
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        yield Problem(source, f"invalid YAML: {exc.problem or exc.context or 'syntax error'}", line=line, fatal=True)
    except yaml.YAMLError as exc:
        yield Problem(source, f"invalid YAML: {_one_line(exc)}", fatal=True)
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. unhashable keys, absurd nesting
        yield Problem(source, f"cannot construct document {index + 1}: {_one_line(exc)}", fatal=True)
    finally:
        loader.dispose()


def _objects_of(data: Any, source: str, document: int, locator: LineLocator) -> Iterator[ManifestObject | Problem]:
    if not isinstance(data, dict):
        kind = type(data).__name__
        yield Problem(
            source,
            f"document {document + 1} is a {_type_word(kind)}, not a Kubernetes object; skipped",
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


def pod_templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """The pod spec(s) of a pod-bearing object; [] for other kinds or when the spec is absent or malformed."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind", "")))
    if path is None:
        return []
    node: Any = obj
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
        if node is None:
            return []
    if not isinstance(node, dict):
        return []
    if path == ("spec",):
        meta = obj.get("metadata")
    else:
        parent: Any = obj
        for step in path[:-1]:
            parent = parent.get(step)
        meta = parent.get("metadata") if isinstance(parent, dict) else None
    return [PodTemplate(path, node, meta if isinstance(meta, dict) else {})]


def malformed_pod_spec(obj: dict[str, Any]) -> str | None:
    """Why a pod-bearing object's spec cannot be read (a wrong type on the way), or None."""
    path = POD_SPEC_PATHS.get(str(obj.get("kind", "")))
    if path is None:
        return None
    node: Any = obj
    walked: list[str] = []
    for step in path:
        if not isinstance(node, dict):
            return f"{'.'.join(walked)} is a {_type_word(type(node).__name__)}, expected a mapping"
        node = node.get(step)
        walked.append(str(step))
        if node is None:
            return None
    if not isinstance(node, dict):
        return f"{'.'.join(walked)} is a {_type_word(type(node).__name__)}, expected a mapping"
    for list_name in CONTAINER_LISTS + ("volumes", "tolerations"):
        value = node.get(list_name)
        if value is not None and not isinstance(value, list):
            return f"{'.'.join(walked)}.{list_name} is a {_type_word(type(value).__name__)}, expected a list"
    return None


def iter_containers(spec: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(list name, index, container) for containers, initContainers and ephemeralContainers."""
    for list_name in CONTAINER_LISTS:
        containers = spec.get(list_name)
        if isinstance(containers, list):
            for index, container in enumerate(containers):
                if isinstance(container, dict):
                    yield list_name, index, container


def format_path(path: Path) -> str:
    """('spec', 'containers', 0, 'image') -> 'spec.containers[0].image' (the API server's notation)."""
    out = []
    for step in path:
        if isinstance(step, int):
            out.append(f"[{step}]")
        else:
            out.append(("." if out else "") + step)
    return "".join(out)


def spec_path_of(kind: str) -> str:
    """The pod spec's dotted path in an object of this kind ('spec.template.spec'); 'spec' for a pod or
    an unknown kind."""
    return format_path(POD_SPEC_PATHS.get(kind, ("spec",)))


def _type_word(python_type: str) -> str:
    return {
        "str": "string",
        "int": "number",
        "float": "number",
        "bool": "boolean",
        "list": "list",
        "dict": "mapping",
        "NoneType": "null",
        "datetime": "timestamp",
        "date": "date",
    }.get(python_type, python_type)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
