"""Where the tests find the checkout and the files they read, named once."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
PACKAGE = ROOT / "kubectl_win"
EXAMPLES = PACKAGE / "examples"
SAMPLE_DUMP = EXAMPLES / "cluster-dump.json"  # the bundled sample cluster dump
EXAMPLE_MANIFESTS = EXAMPLES / "manifests"
DOCS = ROOT / "docs"
README = ROOT / "README.md"

TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
MESSAGES = TESTS / "corpus" / "windows_messages.yaml"  # real failure messages, with their sources

# The published Windows manifests sit beside the checkout, in shared/ (here and in CI), read in place;
# KUBECTL_WIN_SHARED names that folder for a checkout that is not beside it (a git worktree elsewhere).
SHARED_MANIFESTS = Path(os.environ.get("KUBECTL_WIN_SHARED") or ROOT.parent / "shared") / "corpus" / "windows-manifests"
