"""The native Windows relay: kwin-relay.exe (native/winrelay.c), uploaded once per container.

Upload: a tar stream over exec stdin to `tar.exe -xf - -C C:\\Windows\\Temp` (bsdtar is inbox
since Windows 10 1803 / Server 2019 and C:\\Windows\\Temp is writable by ContainerUser), into a
directory named for this session, removed with `cmd.exe /c rmdir` when the forwarder exits.
"""

from __future__ import annotations

import io
import re
import tarfile
from importlib import resources

from kubectl_win.portforward.relays import Relay

EXE_NAME = "kwin-relay.exe"
VERSION_LINE = b"kwin-relay 2"  # 2: speaks the multiplexing protocol (--mux)
UPLOAD_PARENT = "C:\\Windows\\Temp"
_SESSION = re.compile(r"^[0-9a-f]{8,32}$")


def relay_bytes() -> bytes:
    return resources.files("kubectl_win.portforward.relays").joinpath("native", EXE_NAME).read_bytes()


def upload_directory(session: str) -> str:
    if not _SESSION.match(session):
        raise ValueError("session ids are lowercase hex")
    return f"{UPLOAD_PARENT}\\kubectl-win-{session}"


def upload_archive(session: str) -> bytes:
    """A tar holding kubectl-win-<session>/kwin-relay.exe, byte-stable for a given session."""
    data = relay_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        folder = tarfile.TarInfo(f"kubectl-win-{session}")
        folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, 0
        archive.addfile(folder)
        info = tarfile.TarInfo(f"kubectl-win-{session}/{EXE_NAME}")
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def upload_command() -> list[str]:
    return ["tar.exe", "-xf", "-", "-C", UPLOAD_PARENT]


def remove_command(session: str) -> list[str]:
    return ["cmd.exe", "/c", "rmdir", "/s", "/q", upload_directory(session)]


def native_relay(session: str) -> Relay:
    exe = f"{upload_directory(session)}\\{EXE_NAME}"
    return Relay("native", (exe, "{host}", "{port}"), own_exit_codes=True, mux_argv=(exe, "--mux"))


def version_command(session: str) -> list[str]:
    return [f"{upload_directory(session)}\\{EXE_NAME}", "--version"]
