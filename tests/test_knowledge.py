"""The knowledge files: shipped precompiled and current, loaded without writing anything, and every entry
cites a source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_win import knowledge
from tests.support.paths import ROOT

NAMES = sorted(p.stem for p in (ROOT / "kubectl_win" / "knowledge").glob("*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_every_file_ships_precompiled_and_current(name: str) -> None:
    raw = (ROOT / "kubectl_win" / "knowledge" / f"{name}.yaml").read_bytes()
    compiled = json.loads(Path(knowledge.compiled_path(name)).read_text(encoding="utf-8"))
    assert compiled["source"] == knowledge.digest(raw), "run: python -m kubectl_win.knowledge"
    assert compiled["data"] == knowledge.parse(raw)


def test_a_stale_compiled_file_is_ignored_for_the_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "windows_builds.json").write_text('{"source": "old", "data": {"marker": true}}')
    monkeypatch.setattr(knowledge, "COMPILED_DIR", str(tmp_path))
    knowledge.load.cache_clear()
    try:
        assert "marker" not in knowledge.load("windows_builds")
        assert knowledge.load("windows_builds")["builds"]
    finally:
        knowledge.load.cache_clear()


def test_start_up_reads_no_yaml_and_writes_nothing_to_the_cache_dir(tmp_path: Path) -> None:
    """Every knowledge file loads from its compiled form: yaml is never imported, no cache is written."""
    code = ("import sys\nfrom kubectl_win import knowledge\n"
            f"for name in {NAMES!r}: knowledge.load(name)\n"
            "print('yaml' in sys.modules)\n")
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "LOCALAPPDATA": str(tmp_path / "local"),
           "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
    assert list(tmp_path.rglob("*")) == [home]


def test_start_up_parses_no_yaml_without_a_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every knowledge file loads from its compiled JSON: start-up never parses YAML (the cost it saves is
    measured against parsing one file in bench/bench_startup.py)."""

    def refuse(raw: bytes) -> None:
        raise AssertionError("a knowledge file was parsed as YAML: its compiled JSON is missing or stale")

    monkeypatch.setattr(knowledge, "parse", refuse)
    knowledge.load.cache_clear()
    try:
        for name in NAMES:
            assert knowledge.load(name) is not None
    finally:
        knowledge.load.cache_clear()


def test_every_field_rule_cites_a_source_and_a_version() -> None:
    from kubectl_win.explain.rules import all_rules

    for rule in all_rules():
        assert rule.sources and rule.since, rule.id
        assert rule.instead.endswith("."), rule.id


def test_every_finding_source_says_who_enforces_it() -> None:
    """enforcedBy is data: each checked field rule, doctor check and catalogue-only symptom names one of
    api-server, kubelet, runtime, or null (advice), explicitly."""
    allowed = {"api-server", "kubelet", "runtime", None}
    load = knowledge.load
    rules = [r for r in load("field_rules")["rules"] if r.get("check")]
    checks = load("doctor_checks")["checks"]
    check_ids = {c["id"] for c in checks}
    symptoms = [s for s in load("symptoms")["symptoms"] if s["check"] not in check_ids]
    for entry, key in [(r, "id") for r in rules] + [(c, "id") for c in checks] + [(s, "check") for s in symptoms]:
        assert "enforced_by" in entry, f"{entry[key]} does not say who enforces it (enforced_by)"
        assert entry["enforced_by"] in allowed, entry[key]


def test_every_windows_update_row_problem_and_platform_cites_a_source() -> None:
    """windows_updates.yaml: each update row, known problem and platform's patching guidance has a source, and
    the file says when it was assembled."""
    import datetime as dt

    data = knowledge.load("windows_updates")
    assert dt.date.fromisoformat(data["assembled"])
    for build in data["builds"]:
        assert build["history"].startswith("https://support.microsoft.com/"), build["build"]
        for row in build["updates"]:
            assert str(row["source"]).startswith("https://"), (build["build"], row)
            assert row["kind"] in data["kinds"], row
    for entry in data["problems"] + data["revision_barriers"]:
        assert entry["sources"], entry
    assert data["image_newer_than_host"]["sources"]
    for entry in data["patching"]:
        assert entry["sources"] and entry["note"], entry["platform"]


def _mappings(node: object, where: str):
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _mappings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _mappings(value, f"{where}[{index}]")


@pytest.mark.parametrize("name", NAMES)
def test_no_flow_mapping_value_was_split_into_a_key(name: str) -> None:
    """`{reason: cluster CA (not secret, not needed)}`: an unquoted comma makes "not needed)" a key with no
    value. A key is a name: one with a space or a bracket, holding nothing, is a value cut in two."""
    split = [(where, key) for where, mapping in _mappings(knowledge.load(name), name)
             for key, value in mapping.items() if value is None and any(c in str(key) for c in " ()[]{},")]
    assert not split, f"quote the value these keys were cut from: {split}"


def test_every_never_collected_entry_is_a_path_and_a_reason() -> None:
    entries = knowledge.load("collect")["never"]
    assert [sorted(entry) for entry in entries] == [["path", "reason"]] * len(entries)
    assert all(isinstance(entry["reason"], str) and entry["reason"] for entry in entries)
    assert {"path": "C:\\k\\ca.crt", "reason": "cluster CA (not secret, not needed)"} in entries


CONTINUATIONS = ("or ", "or,", "then", "also ", "otherwise", "after that", "and ")


@pytest.mark.parametrize("name", NAMES)
def test_no_fix_note_reads_as_the_sequel_of_its_commands(name: str) -> None:
    """Renderers print a fix's note before its commands (kubectl_win/output/fix_lines.py): a note that begins
    "Or ..." or "Then, ..." would be read before the command it qualifies."""
    sequels = [(where, mapping["note"]) for where, mapping in _mappings(knowledge.load(name), name)
               if where.endswith(".fix") and isinstance(mapping.get("note"), str) and mapping.get("commands")
               and mapping["note"].lower().startswith(CONTINUATIONS)]
    assert not sequels, f"say what the commands do first, then the alternative or next step: {sequels}"
