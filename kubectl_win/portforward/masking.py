"""XOR masking of client websocket frames (RFC 6455 section 5.3): the upload path's hottest loop.

Pure Python tops out near 600 MB/s here (four strided `bytes.translate` passes, GIL held), which
alone costs a core at upload speeds. On Linux the process already has OpenSSL's libcrypto loaded
(the ssl module links it), and its `CRYPTO_ofb128_encrypt` XORs a buffer with a 16-byte pattern
word by word: OFB's keystream is the IV, re-encrypted by a block function after every 16 bytes.
Given `memmove` as the block function and a NULL key, each "re-encryption" is
`memmove(iv, iv, 0)`, a no-op, so the keystream is the 4-byte mask key repeated. That runs at
memory speed with the GIL released.

Only a libcrypto that is already mapped into this process is used (never one loaded by name:
some platforms abort on that), and only after a self-check against the pure version;
`KUBECTL_WIN_PURE_MASK=1` forces the pure version.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

_XOR_TABLES = [bytes(b ^ k for b in range(256)) for k in range(256)]

# (buffer, start, key) -> None: masks buffer[start:] in place.
MaskInto = Callable[[bytearray, int, bytes], None]


def mask_into_pure(buffer: bytearray, start: int, key: bytes) -> None:
    for offset in range(4):
        region = slice(start + offset, None, 4)
        buffer[region] = buffer[region].translate(_XOR_TABLES[key[offset]])


def _libcrypto_mask() -> MaskInto | None:
    if not sys.platform.startswith("linux") or os.environ.get("KUBECTL_WIN_PURE_MASK"):
        return None
    import ctypes
    import ssl  # noqa: F401 - maps libcrypto into the process

    path = None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                name = line.rsplit(None, 1)[-1] if line.strip() else ""
                if "/libcrypto" in name and ".so" in name:
                    path = name
                    break
    except OSError:
        return None
    if path is None:
        return None
    try:
        ofb = ctypes.CDLL(path).CRYPTO_ofb128_encrypt
        memmove = ctypes.cast(ctypes.CDLL(None).memmove, ctypes.c_void_p)
    except (OSError, AttributeError):
        return None
    ofb.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p,
                    ctypes.POINTER(ctypes.c_int), ctypes.c_void_p]
    ofb.restype = None

    def mask_into(buffer: bytearray, start: int, key: bytes) -> None:
        length = len(buffer) - start
        if length <= 0:
            return
        if length < 64:  # the ctypes call costs more than the loop for pings and close frames
            mask_into_pure(buffer, start, key)
            return
        view = (ctypes.c_char * len(buffer)).from_buffer(buffer)
        try:
            address = ctypes.addressof(view) + start
            iv = ctypes.create_string_buffer(key * 4, 16)  # OFB's IV: the key repeated, never modified
            ofb(address, address, length, None, iv, ctypes.byref(ctypes.c_int(0)), memmove)
        finally:
            del view  # release the buffer export so the bytearray can be resized again

    return mask_into


def _self_check(candidate: MaskInto) -> bool:
    for length in (64, 65, 67, 1000, 4099, 70001):
        key = os.urandom(4)
        data = os.urandom(length)
        prefix = os.urandom(length % 11)
        expected = bytearray(prefix + data)
        mask_into_pure(expected, len(prefix), key)
        got = bytearray(prefix + data)
        candidate(got, len(prefix), key)
        if got != expected:
            return False
    return True


_chosen: MaskInto | None = None
_choose_lock = threading.Lock()


def mask_into(buffer: bytearray, start: int, key: bytes) -> None:
    """Mask buffer[start:] in place with the 4-byte key, the fastest way that checks out here."""
    global _chosen
    if _chosen is None:
        with _choose_lock:
            if _chosen is None:
                fast = None
                try:
                    fast = _libcrypto_mask()
                    if fast is not None and not _self_check(fast):
                        fast = None
                except Exception:  # noqa: BLE001 - any surprise means the pure version
                    fast = None
                _chosen = fast or mask_into_pure
    _chosen(buffer, start, key)


def accelerated() -> bool:
    """True when masking runs in libcrypto (for the benchmark's report and the tests)."""
    mask_into(bytearray(), 0, b"\0\0\0\0")
    return _chosen is not mask_into_pure
