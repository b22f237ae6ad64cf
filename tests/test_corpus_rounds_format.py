"""Every collection round's failure corpus (tests/corpus/round3/, round4/, ...) is well formed: shape only, nothing
here runs doctor.

Each entry names its thread, says where the message was seen, quotes it, and carries an answer key whose
patterns compile and do not match the quoted message alone (a key that the message itself satisfies would
count a parrot as right). The split follows the corpus rule, and no thread+message pair is in two places.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import corpus_split
from tests.support.paths import TESTS

CORPUS = TESTS / "corpus"
ROUNDS = sorted((p for p in CORPUS.glob("round*") if p.is_dir()), key=lambda p: corpus_split.in_round_order(p.name))

WHERE = {"event", "waiting", "terminated", "condition", "log", "client", "apiserver"}
SUBSYSTEMS = {"network", "dns", "proxy", "volume", "image", "runtime", "node", "resources", "identity",
              "client", "apiserver", "platform"}
URL = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull)/\d+")


def _load(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or []


def _part(round_dir: Path, name: str) -> list[dict[str, Any]]:
    return _load(round_dir / f"{name}.yaml")


def _goes_to_held_out(entry: dict[str, Any]) -> bool:
    return hashlib.sha256((entry["url"] + "\n" + entry["message"]).encode()).digest()[0] % 3 == 0


ENTRIES = [(f"{r.name}/{part}", e) for r in ROUNDS for part in ("failures", "held_out") for e in _part(r, part)]


def _id(item: tuple[str, dict[str, Any]]) -> str:
    part, entry = item
    return f"{part}:{entry.get('url', '?').removeprefix('https://github.com/')}"


def test_there_are_rounds() -> None:
    assert [r.name for r in ROUNDS][:1] == ["round3"], ROUNDS


# A round that could not reach 60 entries, and why (its held-out part is still clean: split before anything was built).
# Rounds smaller than 60 entries in 9 subsystems: (entries, subsystems, why).
SMALLER = {"round5": (30, 9, "public threads with a verbatim Windows message and an established cause that no corpus "
                             "here holds are scarce: ten collectors with a search budget each found 40 or so"),
           "round9": (25, 6, "a third collection in one session, over areas no round had read (Cluster API, logging "
                             "tools in images, meshes, devices, runtimes, provisioning, metrics, new builds), ended "
                             "when the shared search budget did"),
           "round10": (25, 8, "eight collectors with a budget each, by area (CI runners and images, observability "
                              "agents, volumes, 2019-2021 threads, the runtime, networking, platforms, clients and "
                              "identity), and two following up their unread leads, found 32: the public threads "
                              "with a verbatim message and an established cause are nearly all held already"),
           "round11": (4, 2, "two collectors over the last areas no round had read (on-premises and edge "
                             "distributions, operators) with what was left of the search budget found 4: a measure of "
                             "the calibration after round 10, too small to say more than that it drew no wrong answer"),
           "round12": (25, 6, "seven collectors with a budget each (network, storage, runtime and images, platforms, "
                              "workloads in containers, agents and identity, clients and the kubelet's configuration) "
                              "found 28 in threads no round held; two key reviewers dropped 3"),
           "round13": (14, 5, "four collectors reading merged fix PRs (the Kubernetes organisations, runtimes, "
                              "platforms and node provisioning, charts and agents) with the rest of the search budget "
                              "found 16; a key reviewer dropped 2"),
           "round14": (2, 2, "two collectors with the last of the search budget (the newest threads, documentation "
                             "repositories) found 4, of which 2 were dropped (a bare reason, a cause inferred from "
                             "another thread); the split rule put neither of the 2 in the held-out part"),
           "round15": (26, 8, "ten collectors with a budget each (network, storage, runtime and images, platforms, "
                              "programs in containers, agents and identity, the kubelet and API server, clients, "
                              "Windows containers outside Kubernetes, and the leads the others could not finish) "
                              "found 33 in threads no round held; two key reviewers dropped 7"),
           "round16": (4, 3, "one collector with the last of the search budget, over the two areas that yielded "
                             "best in round 15 (the runtime and images, the platforms' node bootstrap), found 4 "
                             "merged fix PRs that quote their message; split after round 15's calibration")}


@pytest.mark.parametrize("round_dir", ROUNDS, ids=lambda r: r.name)
def test_a_round_holds_enough_entries_in_enough_subsystems(round_dir: Path) -> None:
    entries = _part(round_dir, "failures") + _part(round_dir, "held_out")
    subsystems = {e["expect"]["subsystem"] for e in entries}
    least, kinds, _ = SMALLER.get(round_dir.name, (60, 9, ""))
    assert len(entries) >= least, len(entries)
    assert len(subsystems) >= kinds, sorted(subsystems)
    # The rule sends a third to the held-out part on average: a round of two may by chance send none there.
    assert (_part(round_dir, "held_out") or len(entries) < 3) and _part(round_dir, "failures")


@pytest.mark.parametrize("item", ENTRIES, ids=[_id(i) for i in ENTRIES])
def test_an_entry_has_a_thread_a_place_a_message_and_a_key(item: tuple[str, dict[str, Any]]) -> None:
    _, entry = item
    assert URL.fullmatch(entry["url"]), entry["url"]
    assert entry["where"] in WHERE
    assert entry["context"] in {"pod", "node"}
    assert isinstance(entry["message"], str) and entry["message"].strip() == entry["message"] != ""
    if entry["where"] == "log":
        assert entry.get("log"), "a log line names whose log it is"
    if entry["where"] == "terminated":
        assert isinstance(entry.get("exit_code"), int)
    cluster = entry.get("cluster")
    if cluster is not None:  # what the thread says of its cluster (read from the thread, shown by the harness)
        assert set(cluster) <= {"node_build", "pod_os", "platform", "kubelet", "containerd", "runtime"}, cluster
        assert cluster.get("pod_os", "windows") in {"windows", "linux"}
        assert cluster.get("runtime", "docker") == "docker"
        assert isinstance(cluster.get("node_build", 17763), int)
    expect = entry["expect"]
    assert expect["subsystem"] in SUBSYSTEMS
    for field in ("component", "operation", "cause", "source"):
        assert isinstance(expect.get(field), str) and expect[field].strip(), field
    assert "http" in expect["source"], "the source names the comment or PR that settled the cause"


@pytest.mark.parametrize("item", ENTRIES, ids=[_id(i) for i in ENTRIES])
def test_the_key_patterns_compile_and_the_message_alone_does_not_satisfy_them(
        item: tuple[str, dict[str, Any]]) -> None:
    _, entry = item
    right = entry["expect"]["right"]
    assert isinstance(right, list) and 1 <= len(right) <= 6
    for pattern in right + entry["expect"].get("wrong_if", []):
        compiled = re.compile(pattern, re.IGNORECASE)
        if pattern in right:
            assert not compiled.search(entry["message"]), f"{pattern!r} matches the quoted message"


@pytest.mark.parametrize("item", ENTRIES, ids=[_id(i) for i in ENTRIES])
def test_an_entry_sits_in_the_part_the_split_rule_gives_it(item: tuple[str, dict[str, Any]]) -> None:
    part, entry = item
    assert part.endswith("/held_out") == _goes_to_held_out(entry)


def test_no_thread_and_message_pair_is_in_two_places() -> None:
    files = [p for p in sorted(CORPUS.rglob("*.yaml"))]
    seen: dict[tuple[str, str], Path] = {}
    for path in files:
        for entry in _load(path):
            key = (entry.get("url", ""), entry.get("message", ""))
            assert key not in seen, f"{key[0]} with the same message in {seen.get(key)} and {path}"
            seen[key] = path


@pytest.mark.parametrize("round_dir", ROUNDS, ids=lambda r: r.name)
def test_the_linux_controls_are_real_failures_of_linux_nodes(round_dir: Path) -> None:
    controls = _part(round_dir, "linux_controls")
    assert len(controls) >= min(8, SMALLER.get(round_dir.name, (60, 9, ""))[0])  # a smaller round, fewer controls
    for entry in controls:
        assert URL.fullmatch(entry["url"]) and entry["os"] == "linux"
        assert entry["where"] in WHERE and entry["message"].strip()


@pytest.mark.parametrize("round_dir", ROUNDS, ids=lambda r: r.name)
def test_no_knowledge_entry_cites_a_held_out_thread_of_a_round(round_dir: Path) -> None:
    text = corpus_split.knowledge_text()
    cited = [e["url"] for e in _part(round_dir, "held_out") if corpus_split.cited_by_knowledge(e["url"], text)]
    assert not cited, cited
