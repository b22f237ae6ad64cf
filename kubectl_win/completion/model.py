"""The result of one completion request, in the terms of cobra's completion protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntFlag


class Directive(IntFlag):
    """cobra's ShellCompDirective bits, which kubectl and our shell scripts understand."""

    DEFAULT = 0  # let the shell complete file names
    ERROR = 1
    NO_SPACE = 2
    NO_FILE = 4
    FILTER_FILE_EXT = 8  # the candidates are file extensions to filter by
    FILTER_DIRS = 16
    KEEP_ORDER = 32


@dataclass(frozen=True)
class Candidate:
    value: str
    description: str = ""


@dataclass
class Completion:
    candidates: list[Candidate] = field(default_factory=list)
    directive: Directive = Directive.NO_FILE

    def lines(self) -> list[str]:
        """The protocol's output: one `value<TAB>description` line per candidate, then `:<directive>`."""
        out = []
        for candidate in self.candidates:
            description = " ".join(candidate.description.split())
            out.append(f"{candidate.value}\t{description}" if description else candidate.value)
        out.append(f":{int(self.directive)}")
        return out
