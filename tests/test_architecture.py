"""The package's import structure: no circle anywhere in kubectl_win, and doctor's modules import only from their
own stage of the pipeline or an earlier one, but for the exceptions listed here with their reasons.

Imports are read with the ast module (every `import` and `from … import`, also inside functions, since a lazy
import is still a dependency); imports under `if TYPE_CHECKING:` are left out, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kubectl_win"

# doctor's floors, in the order data flows (kubectl_win/doctor/__init__.py draws the same map). A module on a
# floor may import its own floor and those above it (lower numbers).
FLOORS: dict[str, int] = {
    "read": 1, "read.plan": 1, "read.fields": 1, "read.live": 1, "read.dump": 1, "read.reduce": 1,
    "read.share": 1,
    "records": 2, "interning": 2, "quantity": 2,
    # Records are grouped, each new pod template linted and Linux-pinned controllers told apart (scheduling)
    # as the builder makes them: one floor.
    "build": 3, "grouping": 3, "lint": 3, "scheduling": 3, "signatures": 3, "signatures.symptoms": 3,
    "signatures.structure": 3, "signatures.agents": 3,
    # Each Windows node's patch level, worked out once from the records; checks and renderers read it.
    "patchlevel": 3,
    "checks": 4, "checks.registry": 4, "checks.events": 4, "checks.gmsa": 4, "checks.images": 4,
    "checks.memory": 4, "checks.network": 4, "checks.nodes": 4, "checks.placement": 4, "checks.pods": 4,
    "checks.runtime": 4, "checks.skew": 4, "checks.storage": 4, "checks.patches": 4, "deep": 4,
    # A support bundle's patch facts (os.json, the hotfix list) become node revisions and findings, as checks do.
    "read.hotfixes": 4,
    "catalog": 5, "fixes": 5,
    "render": 6, "render.report": 6, "render.html": 6, "render.progress": 6,
    "run": 7, "run_bundle": 7, "": 7,
}
# (importing floor, imported module) -> why the import runs back up.
BACK_UP: dict[tuple[int, str], str] = {
    (4, "catalog"): "a check writes its findings through the catalog: the findings' ids, messages and sources",
    (4, "fixes"): "a check attaches its structured fix, built by the fix helpers, to each finding it makes",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _runtime_imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """(module, names) of every import that runs, skipping `if TYPE_CHECKING:` blocks."""
    found: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for module, names in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if not module.startswith("kubectl_win"):
                continue
            targets = [resolve(f"{module}.{n}") for n in names] if names else [resolve(module)]
            graph[name].update(t for t in targets if t and t != name)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circles_anywhere_in_the_package() -> None:
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_doctor_module_has_a_floor() -> None:
    doctor = {name[len("kubectl_win.doctor."):] if name != "kubectl_win.doctor" else ""
              for name in _modules() if name == "kubectl_win.doctor" or name.startswith("kubectl_win.doctor.")}
    assert doctor == set(FLOORS), "place each new doctor module on its floor in FLOORS"


def test_doctor_imports_run_down_the_pipeline() -> None:
    back_up = []
    used = set()
    for name, targets in _graph().items():
        if not name.startswith("kubectl_win.doctor."):
            continue
        source = name[len("kubectl_win.doctor."):]
        for target in targets:
            if not target.startswith("kubectl_win.doctor"):
                continue
            imported = target[len("kubectl_win.doctor."):] if target != "kubectl_win.doctor" else ""
            if FLOORS[imported] <= FLOORS[source]:
                continue
            key = (FLOORS[source], imported)
            if key in BACK_UP:
                used.add(key)
            else:
                back_up.append(f"{source} (floor {FLOORS[source]}) imports {imported} (floor {FLOORS[imported]})")
    assert back_up == []
    assert used == set(BACK_UP), "a listed exception no import needs any more: remove it"
