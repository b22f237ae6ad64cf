"""Fix commands quoted for the shell the user pastes them into: POSIX sh, PowerShell or cmd.exe.

A fix is an argument vector (findings.Fix); only here does it become text, so a name or value that a
cluster or a file holds can never break out of its argument. Each dialect follows its own documented
rules and mixes in none of the others':

- posix: `shlex.quote` (single quotes; a quote inside as '"'"').
- powershell: bare words where PowerShell reads them as one literal argument, else single quotes with
  `'` doubled. Windows PowerShell 5.1 drops embedded double quotes when it passes arguments to a native
  program (PowerShell 7.3+ keeps them), so no argument may carry one: a JSON patch after `-p` is given
  as the YAML flow document it is equal to (kubectl reads YAML there too), written without double quotes.
- cmd: cmd.exe has no single quotes. Arguments are quoted for the C runtime's argument splitting
  (CommandLineToArgvW rules) and cmd's metacharacters outside its quoted stretches are escaped with `^`
  (a `%` between quotes steps out of them to be escaped, since cmd expands variables there too);
  a JSON patch is given as quote-free YAML flow for the same reason as above.

Which shell: `--shell`, else on Windows the shell the user runs us from (the nearest ancestor process
that is powershell, pwsh or cmd; kubectl and our own launcher are passed over), else posix.
"""

from __future__ import annotations

import os
import re

SHELLS = ("posix", "powershell", "cmd")

_PS_BARE = re.compile(r"[A-Za-z_/][A-Za-z0-9_./:=+\-\\]*")
_PS_PARAMETER = re.compile(r"--?[A-Za-z][A-Za-z0-9-]*")
_CMD_BARE = re.compile(r"[A-Za-z0-9_./:=+\-\\,]+")
_CMD_META = set('&|<>^()%!')
_PATCH_FLAGS = ("-p", "--patch")
_FLOW_UNSAFE = re.compile(r"""^[\s\-?:,\[\]{}#&*!|>'"%@`]|[,\[\]{}]|: |:$| #|\s$|"|^$""")


def quote_command(argv: tuple[str, ...] | list[str], shell: str = "posix") -> str:
    if shell == "powershell":
        return " ".join(_powershell_word(word, _is_patch(argv, i)) for i, word in enumerate(argv))
    if shell == "cmd":
        return _cmd_escape(" ".join(_cmd_word(word, _is_patch(argv, i)) for i, word in enumerate(argv)))
    import shlex

    return " ".join(shlex.quote(word) for word in argv)


def _is_patch(argv: tuple[str, ...] | list[str], index: int) -> bool:
    return index > 0 and argv[index - 1] in _PATCH_FLAGS


def _powershell_word(word: str, patch: bool) -> str:
    if patch:
        word = quote_free_patch(word)
    # Bare: words that start with a letter, _ or /, and plain flags. Quoted: any other word starting with "-"
    # (--limits=memory=1Gi, which PowerShell's grammar splits; "-", "--%") and words that start like a number
    # (PowerShell passes 1e3 as 1000, 0x10 as 16, 1kb as 1024).
    if _PS_BARE.fullmatch(word) or _PS_PARAMETER.fullmatch(word):
        return word
    # PowerShell treats the typographic single quotes as quotes too: double them like '.
    return "'" + re.sub(r"(['\u2018\u2019\u201a\u201b])", r"\1\1", word) + "'"


def _cmd_word(word: str, patch: bool) -> str:
    if patch:
        word = quote_free_patch(word)
    if _CMD_BARE.fullmatch(word):
        return word
    # CommandLineToArgvW: backslashes are literal unless they precede a quote; 2n+1 backslashes and a
    # quote give n backslashes and a literal quote.
    return '"' + re.sub(r'(\\*)"', lambda m: m.group(1) * 2 + '\\"', re.sub(r'(\\+)$', r'\1\1', word)) + '"'


def _cmd_escape(line: str) -> str:
    """cmd's own pass over the whole line: its quote state flips on every " (escaped for the C runtime or
    not) and carries from one argument to the next, so it is followed over the line, not per argument."""
    out, inside = [], False
    for char in line:
        if char == '"':
            inside = not inside
        elif char == "%" and inside:
            # cmd expands %VAR% even between quotes: step out, escape, step back in. Backslashes just before
            # the quote that steps out now precede a quote: double them so they stay literal (\% stays \%).
            written = "".join(out)
            out.append("\\" * (len(written) - len(written.rstrip("\\"))) + '"^%"')
            continue
        elif char in _CMD_META and not inside:
            out.append("^")
        out.append(char)
    return "".join(out)


def quote_free_patch(text: str) -> str:
    """A JSON document as an equal YAML flow document without double quotes (else the text as it is)."""
    if '"' not in text or not text.lstrip().startswith(("{", "[")):
        return text
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return text
    return _flow(doc)


def _flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flow_scalar(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return _flow_scalar(value)
    import json

    return json.dumps(value)  # numbers, true, false, null read the same in YAML


def _flow_scalar(text: str) -> str:
    if not _FLOW_UNSAFE.search(text) and _reads_as_string(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _reads_as_string(text: str) -> bool:
    """Whether YAML 1.1 (what kubectl's YAML reader speaks) reads the plain scalar back as this string."""
    import yaml

    try:
        return yaml.safe_load("[" + text + "]") == [text]
    except yaml.YAMLError:
        return False


def resolve_shell(requested: str | None) -> str:
    """--shell if given, else the Windows shell we run under, else posix."""
    if requested:
        return requested
    if os.name != "nt":
        return "posix"
    return _parent_windows_shell() or "powershell"


_WINDOWS_SHELLS = {"powershell.exe": "powershell", "pwsh.exe": "powershell", "cmd.exe": "cmd"}
_PASSED_OVER = {"kubectl.exe", "kubectl-win.exe", "python.exe", "pythonw.exe", "py.exe", "conhost.exe"}


def _parent_windows_shell() -> str | None:  # pragma: no cover - runs on Windows only
    """The nearest ancestor that is a shell, from a Toolhelp snapshot of the process table."""
    try:
        parents = _process_table()
    except OSError:
        return None
    pid = os.getpid()
    for _ in range(8):
        parent_pid = parents.get(pid, (-1, ""))[0]
        parent = parents.get(parent_pid)
        if parent is None:
            return None
        name = parent[1].lower()
        if name in _WINDOWS_SHELLS:
            return _WINDOWS_SHELLS[name]
        if name not in _PASSED_OVER:
            return None
        pid = parent_pid
    return None


def _process_table() -> dict[int, tuple[int, str]]:  # pragma: no cover - runs on Windows only
    """pid -> (parent pid, exe name)."""
    import ctypes
    from ctypes import wintypes

    class Entry(ctypes.Structure):
        _fields_ = [("dwSize", wintypes.DWORD), ("cntUsage", wintypes.DWORD), ("th32ProcessID", wintypes.DWORD),
                    ("th32DefaultHeapID", ctypes.c_void_p), ("th32ModuleID", wintypes.DWORD),
                    ("cntThreads", wintypes.DWORD), ("th32ParentProcessID", wintypes.DWORD),
                    ("pcPriClassBase", ctypes.c_long), ("dwFlags", wintypes.DWORD),
                    ("szExeFile", ctypes.c_wchar * 260)]

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateToolhelp32Snapshot.restype = wintypes.HANDLE
    snapshot = kernel32.CreateToolhelp32Snapshot(0x2, 0)  # TH32CS_SNAPPROCESS
    if snapshot in (None, wintypes.HANDLE(-1).value):
        raise OSError("no process snapshot")
    table: dict[int, tuple[int, str]] = {}
    try:
        entry = Entry()
        entry.dwSize = ctypes.sizeof(Entry)
        ok = kernel32.Process32FirstW(snapshot, ctypes.byref(entry))
        while ok:
            table[entry.th32ProcessID] = (entry.th32ParentProcessID, entry.szExeFile)
            ok = kernel32.Process32NextW(snapshot, ctypes.byref(entry))
    finally:
        kernel32.CloseHandle(snapshot)
    return table
