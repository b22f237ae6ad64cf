"""Merge a collection round's files into tests/corpus/roundN/ and split it by the corpus rule, before anything is
built from it: h = sha256((url + "\\n" + message).encode()).digest()[0]; h % 3 == 0 -> held_out.yaml, else
failures.yaml. Linux controls (entries with os: linux) go to linux_controls.yaml unsplit.

    python -m tests.support.corpus_split 4 collected/*.yaml

(the knowledge-citation rule reads the knowledge of the commit KNOWLEDGE_AT names for the round).

An entry a key reviewer marked `drop` (it breaks the collection rules), an entry whose thread an earlier corpus
already holds (with any message), or whose thread an earlier entry of this round already gave (one entry per
thread per round: two messages of one thread share their cause), or whose thread a knowledge file already cites
(knowledge built from it: neither new nor clean), is dropped. Only counts are printed: nobody building doctor's
knowledge reads the held-out part.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import PACKAGE, TESTS

CORPUS = TESTS / "corpus"
FIELDS = ("url", "cluster", "where", "reason", "exit_code", "context", "os", "log", "message", "expect")
KEY_FIELDS = ("subsystem", "component", "operation", "condition", "cause", "right", "wrong_if", "source", "review",
              "known_bug")

HEAD = """\
# {part} of the round-{n} Windows failure corpus (issue 41: a second collection round, so that a held-out part
# can carry a 5% bar).{private}
# Real Windows-node failure messages copied verbatim (a contiguous part of the reported text, trimmed only at
# the ends) from public threads of 2019-2026, none of them held by an older corpus here. Every entry's thread
# ESTABLISHED its cause (a maintainer's diagnosis, a fix PR, or the reporter's confirmed resolution); threads
# without one were skipped. Keys were written from the threads alone, by collectors who never ran doctor.
# Split rule: h = sha256((url + "\\n" + message).encode()).digest()[0]; h % 3 == 0 -> held_out.yaml,
# else -> failures.yaml (tests/support/corpus_split.py). Decided by the rule alone, before anything was built.
# Fields as in tests/corpus/round3/failures.yaml.
"""
CONTROLS_HEAD = """\
# Linux controls of round {n}: everyday failures of Linux pods on Linux nodes (or of Linux clients), copied
# verbatim from public threads, one URL each, several shaped like a Windows entry of the round. doctor must draw
# no Windows finding for any of them (not split: none of these may be claimed).
"""


_THREAD = re.compile(r"([\w.-]+/[\w.-]+)\s*(?:PR\s*|issue\s*|pull\s*)?#(\d+)\b|"
                     r"github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull|discussions)/(\d+)", re.IGNORECASE)


def in_round_order(name: str) -> str:
    """A sort key that puts rounds in their numbers' order (round9, round10, round11; not round10 before round3)."""
    return re.sub(r"\d+", lambda number: number.group().zfill(4), name)


def threads(text: str) -> frozenset[str]:
    """The GitHub threads a text cites, by URL or as "owner/repo #N" (or "owner/repo PR #N"), as owner/repo#N
    (an issue and a PR of one repository share their numbers)."""
    out = set()
    for found in _THREAD.finditer(text or ""):
        repo, number = (found.group(1), found.group(2)) if found.group(1) else (found.group(3), found.group(4))
        out.add(f"{repo.lower()}#{number}")
    return frozenset(out)


def cited_by_knowledge(url: str, knowledge: str) -> bool:
    """Whether a knowledge file cites the thread, by its URL or as "owner/repo #N" (or "owner/repo PR #N")."""
    own = threads(url)
    return url in knowledge or bool(own and own <= threads(knowledge))


def knowledge_text(at: str | None = None) -> str:
    """Every knowledge file's text: now, or as the commit `at` held it (the knowledge a round was collected
    against: threads cited since then were cited because of the round's training part)."""
    if at is None:
        return "\n".join(p.read_text(encoding="utf-8") for p in sorted((PACKAGE / "knowledge").glob("*.yaml")))
    import subprocess

    root = PACKAGE.parent
    names = subprocess.run(["git", "ls-tree", "--name-only", at, "kubectl_win/knowledge/"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.split()
    return "\n".join(subprocess.run(["git", "show", f"{at}:{name}"], cwd=root, check=True, capture_output=True,
                                    text=True).stdout for name in sorted(names) if name.endswith(".yaml"))


def goes_to_held_out(entry: dict[str, Any]) -> bool:
    return hashlib.sha256((entry["url"] + "\n" + entry["message"]).encode()).digest()[0] % 3 == 0


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    out = {k: entry[k] for k in FIELDS if k in entry and entry[k] is not None and entry[k] != ""}
    if "expect" in out:
        expect = out["expect"]
        out["expect"] = {k: expect[k] for k in KEY_FIELDS if k in expect and expect[k] not in (None, "", [])}
    return out


def _dump(entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100000, default_flow_style=None)


def split(n: int, files: list[Path], knowledge_at: str | None = None) -> dict[str, int]:
    seen = {(e.get("url"), e.get("message")) for path in CORPUS.rglob("*.yaml")
            if f"round{n}" not in path.parts for e in (yaml.safe_load(path.read_text(encoding="utf-8")) or [])}
    parts: dict[str, list[dict[str, Any]]] = {"failures": [], "held_out": [], "linux_controls": []}
    dropped = 0
    threads = {url for url, _message in seen}  # a thread an earlier corpus holds is neither new nor clean
    knowledge = knowledge_text(knowledge_at)
    for path in sorted(files):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            entry["message"] = str(entry["message"]).strip()
            key = (entry["url"], entry["message"])
            if entry.get("drop") or key in seen or entry["url"] in threads or \
                    cited_by_knowledge(entry["url"], knowledge):
                dropped += 1
                continue
            seen.add(key)
            threads.add(entry["url"])
            part = "linux_controls" if entry.get("os") == "linux" else (
                "held_out" if goes_to_held_out(entry) else "failures")
            parts[part].append(_ordered(entry))
    folder = CORPUS / f"round{n}"
    folder.mkdir(exist_ok=True)
    for part, entries in parts.items():
        if part == "linux_controls":
            head = CONTROLS_HEAD.format(n=n)
        else:
            private = ("\n# No knowledge entry may cite these reports; nobody building doctor's knowledge reads this "
                       "file." if part == "held_out" else "")
            head = HEAD.format(part="Held-out part" if part == "held_out" else "Training part", n=n, private=private)
        (folder / f"{part}.yaml").write_text(head + _dump(entries), encoding="utf-8")
    return {**{part: len(entries) for part, entries in parts.items()}, "dropped": dropped}


# The commit whose knowledge each round was collected against (its knowledge-citation rule reads that).
KNOWLEDGE_AT = {4: "15fa336", 5: "13c4429", 6: "87c6092", 7: "a299d7f", 8: "0a70f1d", 9: "8c5e81a", 10: "63b1207",
                11: "de18a00", 12: "779aa5c", 13: "67acec0", 14: "ab4cb55", 15: "48cbf43", 16: "2763cbc"}

if __name__ == "__main__":
    round_number = int(sys.argv[1])
    counts = split(round_number, [Path(p) for p in sys.argv[2:]], KNOWLEDGE_AT.get(round_number))
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
