"""Each training entry graded as doctor answers it without the knowledge built from the entry's own thread.

A held-out part is small (7 to 38 entries a round) and clean only until the first change measured against it.
The training parts are ten times larger, but the knowledge was built from them: a condition or catalogue entry
written from a thread cites that thread (`sources`), so a training entry's own answer often comes from what its
own thread taught. Disarming the knowledge entries that cite an entry's thread (their patterns and codes match
nothing) and grading the entry again shows how doctor answers a failure nobody taught it, as a held-out part
does: every other thread's knowledge is still there and may claim the message wrongly. That is the figure a
change to a broad condition moves, and it can be read entry by entry without spoiling a held-out part. It
flatters doctor all the same (knowledge was also shaped by training entries' wrong answers without citing them):
a round read at its split does worse, so the held-out parts stay the measure (docs/doctor.md).

Disarmed, not removed: a catalogue entry's check id stays, so a structural rule that names it still resolves.
The knowledge loader is swapped for one that disarms (every kubectl_win module that imported `load` gets it) and
every cache built from the knowledge is cleared before and after; nothing of the Kubernetes client is touched.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cache
from typing import Any

from tests.support import corpus_figures
from tests.support.corpus_split import threads

# The knowledge files doctor reads a failure message with; the others (builds, platforms, HNS) are not fitted
# to a thread's message.
READING = frozenset({"failure_model", "symptoms", "error_chains"})
NEVER = "(?!x)x"  # a pattern that matches nothing


def own_threads(entry: dict[str, Any]) -> frozenset[str]:
    """The entry's thread and the threads its key's source cites (the fix PR that established the cause)."""
    return threads(str(entry.get("url") or "")) | threads(str((entry.get("expect") or {}).get("source") or ""))


def _cited_by(item: dict[str, Any]) -> frozenset[str]:
    sources = item.get("sources", item.get("source"))
    return threads(" ".join(map(str, sources)) if isinstance(sources, list) else str(sources or ""))


def disarm(data: Any, excluded: frozenset[str]) -> Any:
    """The knowledge with every entry citing one of `excluded` made to match nothing."""
    if isinstance(data, dict):
        return {key: disarm(value, excluded) for key, value in data.items()}
    if not isinstance(data, list):
        return data
    out = []
    for item in data:
        if isinstance(item, dict) and _cited_by(item) & excluded:
            if not any(key in item for key in ("patterns", "pattern", "codes")) and "check" not in item:
                continue  # nothing to match with (a known bug without a pattern): leave it out
            item = dict(item)
            for key, empty in (("patterns", [NEVER]), ("pattern", NEVER), ("codes", [])):
                if key in item:
                    item[key] = empty
        out.append(disarm(item, excluded))
    return out


def _clear_caches() -> None:
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("kubectl_win"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@contextmanager
def without(excluded: frozenset[str]) -> Iterator[None]:
    """Doctor reads with the knowledge citing `excluded` disarmed, inside the block only."""
    import kubectl_win.knowledge as knowledge

    original = knowledge.load

    def load(name: str) -> Any:
        data = original(name)
        return disarm(data, excluded) if name in READING else data

    importers = [module for module in list(sys.modules.values())
                 if getattr(module, "__name__", "").startswith("kubectl_win") and
                 getattr(module, "load", None) is original]
    for module in importers:
        module.load = load  # type: ignore[attr-defined]
    _clear_caches()
    try:
        yield
    finally:
        for module in importers:
            module.load = original  # type: ignore[attr-defined]
        _clear_caches()


@cache
def _cited() -> frozenset[str]:
    """Every thread a knowledge entry doctor reads messages with cites."""
    from kubectl_win.knowledge import load

    found: set[str] = set()

    def walk(data: Any) -> None:
        if isinstance(data, dict):
            found.update(_cited_by(data))
            for value in data.values():
                walk(value)
        elif isinstance(data, list):
            for item in data:
                walk(item)

    for name in sorted(READING):
        walk(load(name))
    return frozenset(found)


def measure(name: str, entries: list[dict[str, Any]]) -> corpus_figures.Figures:
    """The corpus graded entry by entry without its own threads' knowledge. Entries whose threads taught the same
    knowledge are read together, and those whose threads taught nothing in one plain pass."""
    corpus_figures.answer_findings([])  # imports every module that reads the knowledge, so `without` reaches it
    figures = corpus_figures.Figures(name, total=len(entries))
    groups: dict[frozenset[str], list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        groups[own_threads(entry) & _cited()].append(entry)  # the threads that taught it something
    for excluded, group in groups.items():
        with without(excluded) if excluded else nullcontext():
            wanted = corpus_figures.expected_subsystems(group)
            corpus_figures.tally(figures, group, wanted, corpus_figures.answer_findings(group))
    return corpus_figures.keep(figures)


NAME = "training, each entry without its own thread's knowledge"


@cache
def figures() -> corpus_figures.Figures:
    """The training parts read fresh, measured once a session (the docs and the README read it too)."""
    return measure(NAME, training_entries())


def training_entries() -> list[dict[str, Any]]:
    """Every training entry keyed by its own thread (expect.right): the class-keyed earlier corpus is left out,
    since a model answer stating its cause in other words can never match a catalogue id."""
    parts = corpus_figures.corpora()
    return [entry for name, paths in sorted(parts.items()) if "held" not in name
            for entry in corpus_figures.load(*paths) if (entry.get("expect") or {}).get("right")]
