"""The package's import structure: no circle anywhere in kubectl_win, and doctor's modules import only from their
own stage of the pipeline or an earlier one, but for the exceptions listed here with their reasons.

Imports are read with the ast module (every `import` and `from … import`, also inside functions, since a lazy
import is still a dependency); imports under `if TYPE_CHECKING:` are left out, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import PACKAGE

# doctor's floors, in the order data flows (kubectl_win/doctor/__init__.py draws the same map). A module on a
# floor may import its own floor and those above it (lower numbers).
FLOORS: dict[str, int] = {
    "read": 1, "read.plan": 1, "read.fields": 1, "read.api": 1, "read.dump": 1, "read.reduce": 1,
    "read.share": 1, "read.bundle": 1, "read.typed": 1,
    "records": 2, "interning": 2, "quantity": 2,
    # Records are grouped, each new pod template linted and Linux-pinned controllers told apart (scheduling)
    # as the builder makes them: one floor.
    "build": 3, "constructors": 3, "folding": 3, "grouping": 3, "lint": 3, "scheduling": 3, "signatures": 3,
    "signatures.symptoms": 3, "signatures.structure": 3, "signatures.agents": 3, "signatures.model": 3,
    # Each Windows node's patch level, worked out once from the records; checks and renderers read it. A support
    # bundle's patch facts (os.json, the hotfix list) become the revisions of nodes the API left without one.
    "patchlevel": 3, "read.hotfixes": 3,
    "checks": 4, "checks.plan": 4, "checks.events": 4, "checks.gmsa": 4, "checks.images": 4,
    "checks.memory": 4, "checks.network": 4, "checks.nodes": 4, "checks.placement": 4, "checks.pods": 4,
    "checks.runtime": 4, "checks.skew": 4, "checks.storage": 4, "checks.bundle": 4, "checks.bundle_hns": 4,
    "checks.bundle_logs": 4, "checks.patches": 4, "checks.image_platform": 4, "checks.misplaced": 4,
    "checks.presumed": 4, "checks.no_windows_node": 4, "checks.versions": 4, "checks.evidence": 4,
    "checks.node_identity": 4, "checks.log_line": 4, "deep": 4,
    "fixes": 5,
    "render": 6, "render.report": 6, "render.html": 6, "render.progress": 6,
    "render.formats": 6,
    "run": 7, "": 7,
}
# (importing floor, imported module) -> why the import runs back up.
BACK_UP: dict[tuple[int, str], str] = {
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


# The edge of the program: the entry points, the commands and the completion path may import the commands; a
# service module (everything else) is called by them and never reaches back up.
EDGE = ("kubectl_win.cli", "kubectl_win.__main__", "kubectl_win.commands", "kubectl_win.completion")


def _at_the_edge(module: str) -> bool:
    return any(module == edge or module.startswith(edge + ".") for edge in EDGE)


def _services_importing_commands(graph: dict[str, set[str]]) -> list[str]:
    commands = "kubectl_win.commands"
    return sorted(f"{name} imports {target}" for name, targets in graph.items() if not _at_the_edge(name)
                  for target in targets if target == commands or target.startswith(commands + "."))


def _namespace_parameters(tree: ast.AST) -> list[str]:
    """Functions taking the parsed flags as an untyped namespace: a positional `args: Any` (commands take their
    options record instead)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                annotation = arg.annotation
                untyped = annotation is None or (isinstance(annotation, ast.Name) and annotation.id == "Any") or (
                    isinstance(annotation, ast.Attribute) and annotation.attr == "Any") or (
                    isinstance(annotation, ast.Constant) and annotation.value == "Any")
                if arg.arg == "args" and untyped:
                    found.append(f"{node.name}({arg.arg}) at line {node.lineno}")
    return found


def test_no_service_module_imports_the_commands() -> None:
    assert _services_importing_commands(_graph()) == []


def test_the_edge_check_finds_a_service_importing_a_command() -> None:
    graph = {"kubectl_win.doctor.run": {"kubectl_win.commands.flags", "kubectl_win.findings"},
             "kubectl_win.cli": {"kubectl_win.commands.base"},
             "kubectl_win.commands.doctor": {"kubectl_win.commands.base"},
             "kubectl_win.completion.export": {"kubectl_win.commands"}}
    assert _services_importing_commands(graph) == ["kubectl_win.doctor.run imports kubectl_win.commands.flags"]


def test_no_function_takes_the_flags_as_an_untyped_namespace() -> None:
    found = []
    for name, path in sorted(_modules().items()):
        found += [f"{name}: {where}" for where in _namespace_parameters(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_namespace_check_finds_run_args_any() -> None:
    source = ("from typing import Any\n"
              "def run(args: Any, env: Env) -> int: ...\n"
              "def _render(report, args: typing.Any) -> None: ...\n"
              "def _guess(args): ...\n"
              "def ok(options: DoctorFlags, env: Env, *args: Any) -> int: ...\n")
    assert _namespace_parameters(ast.parse(source)) == ["run(args) at line 2", "_render(args) at line 3",
                                                        "_guess(args) at line 4"]


# -- one check catalogue -------------------------------------------------------------------------------------

CATALOGUE = "kubectl_win.catalog"
# Modules that make Finding records themselves, and why they are not a second catalogue.
OWN_FINDINGS: dict[str, str] = {
    "kubectl_win.explain.lint": "explain's field rules (knowledge/field_rules.yaml) are rules over fields, each "
                                "with its own locations and triggers, not check entries",
    "kubectl_win.images.lint": "the image compatibility verdicts, whose texts are made from the registry's answer",
}


def _catalogue_types(tree: ast.AST) -> list[str]:
    """Classes that describe a check as the catalogue does: a severity beside the texts a finding is made of
    (a title or a remediation). Finding itself has a severity and a message, but no title."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        if "severity" in fields and fields & {"title", "remediation"}:
            found.append(node.name)
    return found


def _finding_factories(tree: ast.AST) -> list[str]:
    """Functions that build a Finding record (a call of `Finding(...)`), by name."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if any(isinstance(call, ast.Call) and isinstance(call.func, ast.Name | ast.Attribute)
               and (call.func.id if isinstance(call.func, ast.Name) else call.func.attr) == "Finding"
               for call in ast.walk(node)):
            found.append(node.name)
    return found


def _catalogue_problems(modules: dict[str, str]) -> list[str]:
    """Every check-describing class and every Finding factory outside kubectl_win/catalog.py (and the listed
    exceptions), for module name -> source."""
    problems = []
    for name, source in sorted(modules.items()):
        tree = ast.parse(source)
        types = _catalogue_types(tree)
        if name == CATALOGUE:
            if len(types) > 1:
                problems.append(f"{name}: {len(types)} catalogue types ({', '.join(types)})")
            continue
        problems += [f"{name}: {kind} is a second catalogue type" for kind in types]
        if name not in OWN_FINDINGS:
            problems += [f"{name}: {factory}() makes findings outside the catalogue"
                         for factory in _finding_factories(tree)]
    return problems


def test_one_check_catalogue_and_one_finding_factory() -> None:
    sources = {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}
    assert _catalogue_types(ast.parse(sources[CATALOGUE])) == ["CheckInfo"]
    assert _catalogue_problems(sources) == []
    assert set(OWN_FINDINGS) <= set(sources), "a listed exception names no module any more: remove it"


def test_a_second_catalogue_type_or_finding_factory_is_found() -> None:
    second = '''
from dataclasses import dataclass
from kubectl_win.findings import Finding

@dataclass(frozen=True)
class NodeCheck:
    id: str
    severity: str
    title: str
    message: str

def node_finding(check, ref):
    return Finding(id=check.id, severity=check.severity, object=ref, path="", message=check.message)
'''
    assert _catalogue_problems({"kubectl_win.doctor.read.bundle": second}) == [
        "kubectl_win.doctor.read.bundle: NodeCheck is a second catalogue type",
        "kubectl_win.doctor.read.bundle: node_finding() makes findings outside the catalogue"]
    twice = "class A:\n    severity: str\n    title: str\nclass B:\n    severity: str\n    remediation: str\n"
    assert _catalogue_problems({CATALOGUE: twice}) == [f"{CATALOGUE}: 2 catalogue types (A, B)"]
    finding_only = "class Finding:\n    id: str\n    severity: str\n    message: str\n"
    assert _catalogue_problems({"kubectl_win.findings": finding_only}) == []


def test_check_ids_are_unique_across_the_knowledge_files() -> None:
    from kubectl_win.catalog import catalog
    from kubectl_win.knowledge import load

    defined = [e["id"] for name in ("doctor_checks", "hns", "bundle_checks") for e in load(name)["checks"]]
    assert len(defined) == len(set(defined))
    assert set(defined) <= set(catalog())


# -- one doctor pipeline ---------------------------------------------------------------------------------------

PIPELINE = "kubectl_win.doctor.run"


def _pipeline_callers(modules: dict[str, str]) -> list[str]:
    """Modules other than doctor/run.py that run doctor's checks or build its report themselves: a second
    pipeline (as the support bundle once had), for module name -> source."""
    found = []
    for name, source in sorted(modules.items()):
        if name == PIPELINE:
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "run_checks" or isinstance(func, ast.Attribute) and (
                    func.attr == "run_checks" or func.attr == "build" and isinstance(func.value, ast.Name)
                    and func.value.id == "DoctorReport"):
                found.append(f"{name}: {ast.unparse(func)}()")
    return found


def test_one_doctor_pipeline_for_every_source() -> None:
    sources = {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}
    assert _pipeline_callers(sources) == []


def test_a_second_doctor_pipeline_is_found() -> None:
    second = ("from kubectl_win.doctor.checks.plan import run_checks\n"
              "def report(snapshot):\n    return DoctorReport.build(snapshot, run_checks(snapshot), 'cluster')\n")
    assert _pipeline_callers({"kubectl_win.doctor.run_bundle": second, PIPELINE: second}) == [
        "kubectl_win.doctor.run_bundle: DoctorReport.build()", "kubectl_win.doctor.run_bundle: run_checks()"]
