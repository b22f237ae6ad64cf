"""PowerShell syntax checks with a real grammar (tree-sitter-powershell), for tests of every script the tool
sends to a node or pod and of quoted PowerShell commands.

PowerShell itself does not run here; its grammar does. `parse_errors(text)` lists each ERROR or MISSING node
as "line:column: the text there" (empty for valid PowerShell); `assert_parses(text, what)` fails a test
with those. Under CI a missing grammar fails (it is in the `test` extra); elsewhere the test skips.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest


@cache
def _parser() -> Any:
    try:
        import tree_sitter
        import tree_sitter_powershell
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the PowerShell grammar is not installed ({exc.name}); pip install -e '.[test]'")
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))


def parse_errors(text: str) -> list[str]:
    """Where the grammar rejects the text: one "line:column: excerpt" per error, in order."""
    source = text.encode("utf-8")
    tree = _parser().parse(source)
    errors: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            row, column = node.start_point
            excerpt = source[node.start_byte:node.end_byte][:60].decode("utf-8", "replace")
            what = f"missing {node.type}" if node.is_missing else " ".join(excerpt.split()) or "(error)"
            errors.append(f"{row + 1}:{column + 1}: {what}")
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return errors


def assert_parses(text: str, what: str) -> None:
    errors = parse_errors(text)
    assert not errors, f"{what} is not valid PowerShell: " + "; ".join(errors[:5])
