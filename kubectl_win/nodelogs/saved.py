"""A node component's log saved to a file (a ticket's attachment, a copy off the node): whose log it is, and its
lines, for `kubectl win logs --from-file`. No cluster: nothing here imports the Kubernetes client.

Whose log: the file names the distributions keep logs under (knowledge/node_logs.yaml: kubelet.err.log,
kubeproxy.log, azure-vnet.log, ...), else the one component whose name is in the file's name
(`win-a_kubelet.1.log`), else the caller must say (--component).
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import IO

from kubectl_win.errors import UsageError
from kubectl_win.manifests.inputs import encoding_of
from kubectl_win.nodelogs import locations


@cache
def _known_names() -> dict[str, str]:
    """file name (lower case) -> component, over every distribution's file and outside locations."""
    names: dict[str, str] = {}
    for dist in locations.distributions():
        for component, places in dist.logs.items():
            for place in places:
                if place.kind not in ("file", "outside"):
                    continue
                for part in re.split(r"[;,]", place.value):
                    leaf = re.split(r"[\\/]", part.strip())[-1].lower()
                    if leaf.endswith(".log"):
                        names.setdefault(leaf, component)
    return names


def component_of_file(path: str) -> str | None:
    """The component whose log the file is, by its name; None when the name does not tell."""
    name = re.split(r"[\\/]", path)[-1].lower()
    known = _known_names()
    if name in known:
        return known[name]
    # kubelet.1.log, kubelet-20261201.log, win-a_kubeproxy (1).log: the stem of a known name, or a component's
    # own name, inside it (panic.log is containerd's only by its place, so a bare "panic" tells nothing).
    stems = {leaf.split(".", 1)[0]: component for leaf, component in known.items() if leaf != "panic.log"}
    stems.update((component, component) for component in locations.components())
    hits = {component for stem, component in stems.items() if stem in name}
    return hits.pop() if len(hits) == 1 else None


def pick_component(path: str, given: str | None) -> str:
    """--component (checked by the command), else what the file's name says (UsageError when it says nothing)."""
    if given is not None:
        return given
    found = component_of_file(path)
    if found is None:
        raise UsageError(f"cannot tell whose log {path!r} is from its name: add --component "
                         f"({'|'.join(locations.components())})")
    return found


@contextmanager
def open_saved(path: str) -> Iterator[IO[str]]:
    """The file (or stdin for "-") as text, whatever encoding Windows saved it in; a one-line error otherwise."""
    if path == "-":
        yield sys.stdin
        return
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below, after the encoding is known
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    with raw:
        head = raw.read(4)
        raw.seek(0)
        encoding = encoding_of(head)  # PowerShell's `>` writes UTF-16 with a byte-order mark
        with io.TextIOWrapper(raw, encoding=encoding, errors="replace") as text:
            yield text


def saved_lines(stream: IO[str]) -> Iterator[str]:
    for line in stream:
        yield line.rstrip("\r\n")
