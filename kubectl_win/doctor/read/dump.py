"""--from-dump and --save-dump.

Input: the JSON of `kubectl get nodes,pods,... -A -o json` (a List), a single typed list (PodList), several
such documents one after another, or a dump written by --save-dump. The saved format is itself a v1 List of
reduced objects plus a `kubectlWin` header (server version, counts, what was read and what was skipped), so
reading it back gives the same snapshot and therefore the same findings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubectl_win.doctor.build import SnapshotBuilder
from kubectl_win.doctor.read.plan import KIND_ORDER, RESOURCE_OF_KIND
from kubectl_win.errors import InputError
from kubectl_win.findings import SCHEMA_VERSION
from kubectl_win.manifests.inputs import Problem, decode_text, read_input_text, read_stream

HEADER_KEY = "kubectlWin"
NOTE_KEY = "kubectlWinNote"  # first in the file: what a shared dump left out (kubectl_win/doctor/read/share.py)
DUMP_FORMAT = "doctor-dump/v1"
MAX_DUMP_BYTES = 1024 ** 3  # a saved dump of a 150,000-pod cluster is a few hundred MiB
_ORDER = {kind: index for index, kind in enumerate(KIND_ORDER)}


class Dump:
    """A dump's documents, parsed once: fed to a SnapshotBuilder (doctor) and read as objects (hns compares
    a node with them)."""

    def __init__(self, documents: list[Any], origin: str) -> None:
        self.documents = documents
        self.origin = origin  # what error messages name: the path, or the bundle and its member

    def objects(self) -> list[dict[str, Any]]:
        """Every object, in file order; an item that is no object is an input error."""
        items: list[dict[str, Any]] = []
        for index, doc in enumerate(self.documents):
            self._check_document(index, doc)
            if "items" not in doc and "kind" in doc and HEADER_KEY not in doc:
                items.append(doc)
                continue
            items.extend(_items_of(doc, self.origin))
        return items

    def feed(self, builder: SnapshotBuilder) -> None:
        """Every object to the builder, in the order it needs (nodes first); bad items are passed over and
        named in the snapshot's skipped list, so one does not cost the rest of the dump."""
        items: list[dict[str, Any]] = []
        header: dict[str, Any] | None = None
        problems: list[str] = []
        for index, doc in enumerate(self.documents):
            self._check_document(index, doc)
            if isinstance(doc.get(HEADER_KEY), dict):
                header = doc[HEADER_KEY]
            items.extend(_items_of(doc, self.origin, lambda _resource, problem: problems.append(problem)))
        if problems and not items:
            raise InputError(f"{self.origin}: {problems[0].removesuffix('; passed over')}, "
                             "and no item is an object doctor reads")
        for problem in problems:
            builder.skip("dump", problem)
        if header is not None and header.get("format") != DUMP_FORMAT:
            raise InputError(f"{self.origin}: unsupported kubectl-win dump format {header.get('format')!r} "
                             f"(expected {DUMP_FORMAT})")
        items.sort(key=lambda obj: _ORDER.get(str(obj.get("kind")), len(_ORDER)))
        for obj in items:
            builder.add(obj)
        if header is not None:
            builder.apply_header(header)  # after the items: its counts include objects the dump left out
        else:
            kinds = {str(obj.get("kind")) for obj in items}
            for kind, resource in RESOURCE_OF_KIND.items():
                if kind in kinds:
                    builder.mark_read(resource)
                elif kind not in ("ReplicaSet", "ReplicationController", "EndpointSlice"):
                    builder.skip(resource, "not in the dump")
            builder.skip("version", "the dump does not record the API server version; skew checks skipped")

    def _check_document(self, index: int, doc: Any) -> None:
        if not isinstance(doc, dict):
            raise InputError(f"{self.origin}: document {index + 1} is a {type(doc).__name__}, "
                             "not a Kubernetes object or List")


def read_dump_stream(stream: IO[bytes], origin: str) -> Dump:
    """A dump from a stream (a support bundle's member, say), read up to the dump size limit."""
    raw = read_stream(stream, MAX_DUMP_BYTES)
    if len(raw) > MAX_DUMP_BYTES:
        raise InputError(f"cannot read dump {origin}: larger than {MAX_DUMP_BYTES >> 20} MiB")
    text = decode_text(raw, origin)
    if isinstance(text, Problem):
        raise InputError(f"cannot read dump {text}")
    return Dump(_parse_documents(text, origin), origin)


def open_dump(path: str) -> Dump:
    """The dump file a user named (--from-dump, hns --cluster-from-dump); `-` is stdin."""
    return Dump(_parse_documents(read_input_text(path, "dump", MAX_DUMP_BYTES), path), path)


def read_dump(path: str, builder: SnapshotBuilder) -> None:
    """Feed the dump file a user named to the builder."""
    open_dump(path).feed(builder)


def _parse_documents(text: str, path: str) -> list[Any]:
    """The JSON documents of a dump (one after another, as `kubectl get -o json` runs append them), or
    its YAML documents (`kubectl get -o yaml`, as explain -f reads)."""
    if text.lstrip()[:1] not in ("{", "[") and text.strip():
        return _read_yaml_documents(text, path)
    decoder = json.JSONDecoder()
    docs = []
    position = 0
    length = len(text)
    while True:
        while position < length and text[position] in " \t\r\n":
            position += 1
        if position >= length:
            break
        try:
            doc, position = decoder.raw_decode(text, position)
        except RecursionError:
            raise InputError(f"{path}: nested too deeply to be a dump of Kubernetes objects") from None
        except json.JSONDecodeError as exc:
            what = "truncated" if exc.pos >= len(text.rstrip()) or "Unterminated" in exc.msg else "malformed"
            raise InputError(f"{path}: {what} JSON at line {exc.lineno} column {exc.colno}: {exc.msg} "
                             f"(expected the output of kubectl get ... -o json or --save-dump)") from None
        docs.append(doc)
    if not docs:
        raise InputError(f"{path}: empty dump (expected the output of kubectl get ... -o json or --save-dump)")
    return docs


def _read_yaml_documents(text: str, path: str) -> list[Any]:
    import yaml

    from kubectl_win.manifests.yamlsafe import NestingError, yaml_load_all

    try:
        docs = [doc for doc in yaml_load_all(text) if doc is not None]
    except NestingError:
        raise InputError(f"{path}: nested too deeply to be a dump of Kubernetes objects") from None
    except (ValueError, TypeError) as exc:  # an alias bomb, unhashable keys, a bad timestamp
        raise InputError(f"{path}: {' '.join(str(exc).split())}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise InputError(f"{path}: neither JSON nor valid YAML{where}: {problem} "
                         "(expected the output of kubectl get ... -o json|yaml or --save-dump)") from None
    if not docs:
        raise InputError(f"{path}: empty dump (expected the output of kubectl get ... -o json or --save-dump)")
    return docs


def _items_of(doc: dict[str, Any], path: str,
              skip: Callable[[str, str], None] | None = None) -> list[dict[str, Any]]:
    """The List's objects. With `skip`, an item that is no object (or has no kind) is passed over and named
    there, so one bad item does not cost the rest of the dump; without it, it is an input error."""
    kind = str(doc.get("kind") or "")
    if "items" not in doc:
        if kind in RESOURCE_OF_KIND:
            return [doc]
        raise InputError(f"{path}: a {kind or 'document without kind'} is not a List or an object doctor reads")
    items = doc.get("items")
    if not isinstance(items, list):
        raise InputError(f"{path}: 'items' must be a list")
    item_kind = kind[: -len("List")] if kind.endswith("List") and kind != "List" else None
    out = []
    for index, item in enumerate(items):
        problem = (f"items[{index}] is a {type(item).__name__}, not an object" if not isinstance(item, dict)
                   else f"items[{index}] has no kind" if "kind" not in item and item_kind is None
                   else f"items[{index}] has a kind that is not a string"
                   if "kind" in item and not isinstance(item["kind"], str) else None)
        if problem is not None:
            if skip is None:
                raise InputError(f"{path}: {problem}")
            skip("dump", f"{problem}; passed over")
            continue
        if "kind" not in item:
            item = {**item, "kind": item_kind}
        out.append(item)
    return out


class DumpWriter:
    """Streams reduced objects into a List file as they are read, then writes the header; the file
    appears (0600, atomically) only when the run succeeds."""

    def __init__(self, path: str, force: bool = False, redact: bool = True) -> None:
        from kubectl_win.doctor.read import share
        from kubectl_win.sharefile import SharedFile

        self.path = path
        self._redact = share.for_sharing if redact else None
        self._out = SharedFile(path, force=force, what="dump")
        note = share.NOTE if redact else share.NOTE_UNREDACTED
        self._out.write(f'{{"apiVersion": "v1", "kind": "List", "{NOTE_KEY}": {json.dumps(note)}, "items": [\n')
        self._first = True

    def write(self, obj: dict[str, Any]) -> None:
        if not self._first:
            self._out.write(",\n")
        self._first = False
        if self._redact is not None:
            obj = self._redact(obj)
        self._out.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    def finish(self, header: dict[str, Any]) -> None:
        header = {"format": DUMP_FORMAT, "schemaVersion": SCHEMA_VERSION,
                  "redacted": self._redact is not None, **header}
        self._out.write(f'\n], "{HEADER_KEY}": ' + json.dumps(header, ensure_ascii=False) + "}\n")
        self._out.commit()

    def abort(self) -> None:
        self._out.abort()
