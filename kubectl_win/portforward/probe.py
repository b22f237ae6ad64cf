"""Choose a relay per container by probing once, and remember the choice (and any upload).

Windows containers: the native relay (uploaded with tar.exe), then powershell.exe, then pwsh.
Linux containers: python3, socat, OpenBSD nc, bash, whichever one `sh` finds first.
Containers of unknown OS try the Windows order, then the Linux one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from kubectl_win.kube.exec_stream import ExecError, ExecRejected, ExecStatus
from kubectl_win.portforward.relays import Relay, posix, powershell, windows_native

# Runs a command in the chosen container: (stdout, stderr, status).
Runner = Callable[[list[str], bytes | None], tuple[bytes, bytes, ExecStatus]]

RELAY_NAMES = ("native", "powershell", "pwsh", "socat", "python3", "nc", "bash")


class RelayUnavailable(Exception):
    """No relay could run in the container; the message lists what was tried."""


class KubeletUnreachable(ExecError):
    """The API server could not reach the pod's kubelet: no command ran, so no relay was tried."""


# What kube-apiserver says when it cannot open the stream to the kubelet. Over websockets (1.30+ translates
# them to the kubelet) 1.34 and 1.37 say `Internal error occurred: error sending request: Post "https://
# <node>:10250/exec/...": dial tcp <node>:10250: connect: connection refused`; kubectl's SPDY port-forward
# gets `error dialing backend: dial tcp ...` for the same node.
_KUBELET_UNREACHABLE = ("error dialing backend", "error sending request: ", "unable to upgrade connection",
                        "does not have a host assigned", "no preferred addresses found")


def kubelet_unreachable(status: ExecStatus) -> bool:
    return not status.success and status.exit_code is None and any(
        words in status.message for words in _KUBELET_UNREACHABLE)


def is_missing(status: ExecStatus) -> bool:
    """The command could not start at all (as opposed to starting and failing)."""
    if status.success or status.exit_code is not None:
        return False
    text = status.message.lower()
    return (status.reason == "InternalError" or "not found" in text or "cannot find the file" in text
            or "no such file" in text)


@dataclass
class Upload:
    key: tuple[str, str, str]  # namespace, pod uid, container
    runner: Runner
    session: str


@dataclass
class RelaySelector:
    session: str  # lowercase hex, names the upload directory
    forced: str | None = None
    _cache: dict[tuple[str, str, str], Relay] = field(default_factory=dict)
    _locks: dict[tuple[str, str, str], threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    uploads: list[Upload] = field(default_factory=list)

    def relay_for(self, key: tuple[str, str, str], windows: bool | None, runner: Runner) -> Relay:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one probe per container, even when 200 connections arrive at once
            relay = self._cache.get(key)
            if relay is None:
                relay = self._choose(key, windows, runner)
                self._cache[key] = relay
            return relay

    def forget(self, key: tuple[str, str, str]) -> None:
        with self._guard:
            self._cache.pop(key, None)

    def _choose(self, key: tuple[str, str, str], windows: bool | None, runner: Runner) -> Relay:
        runner = _reaching_the_kubelet(runner)
        tried: list[str] = []
        if self.forced:
            order = [self.forced]
        elif windows is True:
            order = ["native", "powershell", "pwsh"]
        elif windows is False:
            order = ["posix"]
        else:
            order = ["native", "powershell", "pwsh", "posix"]
        for name in order:
            relay = self._try(name, key, runner, tried)
            if relay is not None:
                return relay
        raise RelayUnavailable(f"no relay can run in container {key[2]!r}: tried {'; '.join(tried)}")

    def _try(self, name: str, key: tuple[str, str, str], runner: Runner, tried: list[str]) -> Relay | None:
        if name == "native":
            return self._upload_native(key, runner, tried)
        if name in ("powershell", "pwsh"):
            candidates = ([powershell.POWERSHELL] if name == "powershell"
                          else [powershell.PWSH, powershell.PWSH_FULL_PATH])
            for relay in candidates:
                out, err, status = runner(relay.probe_command(), None)
                if status.success and out.strip() == b"FullLanguage":
                    return relay
                tried.append(f"{relay.argv_template[0]} ({_why(status, out, err)})")
            return None
        # POSIX: one probe lists what the image has; a forced name must be among them.
        out, err, status = runner(posix.PROBE_COMMAND, None)
        available = out.decode("ascii", "replace").split() if status.success else []
        for relay in posix.POSIX_RELAYS:
            if relay.name in available and (name == "posix" or name == relay.name):
                return relay
        tried.append(f"sh ({_why(status, out, err)})" if not status.success
                     else f"{name if name != 'posix' else 'python3, socat, nc, bash'} (not in the image)")
        return None

    def _upload_native(self, key: tuple[str, str, str], runner: Runner, tried: list[str]) -> Relay | None:
        out, err, status = runner(windows_native.upload_command(), windows_native.upload_archive(self.session))
        if not status.success:
            tried.append(f"native relay upload with tar.exe ({_why(status, out, err)})")
            return None
        self.uploads.append(Upload(key, runner, self.session))
        out, err, status = runner(windows_native.version_command(self.session), None)
        if status.success and out.strip() == windows_native.VERSION_LINE:
            return windows_native.native_relay(self.session)
        tried.append(f"native relay ({_why(status, out, err)})")
        return None

    def remove_uploads(self) -> list[str]:
        """Delete uploaded relays; returns one line per failure."""
        failures = []
        for upload in self.uploads:
            try:
                out, err, status = upload.runner(windows_native.remove_command(upload.session), None)
            except ExecRejected as exc:
                if exc.code == 404:
                    continue  # the pod is gone, and the relay with it
                failures.append(f"could not remove the relay from container {upload.key[2]!r}: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - clean-up must not stop at the first failure
                failures.append(f"could not remove the relay from container {upload.key[2]!r}: {exc}")
                continue
            if not status.success:
                failures.append(f"could not remove the relay from container {upload.key[2]!r}: "
                                f"{_why(status, out, err)}")
        self.uploads.clear()
        return failures


def _reaching_the_kubelet(runner: Runner) -> Runner:
    """The runner, raising KubeletUnreachable (with the API server's message) instead of reporting a
    failed command when the stream never reached the kubelet: that is not a missing relay."""
    def run(command: list[str], stdin: bytes | None) -> tuple[bytes, bytes, ExecStatus]:
        out, err, status = runner(command, stdin)
        if kubelet_unreachable(status):
            raise KubeletUnreachable(status.message)
        return out, err, status
    return run


def _why(status: ExecStatus, out: bytes, err: bytes) -> str:
    if is_missing(status):
        return "not found"
    text = (err or out).decode("utf-8", "replace").strip().splitlines()
    if status.success:
        return f"unexpected output {text[-1][:80]!r}" if text else "no output"
    return text[-1][:120] if text else (status.message[:120] or f"exit code {status.exit_code}")
