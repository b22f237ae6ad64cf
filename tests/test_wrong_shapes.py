"""Objects of the wrong shape never end in an internal error.

Property-based: hypothesis picks any field of the bundled cluster dump, an example manifest or an HNS dump
and puts a value of another shape there (a number where a string belongs, a list where a mapping does, an
empty or an enormous value). doctor, explain, scaffold patch and hns --from-file must answer as for any
input: exit 0, 1 or 2, no traceback. Run in-process (the real entry point) to stay fast.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS, ROOT, SAMPLE_DUMP

DUMP = json.loads(SAMPLE_DUMP.read_text(encoding="utf-8"))
MANIFESTS = sorted(EXAMPLE_MANIFESTS.glob("*.yaml"))
HNS = ROOT / "tests" / "fixtures" / "hns" / "win-a-v1.json"
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

WRONG = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.just(""),
    st.just([]),
    st.just({}),
    st.text(max_size=12),
    st.just("x" * 200_000),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.just([[{"a": [1]}]]),
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(paths(value, prefix + (key,)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(paths(value, prefix + (index,)))
    return out


def mutate(doc: Any, data: st.DataObject, count: int = 3) -> Any:
    """The document with up to `count` fields replaced by values of another shape."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(min_value=1, max_value=count))):
        candidates = paths(doc)
        if not candidates:
            break
        path = data.draw(st.sampled_from(candidates))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = copy.deepcopy(data.draw(WRONG))
    return doc


def assert_answered(result: Any) -> None:
    assert result.exit_code in (0, 1, 2), result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]


@SETTINGS
@given(data=st.data())
def test_doctor_from_a_mutated_dump(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(mutate(DUMP, data)), encoding="utf-8")
    for output in ("json", "table"):
        assert_answered(run_cli("doctor", "--from-dump", str(path), "-o", output))


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.name for m in MANIFESTS])
@settings(SETTINGS, max_examples=30)  # per manifest: the manifests together see more mutations than the dump
@given(data=st.data())
def test_explain_and_scaffold_patch_on_a_mutated_manifest(tmp_path: Path, manifest: Path,
                                                          data: st.DataObject) -> None:
    docs = [d for d in yaml.safe_load_all(manifest.read_text(encoding="utf-8")) if d is not None]
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all([mutate(d, data, 2) for d in docs]), encoding="utf-8")
    assert_answered(run_cli("explain", "-f", str(path)))
    assert_answered(run_cli("explain", "-f", str(path), "-o", "json"))
    assert_answered(run_cli("scaffold", "patch", "-f", str(path), "--dry-run"))


@SETTINGS
@given(data=st.data())
def test_hns_from_a_mutated_file(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "hns.json"
    path.write_text(json.dumps(mutate(json.loads(HNS.read_text(encoding="utf-8")), data)), encoding="utf-8")
    assert_answered(run_cli("hns", "--from-file", str(path), "win-a", "-o", "json"))


def test_a_wrong_typed_field_is_named_in_skipped_and_the_object_still_reported(tmp_path: Path) -> None:
    dump = copy.deepcopy(DUMP)
    windows = next(o for o in dump["items"] if o.get("kind") == "Node"
                   and o["metadata"].get("labels", {}).get("kubernetes.io/os") == "windows")
    windows["status"]["nodeInfo"] = ["not", "a", "mapping"]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    result = run_cli("doctor", "--from-dump", str(path), "-o", "json")
    assert_answered(result)
    report = result.json
    assert windows["metadata"]["name"] in {n["name"] for n in report["nodes"]}
    assert any(s["resource"] == f"nodes/{windows['metadata']['name']}" for s in report["skipped"])


def test_one_bad_item_does_not_cost_the_rest_of_the_dump(tmp_path: Path) -> None:
    dump = copy.deepcopy(DUMP)
    total = len(dump["items"])
    dump["items"].insert(1, "not an object")
    dump["items"].append({"metadata": {"name": "no-kind"}})
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    result = run_cli("doctor", "--from-dump", str(path), "-o", "json")
    assert_answered(result)
    reasons = [s["reason"] for s in result.json["skipped"] if s["resource"] == "dump"]
    assert reasons == ["items[1] is a str, not an object; passed over", f"items[{total + 1}] has no kind; passed over"]
    assert result.json["nodes"]
