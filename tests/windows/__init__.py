"""The Windows test tier: the windows/amd64 archive (official embeddable CPython 3.13, our package,
its win_amd64 wheels, the mingw-w64 launchers) run under Wine.

    python -m tests.windows setup    # download (once, cached) what the archive is built from

The archive is built by the release code (release/windows.py) from inputs cached under
~/.cache/kubectl-win-test/windows/ and run from a temporary copy with Wine's persistent test prefix
(tests/support/portforward_rig.py, `wine_prefix`).

Wine 8's gaps, worked around here and only here (the archive is the one that ships):

- `platform.system()` (and `platform.uname()`, `machine()`) crash while CPython's `_wmi.pyd` is
  present: Wine has no `propsys.VariantToString`. The test copy lacks `python/_wmi.pyd`, so
  `platform` falls back to `sys.getwindowsversion()`.
- A Unix regular file as a standard handle makes CPython's start fail ("init_sys_streams: ...
  Invalid handle"); pipes work. Output redirected to a file is redirected inside Wine, by cmd.exe's
  `>`, as a Windows user does.
- Binaries built with Go >= 1.21 or Rust >= 1.78 do not load (no `bcryptprimitives.dll`
  ProcessPrng): kubectl.exe and krew.exe cannot run, so the manifest is checked with the Linux
  build of krew's validate-krew-manifest. The archive itself avoids such modules by its pins
  (kubernetes < 35 without pydantic-core, google-auth < 2.48 without cryptography:
  release/windows.py), which suit Windows as well.
"""

from __future__ import annotations

from pathlib import Path


def cache_dir() -> Path:
    from tests.realcluster.build import cache_root

    return cache_root() / "windows"


def setup() -> tuple[Path, list[Path]]:
    """The embeddable CPython and the locked wheels, downloaded and checked once."""
    from release import windows

    return windows.embeddable_python(cache_dir()), windows.wheels(cache_dir())
