"""Keeping a long-running serve's resident size flat under glibc's malloc, through ctypes (no library wraps
these two calls); elsewhere (musl, Windows, macOS) both are no-ops.

Each scan parses pages of several MiB in worker threads and frees them all when its report is dropped. glibc
then (1) raises its mmap threshold to the largest block freed, so later pages come from the heap instead of
mmap and their freed space stays resident, and (2) keeps freed memory in the arenas of the threads that
used it. bench/bench_serve.py measures resident memory over repeated scans, which without these grows in
steps.
"""

from __future__ import annotations

from typing import Any

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h
_THRESHOLD = 128 * 1024  # glibc's default, made fixed: setting it turns the dynamic raise off


def fix_mmap_threshold() -> None:
    """Large blocks always mmapped, so they go back to the system when freed."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(_M_MMAP_THRESHOLD, _THRESHOLD)


def release_free_memory() -> None:
    """Hand the memory freed since the last call back to the system (after each scan)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _libc() -> Any:
    import ctypes

    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: libc's on Linux
        return libc if hasattr(libc, "malloc_trim") else None  # glibc only
    except (OSError, AttributeError, TypeError):
        return None
