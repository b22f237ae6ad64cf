"""Walk the command tree along the words typed so far and say what may come next.

Pure: the tree (exported from the typer application, see tree.py) and the words go in,
candidates and a directive come out. Live names are asked of a `NameSource` (see cluster_names.py), so
tests can pass their own and nothing here imports `kubernetes`, typer or click.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_win.completion import hints
from kubectl_win.completion.model import Candidate, Completion, Directive

# (resource, parsed flag values) -> [(name, description)]; never raises, returns [] on any failure.
NameSource = Callable[[hints.LiveNames, dict[str, str]], list[tuple[str, str]]]
Node = dict[str, Any]  # a command: see tree.py
Param = dict[str, Any]  # an option or an argument of a command


def _no_names(hint: hints.LiveNames, values: dict[str, str]) -> list[tuple[str, str]]:
    return []


@dataclass
class _State:
    node: Node
    command_path: list[str] = field(default_factory=list)
    positionals_done: int = 0
    pending: Param | None = None
    values: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)  # dests of options already given
    after_double_dash: bool = False


def complete(tree: Node, args: Sequence[str], names: NameSource = _no_names) -> Completion:
    """Complete the last of `args` (the word under the cursor, "" for a new word)."""
    words = list(args) or [""]
    *done, current = words
    state = _State(tree)
    for word in done:
        _consume(state, word)
    return _complete_current(state, current, names)


def _consume(state: _State, word: str) -> None:
    if state.pending is not None:
        state.values[state.pending["dest"]] = word
        state.pending = None
        return
    if word == "--" and not state.after_double_dash:
        state.after_double_dash = True
        return
    if _looks_like_flag(word) and not state.after_double_dash:
        _consume_flag(state, word)
        return
    commands = state.node.get("commands") or {}
    if word in commands and state.positionals_done == 0:
        state.node = commands[word]
        state.command_path.append(word)
        return
    argument = _positional_at(state.node, state.positionals_done)
    if argument is not None:
        state.values[argument["dest"]] = word
    state.positionals_done += 1


def _consume_flag(state: _State, word: str) -> None:
    name, has_value, value = word.partition("=")
    option = _option(state.node, name)
    if option is None and not word.startswith("--") and len(word) > 2:
        # -nkube-system: a short flag with its value attached
        option, has_value, value = _option(state.node, word[:2]), "=", word[2:]
    if option is None:
        return
    state.used.add(option["dest"])
    if has_value:
        state.values[option["dest"]] = value
    elif not option["flag"]:
        state.pending = option


def _complete_current(state: _State, current: str, names: NameSource) -> Completion:
    if state.pending is not None:
        return _values(state, state.pending, current, names)
    if current.startswith("-") and not state.after_double_dash:
        name, has_value, partial = current.partition("=")
        if not has_value and not current.startswith("--") and len(current) > 2:
            option = _option(state.node, current[:2])  # -nkube-sys: value attached
            if option is not None and not option["flag"]:
                return _values(state, option, current[2:], names, prefix=current[:2])
            return Completion()
        if has_value:
            option = _option(state.node, name)
            if option is None or option["flag"]:
                return Completion()
            return _values(state, option, partial, names, prefix=f"{name}=")
        return _flags(state, current)
    commands = state.node.get("commands") or {}
    if commands and state.positionals_done == 0:
        return Completion(_filter([Candidate(name, node.get("help", "")) for name, node in commands.items()],
                                  current))
    argument = _positional_at(state.node, state.positionals_done)
    if argument is None:
        return Completion()
    return _values(state, argument, current, names)


def _values(state: _State, param: Param, current: str, names: NameSource, prefix: str = "") -> Completion:
    if param.get("choices") is not None:
        choices = [Candidate(prefix + str(choice)) for choice in param["choices"]]
        return Completion(_filter(choices, prefix + current))
    values = state.values
    dest = param["dest"]
    hint = (hints.BY_DEST.get(f"{' '.join(state.command_path)}:{dest}") or hints.BY_DEST.get(dest)
            or hints.BY_METAVAR.get(str(param.get("metavar") or "")))
    if isinstance(hint, hints.FieldPaths):
        found = _field_paths() if state.positionals_done == 0 else []
        return Completion(_filter([Candidate(prefix + value, text) for value, text in found], prefix + current))
    if isinstance(hint, hints.WindowsBuilds):
        return Completion(_filter([Candidate(prefix + value, text) for value, text in _windows_builds(hint)],
                                  prefix + current))
    if isinstance(hint, hints.Files):
        if hint.extensions:
            return Completion([Candidate(ext) for ext in hint.extensions], Directive.FILTER_FILE_EXT)
        return Completion(directive=Directive.DEFAULT)
    if isinstance(hint, hints.Directories):
        return Completion(directive=Directive.FILTER_DIRS)
    if isinstance(hint, hints.LiveNames):
        found = [Candidate(prefix + name, description) for name, description in names(hint, values)]
        return Completion(_filter(found, prefix + current))
    if isinstance(hint, hints.TypedNames):
        return _typed_names(hint, current, values, names, prefix)
    return Completion()  # free text (a selector, a port): nothing sensible to offer


def _typed_names(hint: hints.TypedNames, current: str, values: dict[str, str], names: NameSource,
                 prefix: str) -> Completion:
    for type_prefix, resource in hint.types:
        if current.startswith(type_prefix):
            found = names(hints.LiveNames(resource), values)
            candidates = [Candidate(prefix + type_prefix + name, description) for name, description in found]
            return Completion(_filter(candidates, prefix + current))
    types = [Candidate(prefix + type_prefix) for type_prefix in hint.offered]
    return Completion(_filter(types, prefix + current), Directive.NO_FILE | Directive.NO_SPACE)


def _windows_builds(hint: hints.WindowsBuilds) -> list[tuple[str, str]]:
    from kubectl_win.knowledge import load

    offered: dict[str, str] = {}
    for build in load("windows_builds").get("builds", []):
        if hint.supported_only and not build.get("supported"):
            continue
        for tag in build.get("image_tags", []):
            if str(tag).startswith("ltsc"):
                offered.setdefault(str(tag), str(build.get("name", "")))
        offered.setdefault(str(build.get("version")), str(build.get("name", "")))
    return list(offered.items())


def _field_paths() -> list[tuple[str, str]]:
    """Field paths in the form explain accepts and shells need no quoting for (no [*], no keys)."""
    from kubectl_win.knowledge import load

    offered: dict[str, str] = {}
    for rule in load("field_rules").get("rules", []):
        for field_path in rule.get("fields", []):
            plain = str(field_path).replace("[*]", "")
            if re.fullmatch(r"[A-Za-z0-9.]+", plain):
                offered.setdefault(plain, f"{rule.get('status', '')}: {rule.get('summary', '')}")
    return sorted(offered.items())


def _flags(state: _State, current: str) -> Completion:
    candidates = []
    for option in state.node.get("options") or []:
        if option["dest"] in state.used and not option["multiple"]:
            continue
        for name in option["names"]:
            candidates.append(Candidate(name, option.get("help") or ""))
    return Completion(_filter(candidates, current))


def _filter(candidates: list[Candidate], current: str) -> list[Candidate]:
    return [candidate for candidate in candidates if candidate.value.startswith(current)]


def _option(node: Node, name: str) -> Param | None:
    for option in node.get("options") or []:
        if name in option["names"]:
            return option
    return None


def _positional_at(node: Node, index: int) -> Param | None:
    for position, argument in enumerate(node.get("arguments") or []):
        if argument["nargs"] == -1 or position == index:
            return argument
    return None


def _looks_like_flag(word: str) -> bool:
    return word.startswith("-") and word != "-"
