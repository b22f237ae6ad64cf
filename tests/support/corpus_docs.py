"""The graded figures docs/doctor.md and the README give, measured now (aggregates only).

`python -m tests.support.corpus_docs docs/doctor.md README.md` rewrites them; tests/test_failure_model.py fails
when either differs from what the corpora measure.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from tests.support import fresh_reading
from tests.support.corpus_figures import CORPUS_DIR, HEADERS, Figures, corpora, expected_subsystems, load, measure
from tests.support.corpus_split import in_round_order


@cache
def documented() -> tuple[tuple[str, Figures], ...]:
    """The corpora docs/doctor.md gives figures for, measured once a process (the docs' table and the README's
    sentence read the same measurement): (its name there, its figures), held-out parts first (the newest round's
    first), then the training parts and the earlier corpus."""
    parts = corpora()
    rounds = sorted((name for name in parts if "/" in name), key=in_round_order, reverse=True)
    order = [n for n in rounds if "held" in n] + ["held_out"] + [n for n in rounds if "held" not in n] + ["failures"]
    shown = {"held_out": "`tests/corpus/held_out/` (held out)", "failures": "`tests/corpus/failures/` (training)"}
    out = [(shown.get(name, f"`tests/corpus/{name}.yaml`" + (" (held out)" if "held" in name else " (training)")),
            measure(name, load(*parts[name]))) for name in order if name in parts]
    earlier = load(CORPUS_DIR / "windows_messages.yaml")
    out.append(("`tests/corpus/windows_messages.yaml` (earlier; key: the entry's class)",
                measure("windows_messages (earlier)", earlier, expected_subsystems(earlier))))
    out.append(("the training parts, each entry without the knowledge built from its own thread (read fresh)",
                fresh_reading.figures()))
    return tuple(out)


def update_docs(path: str) -> None:
    """Rewrite docs/doctor.md's table of figures from what the corpora measure now (aggregates only)."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    head, rest = text.split("<!-- corpus figures -->\n", 1)
    _table, tail = rest.split("\n\n", 1)
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += [f"| {name} | " + " | ".join(figures.row()[1:]) + " |" for name, figures in documented()]
    file.write_text(head + "<!-- corpus figures -->\n" + "\n".join(lines) + "\n\n" + tail, encoding="utf-8")


def readme_claim() -> str:
    """The README's sentence of graded figures, as measured now: every held-out part, then the training parts."""
    parts = dict(documented())
    held = [(name, f) for name, f in parts.items() if "(held out)" in name]
    training = sum((f.grades["wrong"] for name, f in parts.items() if "(training)" in name), 0)
    right = sum((f.grades["right"] for name, f in parts.items() if "(training)" in name), 0)
    total = sum((f.graded for name, f in parts.items() if "(training)" in name), 0)
    said = [f"on {f.graded} held-out real failure{'' if f.graded == 1 else 's'}{_round_of(name)} from "
            f"public issue trackers: {f.grades['wrong']} wrong ({f.rate('wrong'):.1f}%), {f.grades['right']} right, "
            f"{f.grades['honest']} honestly unsure, {f.grades['silent']} silent" for name, f in held]
    return "; ".join(said) + f"; on the {total} training failures {training} wrong, {right} right"


def _round_of(name: str) -> str:
    found = re.search(r"/round(\d+)/", name)
    return f" of collection round {found.group(1)}" if found else ""


def update_readme(path: str, width: int = 110) -> None:
    """Rewrite the README's graded figures (one sentence, wrapped like the paragraph around it) from what the
    corpora measure now."""
    import textwrap

    file = Path(path)
    text = file.read_text(encoding="utf-8")
    words = r"on \d+ held-out real failures?.*?on the \d+ training failures \d+ wrong, \d+ right"
    found = re.search(words.replace(" ", r"\s+"), text, re.DOTALL)
    if found is None:
        raise SystemExit(f"{path}: no graded figures to update")
    line_start = text.rfind("\n", 0, found.start()) + 1
    lead = found.start() - line_start  # what the first line holds before the sentence
    lines = textwrap.wrap(" " * lead + readme_claim(), width)
    new = "\n".join(lines)[lead:]
    file.write_text(text[:found.start()] + new + text[found.end():], encoding="utf-8")


if __name__ == "__main__":  # python -m tests.support.corpus_docs docs/doctor.md README.md
    import sys

    update_docs(sys.argv[1])
    update_readme(sys.argv[2])
