"""`scaffold patch`: add OS placement to existing manifests without losing anything.

Windows-targeted pod templates (as explain's infer_target decides) get the Windows nodeSelector,
tolerations for the Windows taints and spec.os.name; every other pod template gets
`kubernetes.io/os: linux`, so charts written for Linux stay off Windows nodes. YAML is edited with
ruamel.yaml, so comments, key order and quoting survive; untouched documents keep their exact text.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from kubectl_win.errors import InputError
from kubectl_win.manifests.inputs import Problem, iter_sources, read_text
from kubectl_win.manifests.objects import pod_templates
from kubectl_win.policy import ignores_from_annotations
from kubectl_win.scaffold.placement import Placement
from kubectl_win.wellknown import BUILD_LABEL, OS_LABEL, windows_taint_keys

PATCH_CHECK_ID = "scaffold-patch"  # kubectl-win.io/ignore: scaffold-patch leaves an object as it is


@dataclass
class FilePatch:
    source: str  # a path, or "-" for standard input
    original: str
    patched: str
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.patched != self.original

    def diff(self) -> str:
        name = "<stdin>" if self.source == "-" else self.source
        old, new = (name, name) if os.path.isabs(name) or name == "<stdin>" else (f"a/{name}", f"b/{name}")
        return "".join(difflib.unified_diff(self.original.splitlines(keepends=True),
                                            self.patched.splitlines(keepends=True), fromfile=old, tofile=new))


def patch_sources(paths: Iterable[str], placement: Placement, explicit_taints: bool,
                  stdin: IO[str] | None = None) -> list[FilePatch]:
    """Patch every file (directories expanded); InputError before anything is written if one cannot be read."""
    patches = []
    for path in paths:
        sources = list(iter_sources([path]))
        if not sources:
            raise InputError(f"{path}: no objects found (no .yaml, .yml or .json files)")
        for source in sources:
            text = read_text(source, stdin)
            if isinstance(text, Problem):
                raise InputError(str(text))
            patches.append(patch_text(text, source, placement, explicit_taints))
    return patches


def patch_text(text: str, source: str, placement: Placement, explicit_taints: bool = False) -> FilePatch:
    crlf = "\r\n" in text
    body = text.replace("\r\n", "\n") if crlf else text
    result = FilePatch(source, text, text)
    placer = _Placer(placement, explicit_taints, result)
    import yaml

    from kubectl_win.manifests.yamlsafe import vet_yaml

    try:
        if source.lower().endswith(".json") or body.lstrip()[:1] == "{":
            patched = _patch_json(body, placer)
        else:
            vet_yaml(body)  # nesting and alias bombs, before ruamel.yaml (which guards against neither)
            patched = _patch_yaml(body, placer)
    except RecursionError:
        raise InputError(f"{source}: cannot parse: nested too deeply") from None
    except ValueError as exc:
        raise InputError(f"{source}: cannot parse: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        raise InputError(f"{source}: cannot parse{where}: {exc.problem or exc.context or 'invalid YAML'}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: cannot parse: {' '.join(str(exc).split())}") from None
    if patched is not None:
        result.patched = patched.replace("\n", "\r\n") if crlf else patched
    return result


def _patch_yaml(text: str, placer: _Placer) -> str | None:
    from kubectl_win.scaffold.roundtrip import render_document, split_documents

    docs = split_documents(text)
    parts = []
    changed = False
    for doc in docs:
        if placer.patch_any(doc.data):
            changed = True
            parts.append(doc.header + render_document(doc))
        else:
            parts.append(doc.header + doc.body)
    return "".join(parts) if changed else None


def _patch_json(text: str, placer: _Placer) -> str | None:
    from kubectl_win.manifests.yamlsafe import json_loads

    data = json_loads(text)
    if not placer.patch_any(data):
        return None
    indent = _json_indent(text)
    return json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")


def _json_indent(text: str) -> int | None:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped:
            return len(line) - len(stripped) or None
    return None


class _Placer:
    """Edits objects in place and records what it did on the FilePatch."""

    def __init__(self, placement: Placement, explicit_taints: bool, result: FilePatch) -> None:
        self.placement = placement
        self.explicit_taints = explicit_taints
        self.result = result

    def patch_any(self, data: Any) -> bool:
        if not isinstance(data, dict):
            return False
        if data.get("kind") == "List" and isinstance(data.get("items"), list):
            return any([self.patch_object(item) for item in data["items"] if isinstance(item, dict)])
        return self.patch_object(data)

    def patch_object(self, obj: dict[str, Any]) -> bool:
        from kubectl_win.explain import infer_target

        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if ignores_from_annotations(meta) & {PATCH_CHECK_ID, "all", "*"}:
            return False  # e.g. a DaemonSet that runs on Linux and Windows nodes alike
        changed = False
        for template in pod_templates(obj):
            where = _display(obj)
            target = infer_target(template.spec, template.metadata)
            if target.windows:
                changed |= self._windows(obj, template.spec, template.spec_path, where)
            elif target.os in (None, "linux"):
                changed |= self._linux(template.spec, where)
        return changed

    def _linux(self, spec: dict[str, Any], where: str) -> bool:
        from kubectl_win.explain import infer_target

        placed = infer_target({k: v for k, v in spec.items() if k != "os"})
        if placed.os == "linux":
            return False  # nodeSelector or node affinity already keeps it on Linux nodes
        if not _set_selector(spec, OS_LABEL, "linux"):
            return False
        self.result.changes.append(f"{where}: nodeSelector {OS_LABEL}=linux")
        return True

    def _windows(self, obj: dict[str, Any], spec: dict[str, Any], spec_path: tuple[Any, ...], where: str) -> bool:
        changed = False
        if _set_selector(spec, OS_LABEL, "windows"):
            self.result.changes.append(f"{where}: nodeSelector {OS_LABEL}=windows")
            changed = True
        build = self.placement.build
        if not isinstance(spec.get("nodeSelector"), dict):
            self.result.warnings.append(f"{where}: nodeSelector is not a mapping; left as it is")
        elif build is not None:
            current = spec["nodeSelector"].get(BUILD_LABEL)
            if current is None:
                _set_selector(spec, BUILD_LABEL, build.version)
                self.result.changes.append(f"{where}: nodeSelector {BUILD_LABEL}={build.version}")
                changed = True
            elif str(current) != build.version:
                self.result.warnings.append(f"{where}: already pinned to {BUILD_LABEL}={current}; left as it is")
        changed |= self._tolerations(spec, where)
        changed |= self._os_field(obj, spec, spec_path, where)
        return changed

    def _tolerations(self, spec: dict[str, Any], where: str) -> bool:
        existing = spec.get("tolerations")
        if existing is not None and not isinstance(existing, list):
            self.result.warnings.append(f"{where}: tolerations is not a list; left as it is")
            return False
        existing = existing or []
        if not self.explicit_taints and any(_windows_toleration(t) for t in existing):
            return False  # the author already chose a Windows taint scheme
        missing = [t for t in self.placement.tolerations if not any(_covers(e, t) for e in existing)]
        if not missing:
            return False
        if spec.get("tolerations") is None:
            _put(spec, "tolerations", _new_seq(), after=("nodeSelector", "os"))
        for toleration in missing:
            spec["tolerations"].append(_new_map(toleration))
            self.result.changes.append(f"{where}: toleration {_describe(toleration)}")
        return True

    def _os_field(self, obj: dict[str, Any], spec: dict[str, Any], spec_path: tuple[Any, ...], where: str) -> bool:
        if isinstance(spec.get("os"), dict) and spec["os"].get("name") is not None:
            return False
        before = _errors(obj, spec_path)
        previous = spec.get("os", _MISSING)
        if previous is _MISSING:
            _insert(spec, "os", _new_map({"name": "windows"}), after=())
        else:
            spec["os"] = _new_map({"name": "windows"})
        rejected = sorted(_errors(obj, spec_path) - before)
        if rejected:
            # spec.os.name would turn ignored Linux-only fields into API errors: keep the manifest deployable.
            if previous is _MISSING:
                del spec["os"]
            else:
                spec["os"] = previous
            self.result.warnings.append(
                f"{where}: spec.os.name not set: the API server would then reject {', '.join(rejected)}; "
                "remove those fields (see kubectl win explain) and patch again")
            return False
        self.result.changes.append(f"{where}: spec.os.name=windows")
        return True


_MISSING = object()


def _errors(obj: dict[str, Any], spec_path: tuple[Any, ...]) -> set[str]:
    from kubectl_win.explain import lint_object

    prefix = ".".join(str(p) for p in spec_path)
    return {f.path for f in lint_object(obj) if f.severity == "error" and f.path.startswith(prefix)}


def _set_selector(spec: dict[str, Any], label: str, value: str) -> bool:
    selector = spec.get("nodeSelector")
    if selector is None:
        _put(spec, "nodeSelector", _new_map({label: value}), after=("os",))
        return True
    if not isinstance(selector, dict) or selector.get(label) == value:
        return False
    if label in selector:
        return False  # a different value is the author's decision
    selector[label] = value
    return True


def _put(spec: dict[str, Any], key: str, value: Any, after: tuple[str, ...]) -> None:
    """Set a key that is absent or null: a null value is replaced where it stands, a new key is inserted."""
    if key in spec:
        spec[key] = value
    else:
        _insert(spec, key, value, after)


def _insert(spec: dict[str, Any], key: str, value: Any, after: tuple[str, ...]) -> None:
    """Insert near the top of the pod spec (after the keys we add ourselves), where no comment is attached."""
    position = 0
    for index, existing in enumerate(spec):
        if existing in after:
            position = index + 1
    if hasattr(spec, "insert"):
        spec.insert(position, key, value)
    else:
        items = list(spec.items())
        items.insert(position, (key, value))
        spec.clear()
        spec.update(items)


def _new_map(values: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    out = CommentedMap()
    for k, v in values.items():
        out[k] = v
    return out


def _new_seq() -> Any:
    from ruamel.yaml.comments import CommentedSeq

    return CommentedSeq()


def _windows_toleration(toleration: Any) -> bool:
    key = toleration.get("key") if isinstance(toleration, dict) else None
    return isinstance(key, str) and key in windows_taint_keys()


def _covers(existing: Any, wanted: dict[str, str]) -> bool:
    """Whether an existing toleration already tolerates everything `wanted` does."""
    if not isinstance(existing, dict):
        return False
    key, effect = existing.get("key"), existing.get("effect")
    if key and key != wanted["key"] or effect and effect != wanted["effect"]:
        return False
    if existing.get("operator") == "Exists":
        return True
    return wanted["operator"] == "Equal" and existing.get("value") == wanted.get("value") and bool(key)


def _describe(toleration: dict[str, str]) -> str:
    value = f"={toleration['value']}" if "value" in toleration else ""
    return f"{toleration['key']}{value}:{toleration['effect']}"


def _display(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = f"{obj.get('kind', '?')}/{meta.get('name', '?')}"
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else name
