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
    """Expand directories (recursively, manifest suffixes only, hidden entries skipped) in a stable order.

    Symlinked sub-directories are followed, each real directory once (a link loop ends there); FIFOs,
    sockets and devices inside a directory are passed over (opening a FIFO waits for a writer forever).
    A path named on the command line is used as it is: `-f <(kubectl get ...)` is a pipe."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        yield from _walk(path)


def _walk(top: str) -> Iterator[str]:
    import stat

    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(top, followlinks=True):
        try:
            info = os.stat(root)
        except OSError:
            dirs[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.lower().endswith(MANIFEST_SUFFIXES) or name.startswith("."):
                continue
            full = os.path.join(root, name)
            try:
                mode = os.stat(full).st_mode
            except OSError:
                yield full  # a dangling link: reading it says why
                continue
            if stat.S_ISREG(mode):
                yield full


def read_text(source: str, stdin: IO[str] | None = None, limit: int | None = None) -> str | Problem:
    """The text of one source, or a fatal Problem saying why it cannot be read."""
    limit = MAX_FILE_BYTES if limit is None else limit
    if source == "-":
        import sys

        stream = stdin or sys.stdin
        try:
            binary = getattr(stream, "buffer", None)
            data: bytes | str = read_stream(binary, limit) if binary is not None else stream.read(limit + 1)
        except (OSError, UnicodeDecodeError) as exc:
            return Problem("<stdin>", f"cannot read standard input: {_one_line(exc)}", fatal=True)
        if len(data) > limit:
            return Problem("<stdin>", f"standard input is larger than {_size(limit)}", fatal=True)
        return decode_text(data, "<stdin>") if isinstance(data, bytes) else data
    try:
        raw = read_capped(source, limit)
    except FileNotFoundError:
        return Problem(source, "no such file or directory", fatal=True)
    except IsADirectoryError:
        return Problem(source, "is a directory", fatal=True)
    except TooLarge as exc:
        return Problem(source, str(exc), fatal=True)
    except OSError as exc:
        return Problem(source, f"cannot read: {exc.strerror or _one_line(exc)}", fatal=True)
    return decode_text(raw, source)


_SNIFF_BYTES = 8192  # what decode_text looks at to tell binary from text


class TooLarge(OSError):
    """An input over the size limit (a huge file, or an endless one such as /dev/zero)."""


def read_capped(path: str, limit: int) -> bytes:
    """A file's bytes, reading at most `limit` + 1: a regular file's size is checked first, and a device
    or pipe that never ends (/dev/zero) stops at the limit instead of filling memory."""
    import stat

    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise TooLarge(f"file is too large ({_size(info.st_size)}; the limit is {_size(limit)})")
        raw = read_stream(handle, limit)
    if len(raw) > limit:
        raise TooLarge(f"input is larger than {_size(limit)} (an endless file?)")
    return raw


def read_stream(handle: IO[bytes], limit: int) -> bytes:
    """At most `limit` + 1 bytes (more than `limit` means too large); binary input (/dev/zero, an image)
    stops after its first block, which is all decode_text needs to say so."""
    raw = handle.read(min(limit + 1, _SNIFF_BYTES))
    if b"\x00" in raw and not raw.startswith(tuple(bom for bom, _ in _BOMS)):
        return raw
    while len(raw) <= limit:
        chunk = handle.read(limit + 1 - len(raw))
        if not chunk:
            break
        raw += chunk
    return raw


def _size(count: int) -> str:
    return f"{count / (1024 * 1024 * 1024):.1f} GiB" if count >= 1024 ** 3 else f"{count // (1024 * 1024)} MiB"


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
        for node in _compose_all(text):
            check_aliases(node)
    except RecursionError:
        raise NestingError("nested too deeply") from None


def yaml_load_all(text: str) -> list[Any]:
    """Every YAML document of `text`, read as yaml_load reads one."""
    loader = _loader_class()(text)
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
    loader = _loader_class()(text)
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


# Windows PowerShell 5.1 writes `kubectl get ... > file.yaml` as UTF-16 with a byte-order mark.
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"))


def read_input_text(path: str, what: str, limit: int | None = None) -> str:
    """A whole file a user named (a dump, say) as text, in any encoding decode_text reads; an InputError
    naming `what` ("dump", "HNS dump") when it is missing, a directory, unreadable, binary or over `limit`."""
    from kubectl_win.errors import InputError

    try:
        raw = read_capped(path, MAX_FILE_BYTES if limit is None else limit)
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a {what} file") from None
    except TooLarge as exc:
        raise InputError(f"cannot read {what} {path}: {exc}") from None
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
            yield from _objects_of(data, source, 0, _LazyLocator(text, 0))
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

    loader = _loader_class()(text)
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
        yield Problem(source, f"invalid YAML: {_one_line(exc)}", fatal=True)
    except AliasBomb as exc:
        yield Problem(source, f"document {index + 1}: {exc}", fatal=True)
    except RecursionError:
        yield Problem(source, f"document {index + 1} is nested too deeply to be a Kubernetes object", fatal=True)
    except (ValueError, TypeError) as exc:  # e.g. unhashable keys
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


def is_host_process(spec: dict[str, Any]) -> bool:
    """Whether a pod spec runs HostProcess: its securityContext.windowsOptions.hostProcess, or that of any of its
    containers (a container's own setting wins over the pod's, as the kubelet decides it). The API server
    admits no pod that mixes HostProcess and other containers, so a pod-level true marks the pod whatever its
    containers say."""
    if _host_process_setting(spec) is True:
        return True
    return any(_host_process_setting(container) is True for _, _, container in iter_containers(spec))


def _host_process_setting(holder: dict[str, Any]) -> Any:
    context = holder.get("securityContext")
    options = context.get("windowsOptions") if isinstance(context, dict) else None
    return options.get("hostProcess") if isinstance(options, dict) else None


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
