"""Walk an argparse parser along the words typed so far and say what may come next.

Pure: the parser and the words go in, candidates and a directive come out. Live names are
asked of a `NameSource` (see live.py), so tests can pass their own and nothing here imports
`kubernetes`.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubectl_win.completion import hints
from kubectl_win.completion.model import Candidate, Completion, Directive

# (resource, parsed flag values) -> [(name, description)]; never raises, returns [] on any failure.
NameSource = Callable[[hints.LiveNames, dict[str, str]], list[tuple[str, str]]]


def _no_names(hint: hints.LiveNames, values: dict[str, str]) -> list[tuple[str, str]]:
    return []


@dataclass
class _State:
    parser: argparse.ArgumentParser
    command_path: list[str] = field(default_factory=list)
    positionals_done: int = 0
    pending: argparse.Action | None = None
    pending_left: int = 0  # values the pending option still needs; -1 = any number
    values: dict[str, str] = field(default_factory=dict)
    used: set[argparse.Action] = field(default_factory=set)
    after_double_dash: bool = False


def complete(parser: argparse.ArgumentParser, args: Sequence[str], names: NameSource = _no_names) -> Completion:
    """Complete the last of `args` (the word under the cursor, "" for a new word)."""
    words = list(args) or [""]
    *done, current = words
    state = _State(parser)
    for word in done:
        _consume(state, word)
    return _complete_current(state, current, names)


def _consume(state: _State, word: str) -> None:
    if state.pending is not None and (state.pending_left != -1 or not _looks_like_flag(word)):
        state.values[state.pending.dest] = word
        if state.pending_left > 0:
            state.pending_left -= 1
        if state.pending_left == 0:
            state.pending = None
        return
    state.pending = None
    if word == "--" and not state.after_double_dash:
        state.after_double_dash = True
        return
    if _looks_like_flag(word) and not state.after_double_dash:
        _consume_flag(state, word)
        return
    subparsers = _subparsers(state.parser)
    if subparsers is not None and word in subparsers.choices:
        state.parser = subparsers.choices[word]
        state.command_path.append(word)
        state.positionals_done = 0
        return
    action = _positional_at(state.parser, state.positionals_done)
    if action is not None:
        state.values[action.dest] = word
    state.positionals_done += 1


def _consume_flag(state: _State, word: str) -> None:
    name, has_value, value = word.partition("=")
    action = _option(state.parser, name)
    if action is None and not word.startswith("--") and len(word) > 2:
        # -nkube-system: a short flag with its value attached
        action, has_value, value = _option(state.parser, word[:2]), "=", word[2:]
    if action is None:
        return
    state.used.add(action)
    if has_value:
        state.values[action.dest] = value
        return
    count = _values_needed(action)
    if count != 0:
        state.pending, state.pending_left = action, count


def _complete_current(state: _State, current: str, names: NameSource) -> Completion:
    if state.pending is not None and not (state.pending_left == -1 and _looks_like_flag(current)):
        return _values(state, state.pending, current, names)
    if current.startswith("-") and not state.after_double_dash:
        name, has_value, partial = current.partition("=")
        if not has_value and not current.startswith("--") and len(current) > 2:
            name, has_value, partial = current[:2], "", current[2:]  # -nkube-sys: value attached
            action = _option(state.parser, name)
            if action is not None and _values_needed(action) != 0:
                return _values(state, action, partial, names, prefix=name)
            return Completion()
        if has_value:
            action = _option(state.parser, name)
            if action is None or _values_needed(action) == 0:
                return Completion()
            return _values(state, action, partial, names, prefix=f"{name}=")
        return _flags(state, current)
    subparsers = _subparsers(state.parser)
    if subparsers is not None:
        return Completion(_filter(_subcommands(subparsers), current))
    action = _positional_at(state.parser, state.positionals_done)
    if action is None:
        return Completion()
    return _values(state, action, current, names)


def _values(state: _State, action: argparse.Action, current: str, names: NameSource,
            prefix: str = "") -> Completion:
    if action.choices is not None:
        choices = [Candidate(prefix + str(choice)) for choice in action.choices]
        return Completion(_filter(choices, prefix + current))
    values = state.values
    hint = (hints.BY_DEST.get(f"{' '.join(state.command_path)}:{action.dest}") or hints.BY_DEST.get(action.dest)
            or hints.BY_METAVAR.get(str(action.metavar or "")))
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
    for action in state.parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        if action in state.used and not _repeatable(action):
            continue
        for option in action.option_strings:
            candidates.append(Candidate(option, _describe(action)))
    return Completion(_filter(candidates, current))


def _subcommands(subparsers: argparse._SubParsersAction) -> list[Candidate]:
    described = {choice.dest: choice.help or "" for choice in subparsers._choices_actions}
    return [Candidate(name, described.get(name, "")) for name in subparsers.choices
            if not name.startswith("_") and described.get(name) != argparse.SUPPRESS]


def _filter(candidates: list[Candidate], current: str) -> list[Candidate]:
    return [candidate for candidate in candidates if candidate.value.startswith(current)]


def _describe(action: argparse.Action) -> str:
    text = str(action.help or "")
    if "%" in text:
        try:
            text = text % {**vars(action), "prog": "kubectl win"}
        except (KeyError, TypeError, ValueError):
            pass
    return text


def _option(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    return parser._option_string_actions.get(name)


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _positional_at(parser: argparse.ArgumentParser, index: int) -> argparse.Action | None:
    seen = 0
    for action in parser._actions:
        if action.option_strings or isinstance(action, argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.nargs in ("*", "+", argparse.REMAINDER):
            return action
        width = action.nargs if isinstance(action.nargs, int) else 1
        if index < seen + width:
            return action
        seen += width
    return None


def _values_needed(action: argparse.Action) -> int:
    if action.nargs == 0:
        return 0
    if action.nargs is None or action.nargs == "?":
        return 1
    if isinstance(action.nargs, int):
        return action.nargs
    return -1


def _repeatable(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction | argparse._CountAction | argparse._ExtendAction)


def _looks_like_flag(word: str) -> bool:
    return word.startswith("-") and word != "-"
