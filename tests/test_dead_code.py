"""No dead code: every function, method and class defined in kubectl_win/ is used somewhere (the package,
its tests or bench/), other than where it is defined. A name that only its definition mentions goes."""

from __future__ import annotations

import ast
import re
from collections import Counter

from tests.support.paths import ROOT

# Called by a framework, never by name in our code: click's help formatting hook, the kubernetes
# loader's exec-plugin step (kube/credential_plugin.py overrides it to bound the plugin), and socketserver's
# error and accepted-connection hooks (fleet/httpd.py).
FRAMEWORK_HOOKS = {"format_usage", "_load_from_exec_plugin", "handle_error", "process_request"}


def test_every_definition_is_used_somewhere():
    tokens: Counter[str] = Counter()
    for folder in ("kubectl_win", "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            tokens.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8")))
    unused = []
    for path in sorted((ROOT / "kubectl_win").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
                if not name.startswith("__") and name not in FRAMEWORK_HOOKS and tokens[name] <= 1:
                    unused.append(f"{path.relative_to(ROOT)}: {name}")
    assert unused == []
