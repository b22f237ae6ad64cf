"""Windows error codes (knowledge/windows_errors.yaml) found in text and exit codes, decoded.

Codes reach users in many spellings: `(0x52e)` after Win32 text, `0x803b0010` from HNS, `0xc0370101` from
hcsshim, `Error 80070002` or `Error code is c0000bb8` (bare hex), `"ErrorCode":2151350288`, `winapi error
#3489792023`, `Status = 1722 0x6ba` (nltest), `Windows System Error 1326` (PowerShell), an exit code of
-1073741510 or 3221225786. `find_codes` finds them, `decode` names them: exact table entries first, then
the wrappers (HRESULT_FROM_WIN32 0x8007xxxx, HCS status 0xC037xxxx, HRESULT_FROM_NT 0xDxxxxxxx).
`codes_in_text` finds codes a message names only by their Windows text ("The directory name is invalid.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from kubectl_win.knowledge import load

_FAMILY = {"win32": "Win32", "hcs": "HCS", "hns": "HNS", "hresult": "HRESULT", "pdh": "PDH", "ntstatus": "NTSTATUS"}


@dataclass(frozen=True)
class Decoded:
    code: int  # unsigned 32-bit value as it appeared
    family: str  # Win32, HRESULT, HCS, HNS, NTSTATUS
    name: str
    meaning: str
    hint: str = ""
    names_cause: bool = False  # as an exit code: the meaning is why the process ended (knowledge: names_cause)

    @property
    def hex(self) -> str:
        return f"0x{self.code:X}" if self.code <= 0xFFFF else f"0x{self.code:08X}"

    def text(self) -> str:
        """'0x803B0010 = HCN_E_NETWORK_ALREADY_EXISTS (A network with this name already exists)'."""
        return f"{self.hex} = {self.name} ({self.meaning.rstrip('.')})"


@cache
def _tables() -> dict[int, tuple[str, dict]]:
    data = load("windows_errors")
    out: dict[int, tuple[str, dict]] = {}
    for section, family in _FAMILY.items():
        for entry in data.get(section) or ():
            out[int(entry["code"]) & 0xFFFFFFFF] = (family, entry)
    return out


def _entry(family: str, entry: dict, code: int, wrapper: str = "") -> Decoded:
    name = f"{wrapper}({entry['name']})" if wrapper else str(entry["name"])
    return Decoded(code, "HRESULT" if wrapper else family, name, str(entry["meaning"]), str(entry.get("hint") or ""),
                   bool(entry.get("names_cause")))


def decode(value: int) -> Decoded | None:
    """The code's name and meaning, or None for values that are no known Windows code (0, small ints
    outside the table, ordinary exit codes)."""
    code = value & 0xFFFFFFFF
    if code == 0:
        return None
    tables = _tables()
    if code in tables:
        return _entry(*tables[code], code)
    high = code >> 16
    if high == 0x8007 and (code & 0xFFFF) in tables:  # HRESULT_FROM_WIN32
        family, entry = tables[code & 0xFFFF]
        return _entry(family, entry, code, "HRESULT_FROM_WIN32")
    if high == 0xC037 and (code ^ 0x40000000) in tables:  # HCS status form of 0x8037xxxx
        family, entry = tables[code ^ 0x40000000]
        return _entry(family, entry, code)
    if code >> 28 == 0xD and (code & ~0x10000000) in tables:  # HRESULT_FROM_NT
        family, entry = tables[code & ~0x10000000]
        return _entry(family, entry, code, "HRESULT_FROM_NT")
    if code >> 30 == 0x3:  # an NTSTATUS error value the table does not list
        return Decoded(code, "NTSTATUS", "(unknown NTSTATUS)", "a Windows status code kubectl-win does not know")
    if high in (0x8007, 0x8037, 0x803B):
        return Decoded(code, "HRESULT", "(unknown HRESULT)", "a Windows error code kubectl-win does not know")
    return None


def decode_exit(exit_code: int) -> Decoded | None:
    """An exit code that is a Windows status (NTSTATUS or HRESULT, signed or unsigned); None for ordinary
    process exit codes such as 1 or 137."""
    code = exit_code & 0xFFFFFFFF
    if code < 0x40000000:
        return None
    return decode(code)


_HEX = re.compile(r"(?<![0-9A-Za-z])0x([0-9A-Fa-f]{1,8})(?![0-9A-Za-z])")
_BARE_HRESULT = re.compile(
    r"\b(?:[Ee]rror|[Cc]ode|[Ss]tatus|HRESULT|hr)(?: is)?[ :=#]+"
    r"((?:8[0-9A-Fa-f]{3}|[CcDd]0[0-9A-Fa-f]{2})[0-9A-Fa-f]{4})\b")
# Win32 codes written in decimal: PowerShell's FullyQualifiedErrorId, nltest's `Status = N 0x...`, Go's
# syscall.Errno text. Any positive value is a Win32 code here.
_WIN32_DECIMAL = re.compile(
    r"(?:Windows System Error|[Ww]in32 [Ee]rror(?: code)?|System error|Status =|Win32 status)\s*#?(\d{1,5})\b")
_DECIMAL = re.compile(
    r"(?:ErrorCode\"?\s*[:=]\s*|winapi error #|[Ee]xit ?[Cc]ode\s*[:=]?\s*|exit status\s+|"
    r"[Ee]rror code (?:is )?)(-?\d{1,10})\b")


def find_codes(text: str) -> tuple[Decoded, ...]:
    """Every known Windows code in the text, in order of appearance, each once."""
    if not text:
        return ()
    found: list[tuple[int, int]] = []
    for match in _HEX.finditer(text):
        found.append((match.start(), int(match.group(1), 16)))
    for match in _BARE_HRESULT.finditer(text):
        found.append((match.start(1), int(match.group(1), 16)))
    for match in _WIN32_DECIMAL.finditer(text):
        value = int(match.group(1))
        if value:
            found.append((match.start(1), value))
    for match in _DECIMAL.finditer(text):
        try:
            value = int(match.group(1))
        except ValueError:
            continue
        if -(2**31) <= value < 2**32 and (value < 0 or value >= 0x40000000):
            found.append((match.start(1), value))
    out: list[Decoded] = []
    seen: set[str] = set()
    for _, value in sorted(found):
        decoded = decode(value)
        if decoded is None:
            continue
        core = decoded.name.partition("(")[2].rstrip(")") or decoded.name  # HRESULT_FROM_WIN32(X) is X again
        if core in seen and not decoded.name.startswith("(unknown"):
            continue
        seen.add(core)
        out.append(decoded)
    return tuple(out)


_ESCAPED_BREAK = re.compile(r"(?:\\r)?\\n")


@cache
def _meanings() -> tuple[re.Pattern[str], dict[str, int]]:
    """One pattern for every meaning text of the table (the long, distinctive ones), and text -> code."""
    by_text: dict[str, int] = {}
    for code, (_family, entry) in _tables().items():
        text = " ".join(str(entry.get("meaning") or "").split()).rstrip(".").lower()
        if len(text) >= 16 and text[0].isalpha() and text not in by_text and not text.startswith("a windows"):
            by_text[text] = code
    alternation = "|".join(re.escape(t) for t in sorted(by_text, key=len, reverse=True))
    return re.compile(alternation, re.IGNORECASE), by_text


def codes_in_text(text: str) -> tuple[Decoded, ...]:
    """Codes the text names by their Windows message only ("The RPC server is unavailable" = 0x6BA)."""
    if not text:
        return ()
    pattern, by_text = _meanings()
    text = " ".join(_ESCAPED_BREAK.sub(" ", text).split())  # PowerShell output quoted by Go: "user \r\nname"
    out: list[Decoded] = []
    for match in pattern.finditer(text):
        decoded = decode(by_text[match.group(0).lower()])
        if decoded is not None and decoded not in out:
            out.append(decoded)
    return tuple(out)


def describe(codes: tuple[Decoded, ...]) -> str:
    """' [0x5 = ERROR_ACCESS_DENIED (Access is denied); ...]' for appending to a quoted message."""
    return f" [{'; '.join(c.text() for c in codes)}]" if codes else ""
