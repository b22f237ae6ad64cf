"""The README's tier table from one run of the whole suite: each tier's test count and the time its tests took.

    python -m pytest -q --junitxml=/tmp/suite.xml          # the whole suite, once (CI=true for the real tools)
    python bench/suite_tiers.py /tmp/suite.xml             # the table's rows and the total

A test's time is its JUnit time (setup, call and teardown, so a session fixture's start-up counts in the first
test that uses it). A test that needs several tiers' parts counts in each, as tests/conftest.py marks it. The
tiers' members are read by collecting the suite once per marker (`pytest --collect-only -m TIER`), which runs no
test.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = ("unit", "apiserver", "realcluster", "registry", "browser", "wine", "pty", "tools")


def junit_times(path: Path) -> dict[str, float]:
    """Per test node id (tests/x.py::test_y[param]): its time in the run."""
    times: dict[str, float] = {}
    for case in ElementTree.parse(path).iter("testcase"):
        parts = case.get("classname", "").split(".")
        # JUnit's classname is the module's dotted path, then the test class if there is one (TestX).
        classes = [p for p in parts if p[:1].isupper()]
        module = "/".join(p for p in parts if p not in classes)
        times["::".join([f"{module}.py", *classes, str(case.get("name"))])] = float(case.get("time") or 0.0)
    return times


def members(tier: str) -> list[str]:
    """The node ids the tier's marker selects."""
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", tier, "-p",
                             "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, check=False)
    return [line for line in result.stdout.splitlines() if "::" in line]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: python bench/suite_tiers.py JUNIT.xml", file=sys.stderr)
        return 2
    times = junit_times(Path(argv[0]))
    for tier in TIERS:
        ids = members(tier)
        seconds = sum(times.get(node, 0.0) for node in ids)
        print(f"| `{tier}` | {seconds:.0f} s, {len(ids):,} tests |")
    print(f"whole suite: {len(times):,} tests, {sum(times.values()):.0f} s of test time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
