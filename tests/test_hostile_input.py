"""Hostile or odd input on every input path ends in one `error:` line and exit 2 within seconds: absurd
nesting, YAML alias bombs, endless and huge files, special files and link loops inside directories, and
directories without a single Kubernetes object."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_cli
from tests.support.paths import EXAMPLE_MANIFESTS, ROOT, SAMPLE_DUMP

MANIFEST = EXAMPLE_MANIFESTS / "iis-hardened-for-linux.yaml"
DEEP = 100_000
BOMB = "".join([f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]\n"
                for prev, name in zip("abcdefgh", "bcdefghi", strict=True)])
BOMB = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB + \
    "kind: Pod\napiVersion: v1\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i, args: *i}]}\n"
SHAPES = {
    "deep-json-array": "[" * DEEP + "]" * DEEP,
    "deep-json-object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "deep-yaml-block": "- " * DEEP + "x\n",
    "deep-yaml-flow": "kind: Pod\nspec: " + "[" * DEEP + "]" * DEEP + "\n",
    "alias-bomb": BOMB,
}


def _command(path: str, tool: str) -> list[str]:
    return {
        "explain": ["explain", "-f", path],
        "doctor": ["doctor", "--from-dump", path],
        "hns": ["hns", "--from-file", path, "win-a"],
        "scaffold-patch": ["scaffold", "patch", "-f", path, "--dry-run"],
        "config": ["doctor", "--from-dump", str(SAMPLE_DUMP), "--config", path],
        "kubeconfig": ["doctor", "--kubeconfig", path],
    }[tool]


TOOLS = ("explain", "doctor", "hns", "scaffold-patch", "config", "kubeconfig")


def _one_error_line(result, code: int = 2) -> None:  # noqa: ANN001
    assert result.exit_code == code, result.stderr[-500:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr[-500:]
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("tool,shape", [(tool, shape) for tool in TOOLS for shape in SHAPES
                                        if tool != "hns" or shape.startswith("deep-json")])  # HNS: JSON only
def test_deep_nesting_and_alias_bombs_are_one_line_exit_2(tmp_path, tool, shape):
    path = tmp_path / ("input.json" if shape.startswith("deep-json") else "input.yaml")
    path.write_text(SHAPES[shape])
    _one_error_line(run_cli(*_command(str(path), tool)))


@pytest.mark.parametrize("shape", ["deep-json-array", "deep-yaml-flow", "alias-bomb"])
@pytest.mark.parametrize("tool", ["explain", "scaffold-patch"])
def test_hostile_stdin_is_one_line_exit_2(tool, shape):
    _one_error_line(run_cli(*_command("-", tool), stdin=SHAPES[shape]))


def _run(args: list[str], stdin=None, timeout: float = 60) -> subprocess.CompletedProcess:  # noqa: ANN001
    """A real process, so a hang is a failed test rather than a stuck suite."""
    return subprocess.run([sys.executable, "-m", "kubectl_win", *args], cwd=ROOT, stdin=stdin,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("source", ["dev-zero", "huge-sparse-file"])
def test_endless_and_huge_inputs_are_refused_without_reading_them_whole(tmp_path, tool, source):
    if source == "dev-zero":
        path = "/dev/zero"
    else:
        path = str(tmp_path / "big.json")
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024 ** 3)  # 2 GiB, sparse: costs nothing to make
    result = _run(_command(path, tool), timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert any(word in result.stderr for word in ("too large", "larger than", "binary"))


@pytest.mark.parametrize("tool", ["explain", "scaffold-patch"])
def test_endless_stdin_is_capped(tool):
    with open("/dev/zero", "rb") as zero:
        result = _run(_command("-", tool), stdin=zero, timeout=30)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "binary" in result.stderr


def _odd_directory(tmp_path: Path) -> Path:
    top = tmp_path / "manifests"
    (top / "apps").mkdir(parents=True)
    (top / "apps" / "iis.yaml").write_text(MANIFEST.read_text())
    os.mkfifo(top / "pipe.yaml")  # opening it would wait for a writer forever
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(top / "socket.yaml"))
    os.symlink("/dev/zero", top / "device.yaml")
    os.symlink("..", top / "apps" / "loop")  # a link loop
    os.symlink(top / "apps", top / "linked")  # the same directory twice
    return top


@pytest.mark.parametrize("tool", ["explain", "scaffold-patch"])
def test_special_files_and_link_loops_in_a_directory_are_passed_over(tmp_path, tool):
    top = _odd_directory(tmp_path)
    result = _run([*_command(str(top), tool), *(["-o", "json"] if tool == "explain" else [])], timeout=60)
    assert result.returncode in (0, 1), result.stderr
    if tool == "explain":
        files = {f["file"] for f in json.loads(result.stdout)["findings"]}
        assert files == {str(top / "apps" / "iis.yaml")}  # read once, through one path
    else:
        assert result.stdout.count("+++ ") == 1


def test_a_symlinked_sub_directory_is_followed(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "iis.yaml").write_text(MANIFEST.read_text())
    top = tmp_path / "top"
    top.mkdir()
    os.symlink(real, top / "apps")
    result = run_cli("explain", "-f", str(top), "-o", "json")
    assert result.exit_code in (0, 1) and result.json["summary"]["objects"] >= 1


@pytest.mark.parametrize("tool", ["explain", "scaffold-patch"])
@pytest.mark.parametrize("content", ["nothing", "empty-files", "not-objects"])
def test_a_directory_without_objects_is_exit_2_no_objects_found(tmp_path, tool, content):
    top = tmp_path / "wrong"
    top.mkdir()
    if content == "empty-files":
        (top / "a.yaml").write_text("")
    elif content == "not-objects":
        (top / "a.yaml").write_text("- just\n- a list\n")
        (top / "README.md").write_text("kind: Pod\n")
    result = run_cli(*_command(str(top), tool))
    if tool == "scaffold-patch" and content != "nothing":
        assert result.exit_code in (0, 2)  # files exist; patch leaves what it cannot place
        return
    assert result.exit_code == 2 and "no objects found" in result.stderr
    assert result.stderr.count("\n") == 1 or tool == "explain"


def test_from_dump_reads_yaml_as_explain_does(tmp_path):
    as_yaml = tmp_path / "cluster.yaml"
    as_yaml.write_text(yaml.safe_dump(json.loads(SAMPLE_DUMP.read_text())))
    from_yaml = run_cli("doctor", "--from-dump", str(as_yaml), "-o", "json")
    from_json = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    assert from_yaml.exit_code == from_json.exit_code == 1
    assert from_yaml.json["findings"] == from_json.json["findings"]
    several = tmp_path / "several.yaml"  # kubectl get nodes -o yaml; kubectl get pods -A -o yaml
    items = json.loads(SAMPLE_DUMP.read_text())["items"]
    lists = [{"apiVersion": "v1", "kind": "List", "items": items[:5]},
             {"apiVersion": "v1", "kind": "List", "items": items[5:]}]
    several.write_text(yaml.safe_dump_all(lists))
    appended = tmp_path / "several.json"  # the same, as `... -o json >> dump.json` twice
    appended.write_text("\n".join(json.dumps(doc) for doc in lists))
    from_yaml = run_cli("doctor", "--from-dump", str(several), "-o", "json")
    assert from_yaml.exit_code == 1 and len(from_yaml.json["findings"]) > 5
    assert from_yaml.json == run_cli("doctor", "--from-dump", str(appended), "-o", "json").json


NESTING = st.tuples(st.integers(min_value=1, max_value=150_000), st.sampled_from(["[", '{"k": ', "- ", "k:\n "]))


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(nesting=st.lists(NESTING, min_size=1, max_size=3))
def test_any_nesting_is_answered_on_every_input_path(tmp_path, nesting):
    """Mixed nesting of any depth (flow, block, JSON) gets an answer, never an internal error."""
    text = ""
    closers = ""
    for depth, opener in nesting:
        if opener == "k:\n ":
            depth = min(depth, 3000)  # block indentation grows with depth: the text is O(depth^2)
            text += "".join(" " * i + "k:\n" for i in range(depth)) + " " * depth
        else:
            text += opener * depth
            closers = {"[": "]", '{"k": ': "}"}.get(opener, "") * depth + closers
    path = tmp_path / "nested.yaml"
    path.write_text(text + "1" + closers + "\n")
    for tool in TOOLS:
        result = run_cli(*_command(str(path), tool))
        assert result.exit_code in (0, 1, 2), (tool, result.stderr[-500:])
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr, tool


@pytest.mark.parametrize("shape", ["deep-json-array", "deep-json-object"])
def test_a_bundle_with_a_deeply_nested_json_member_is_one_line_exit_2(tmp_path, shape):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "bundle.json").write_text(SHAPES[shape])
    _one_error_line(run_cli("doctor", "--from-bundle", str(bundle)))
