"""python -m tests.windows setup: fetch and check the Windows archive's inputs (cached)."""

from __future__ import annotations

import sys

from release.windows import WindowsBuildError
from tests.windows import setup


def main(argv: list[str]) -> int:
    if argv != ["setup"]:
        print("usage: python -m tests.windows setup", file=sys.stderr)
        return 2
    try:
        python, wheels = setup()
    except WindowsBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{python} and {len(wheels)} wheels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
