"""README example output against the real output, and the tool that brings the README up to date.

A README example is a ```console block line `$ kubectl win ...` followed by its output. Output lines are
compared with the real output in order, with runs of spaces collapsed (table widths follow the data); a
line that is only `...` stands for any number of lines, and ` ... ` inside a line for any text. Only
examples that run offline are checked (bundled files, `explain FIELD`, `scaffold` without a cluster).

    python -m tests.support.readme_examples            # list the differences
    python -m tests.support.readme_examples --update   # rewrite the README's example output from the real output

The update keeps the README's shape: each line is replaced by the real line with the same first two
words (a finding's id and object, say) when it no longer matches, the lines between two `...` are put in
the order the command prints them, and lines it does not print together become the lines it prints from
the first of them on.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass

from tests.support.paths import README, ROOT

ELISION = "..."


@dataclass
class Example:
    command: str  # without the leading "$ "
    first_line: int  # index of the first output line in the README's lines
    output: list[str]


def offline(command: str) -> bool:
    if "|" in command or ">" in command:
        return False
    try:
        argv = shlex.split(command.split("  #")[0])
    except ValueError:
        return False
    if argv[:2] != ["kubectl", "win"]:
        return False
    words = argv[2:]
    if any(word.startswith("kubectl_win/examples/") for word in words):
        return True
    if words[:1] == ["explain"] and len(words) == 2 and "." in words[1]:
        return True
    return words[:1] == ["scaffold"] and not {"--from-cluster", "--out", "-o", "..."} & set(words)


def examples(text: str | None = None) -> list[Example]:
    """The README's examples with output that run offline."""
    return [e for e in console_examples(README.read_text(encoding="utf-8") if text is None else text)
            if offline(e.command)]


def console_examples(text: str) -> list[Example]:
    """Every `$ command` of the text's ```console blocks that shows output (docs check theirs against a test
    cluster with `differences`)."""
    lines = text.splitlines()
    found: list[Example] = []
    inside = False
    current: Example | None = None
    for index, line in enumerate(lines):
        if line.startswith("```"):
            inside = line == "```console"
            current = None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            current = Example(line[2:], index + 1, [])
            found.append(current)
        elif current is not None and current.command.endswith("\\") and not current.output:
            current.command = current.command[:-1] + line.strip()  # a continued command line
            current.first_line = index + 1
        elif current is not None:
            current.output.append(line)
    for example in found:
        while example.output and not example.output[-1].strip():
            example.output.pop()
    return [e for e in found if e.output]


def real_output(command: str) -> list[str]:
    import os

    from tests.support.cli import run_cli

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = run_cli(*shlex.split(command.split("  #")[0])[2:])
    finally:
        os.chdir(cwd)
    return result.stdout.rstrip("\n").splitlines()


def _squash(line: str) -> str:
    return " ".join(line.split())


def line_matches(shown: str, real: str) -> bool:
    pieces = [_squash(p) for p in f" {shown} ".split(" ... ")]
    pattern = ".*".join(re.escape(p) for p in pieces)
    return re.fullmatch(pattern, _squash(real)) is not None


def differences(shown: list[str], real: list[str]) -> list[str]:
    """What in `shown` the real output does not back up, in order (empty when the README is right)."""
    problems = []
    cursor = 0
    free = False  # after an elision, any number of real lines may be skipped
    for line in shown:
        if line.strip() == ELISION:
            free = True
            continue
        if not line.strip():
            continue
        at = next((i for i in range(cursor, len(real) if free else min(cursor + 1, len(real)))
                   if line_matches(line, real[i])), None)
        if at is None:
            problems.append(f"not printed here: {line.strip()[:120]}")
            continue
        cursor, free = at + 1, False
    return problems


def _key(line: str) -> tuple[str, ...]:
    return tuple(line.split()[:2])


def updated(shown: list[str], real: list[str]) -> list[str]:
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELISION:
            segments.append([line])
            segments.append([])
        else:
            segments[-1].append(line)
    out: list[str] = []
    for segment in segments:
        if segment and segment[0].strip() == ELISION:
            out.extend(segment)
            continue
        placed = []
        for line in segment:
            index = next((i for i, r in enumerate(real) if line_matches(line, r)), None)
            if index is None:
                index = next((i for i, r in enumerate(real) if _key(r) == _key(line) and line.strip()), None)
                line = real[index] if index is not None else line
            placed.append((index if index is not None else len(real), line))
        placed.sort(key=lambda item: item[0])
        indexes = [index for index, _ in placed]
        if indexes and indexes[-1] < len(real) and indexes != list(range(indexes[0], indexes[0] + len(indexes))):
            # Lines the command does not print together: show what it prints from the first of them on.
            placed = [(i, real[i]) for i in range(indexes[0], min(indexes[0] + len(indexes), len(real)))]
        out.extend(line for _, line in placed)
    return out


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    stale = 0
    for example in reversed(examples(text)):  # from the end: earlier indexes stay valid
        real = real_output(example.command)
        problems = differences(example.output, real)
        if not problems:
            continue
        stale += 1
        print(f"$ {example.command}\n  " + "\n  ".join(problems))
        if "--update" in argv:
            end = example.first_line + len(example.output)
            lines[example.first_line:end] = updated(example.output, real)
    if "--update" in argv and stale:
        README.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 1 if stale and "--update" not in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
