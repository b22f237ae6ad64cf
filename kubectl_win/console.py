"""Standard streams and console events that behave alike on every OS.

- Text written to pipes and files is UTF-8 everywhere (Windows would write its ANSI code page,
  cp1252, and fail on the first character outside it); a console gets what its encoding can show,
  with `?` for the rest, never an error. (On Windows, CPython writes consoles through
  WriteConsoleW, so they get the real characters.)
- Colours on a Windows console need virtual-terminal processing; where it cannot be switched on
  (legacy conhost) no escape codes are written.
- Ctrl-Break and closing the console window (also log-off and shut-down) unwind like Ctrl-C, so
  what the tool started on a cluster is removed.

Only `os` and `sys` are imported at the top: this runs before every command, help included.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import IO, Any

_UTF8 = ("utf-8", "utf8")
_CTRL_CLOSE_EVENT, _CTRL_LOGOFF_EVENT, _CTRL_SHUTDOWN_EVENT = 2, 5, 6
_ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004
# Windows ends a process this long after a close event; the clean-up gets most of it.
CLOSE_GRACE_SECONDS = 4.5
_handlers: list[Any] = []  # ctypes callbacks must stay alive while registered


def setup_streams() -> None:
    """UTF-8 on stdout and stderr unless they are consoles; consoles never raise UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        encoding = str(getattr(stream, "encoding", "") or "").lower()
        if encoding in _UTF8:
            continue
        try:
            console = stream.isatty()
        except (AttributeError, ValueError):
            console = False
        try:
            reconfigure(errors="replace") if console else reconfigure(encoding="utf-8")
        except (ValueError, OSError):  # a stream that cannot change any more: leave it
            pass


def colours_allowed(stream: IO[str]) -> bool:
    """Whether escape codes may go to this console stream: always off Windows; on Windows, only when
    virtual-terminal processing is (or can be switched) on."""
    if os.name != "nt":
        return True
    try:
        import ctypes
        import msvcrt
        from ctypes import wintypes

        handle = msvcrt.get_osfhandle(stream.fileno())
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        mode = wintypes.DWORD()
        if not kernel32.GetConsoleMode(wintypes.HANDLE(handle), ctypes.byref(mode)):
            return False
        if mode.value & _ENABLE_VIRTUAL_TERMINAL_PROCESSING:
            return True
        return bool(kernel32.SetConsoleMode(wintypes.HANDLE(handle), mode.value | _ENABLE_VIRTUAL_TERMINAL_PROCESSING))
    except (ImportError, OSError, AttributeError, ValueError):
        return False


def console_events_interrupt(stop: Callable[[], None] | None = None) -> Any:
    """A context manager: on Windows, Ctrl-Break and a console close/log-off/shut-down do what Ctrl-C
    does (raise KeyboardInterrupt in the main thread, or call `stop`); a close waits (up to
    CLOSE_GRACE_SECONDS) until the block has been left, clean-up included. Elsewhere it does nothing."""
    from contextlib import contextmanager

    @contextmanager
    def manager() -> Iterator[None]:
        import threading

        if os.name != "nt" or threading.current_thread() is not threading.main_thread():
            yield
            return
        import signal

        left = threading.Event()

        def on_break(signum: int, frame: Any) -> None:
            if stop is not None:
                stop()
            else:
                raise KeyboardInterrupt

        previous = signal.signal(signal.SIGBREAK, on_break)
        handler = _register_close_handler(stop, left)
        try:
            yield
        finally:
            left.set()
            signal.signal(signal.SIGBREAK, previous)
            _unregister(handler)

    return manager()


def _register_close_handler(stop: Callable[[], None] | None, left: Any) -> Any:
    try:
        import ctypes
        import signal
        from ctypes import wintypes

        # A real SIGINT (not _thread.interrupt_main) also wakes a main thread blocked in time.sleep.
        interrupt = stop or (lambda: signal.raise_signal(signal.SIGINT))

        @ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)
        def on_event(event: int) -> bool:
            if event not in (_CTRL_CLOSE_EVENT, _CTRL_LOGOFF_EVENT, _CTRL_SHUTDOWN_EVENT):
                return False  # Ctrl-C and Ctrl-Break: Python's own handler
            interrupt()
            left.wait(CLOSE_GRACE_SECONDS)
            return True

        if not ctypes.WinDLL("kernel32").SetConsoleCtrlHandler(on_event, True):
            return None
    except (ImportError, OSError, AttributeError):
        return None
    _handlers.append(on_event)
    return on_event


def _unregister(handler: Any) -> None:
    if handler is None:
        return
    import ctypes

    ctypes.WinDLL("kernel32").SetConsoleCtrlHandler(handler, False)
    if handler in _handlers:
        _handlers.remove(handler)
