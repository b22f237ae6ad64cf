"""The knowledge files: loadable, cached by content, and every entry cites a source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_win import knowledge

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(p.stem for p in (ROOT / "kubectl_win" / "knowledge").glob("*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_every_file_loads_the_same_with_and_without_the_cache(name: str, tmp_path: Path) -> None:
    code = ("import json, sys\nfrom kubectl_win.knowledge import load\n"
            f"print(json.dumps(load({name!r}), sort_keys=True, default=str))\n")
    env = {"KUBECTL_WIN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cold = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert cold.stdout == warm.stdout and cold.stdout.strip() not in ("", "null")


def test_the_cache_is_used_and_a_changed_file_gets_a_new_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECTL_WIN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("KUBECTL_WIN_NO_CACHE", raising=False)
    knowledge.load.cache_clear()
    first = knowledge.load("windows_builds")
    [cached] = tmp_path.glob("knowledge-windows_builds-*.json")
    cached_name = str(cached)
    cached.write_text('{"builds": [], "marker": true}')
    knowledge.load.cache_clear()
    assert knowledge.load("windows_builds") == {"builds": [], "marker": True}  # read from the cache
    assert knowledge._cache_file("windows_builds", b"other text") != cached_name
    cached.write_text("not json")
    knowledge.load.cache_clear()
    assert knowledge.load("windows_builds") == first  # a broken cache falls back to the YAML
    knowledge.load.cache_clear()


def test_an_unwritable_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("KUBECTL_WIN_CACHE_DIR", str(blocker / "sub"))
    knowledge.load.cache_clear()
    assert knowledge.load("field_rules")["rules"]
    knowledge.load.cache_clear()


def test_every_field_rule_cites_a_source_and_a_version() -> None:
    from kubectl_win.explain.rules import all_rules

    for rule in all_rules():
        assert rule.sources and rule.since, rule.id
        assert rule.instead.endswith("."), rule.id
