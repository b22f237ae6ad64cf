"""The pods/exec subresource over websockets, as kube-apiserver + kubelet serve it.

Speaks v5.channel.k8s.io and v4.channel.k8s.io (offers from the client in its order, like
wsstream's handshake; anything else is refused with 400). Frames: one channel byte + payload;
the first message is an empty frame on stdout ([0x01]); when the process ends the status
channel (3) carries a metav1.Status (Success, Failure/NonZeroExitCode with an ExitCode cause, or
InternalError when the command could not start); then a normal close. Under v5 a client frame
[255, 0] closes the process's stdin.

The requested command runs on this host. Linux pods run argv as is (PATH can be narrowed per
pod to emulate images). Windows pods (spec.os.name or nodeSelector kubernetes.io/os=windows)
emulate a container: C:\\ maps to a per-pod temporary directory, `tar.exe` and
`cmd.exe /c rmdir` are translated, and .exe files found under C:\\ run under Wine.

Entry point for the server: `await handle(request, ctx)` (ctx: server.ExecContext); per-server
settings live in `server.exec_settings` (an ExecSettings, created on first use by settings_for).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import WSMsgType, web

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, STATUS, CLOSE = 0, 1, 2, 3, 255
# Largest stdout/stderr frame: under load the pipe holds more than one read's worth, and fewer,
# bigger frames cost this Python event loop less per byte (asyncio reads a pipe 256 KiB at a time).
CHUNK = 1024 * 1024
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def wine_binary() -> str | None:
    for candidate in ("/usr/lib/wine/wine64", shutil.which("wine64"), shutil.which("wine")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@dataclass
class ExecSession:
    """One running exec, for tests that kill the relay or drop the websocket mid-stream."""

    namespace: str
    pod: str
    container: str
    argv: list[str]
    protocol: str
    loop: asyncio.AbstractEventLoop
    transport: asyncio.BaseTransport | None = None
    process: asyncio.subprocess.Process | None = None
    frozen: asyncio.Event | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def kill_process(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.loop.call_soon_threadsafe(_kill, self.process)

    def drop(self) -> None:
        """Close the TCP connection without a close frame, like a dying load balancer."""
        if self.transport is not None:
            self.loop.call_soon_threadsafe(self.transport.abort)

    def end(self) -> None:
        def stop() -> None:
            if self.frozen is not None:
                self.frozen.set()
            if self.process is not None:
                _kill(self.process)
            if self.transport is not None:
                self.transport.abort()
        self.loop.call_soon_threadsafe(stop)

    def send_raw(self, data: bytes) -> None:
        """Write bytes on the connection past the websocket layer (a forged frame, say)."""
        if self.transport is not None:
            self.loop.call_soon_threadsafe(self.transport.write, data)

    def freeze(self) -> None:
        """Stop reading and writing (and so answering pings): a hung connection."""
        def stop() -> None:
            if self.frozen is not None:
                self.frozen.clear()
            if self.transport is not None:
                self.transport.pause_reading()  # pings are no longer read, so never answered
        self.loop.call_soon_threadsafe(stop)


@dataclass
class ExecSettings:
    protocols: tuple[str, ...] = (V5, V4)  # what the server accepts
    idle_timeout: float | None = None  # close a stream with no client frame (pings count) for this long
    # WINEPREFIX for Windows pods (initialised by the caller); a server process takes it from the environment.
    wine_prefix: str | None = field(default_factory=lambda: os.environ.get("KUBECTL_WIN_TEST_WINEPREFIX"))
    root: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="kwin-pods-"))
    linux_path: dict[str, str] = field(default_factory=dict)  # "ns/pod" -> PATH for that pod's commands
    windows_tools: dict[str, set[str]] = field(default_factory=dict)  # "ns/pod" -> available tools
    # node name -> (recorded HNS dump file, seconds to wait before printing it): PowerShell in a HostProcess
    # pod on that node prints the dump, as the hns script would on a real node.
    hns_dumps: dict[str, tuple[str, float]] = field(default_factory=dict)
    # node -> (recorded archive, seconds to wait before sending it, exit code): PowerShell running the collect
    # script in a HostProcess pod on that node reads its one stdin line (kept in the file collect_stdin[node]
    # names; its second, the script, in that name + ".script") and sends the archive, as the script would.
    collect_archives: dict[str, tuple[str, float, int]] = field(default_factory=dict)
    collect_stdin: dict[str, str] = field(default_factory=dict)
    host_process_nodes: dict[str, str] = field(default_factory=dict)  # "ns/pod" -> node, filled per exec
    sessions: list[ExecSession] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)  # every argv requested, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pod_root(self, namespace: str, pod: str) -> Path:
        path = Path(self.root, namespace, pod)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def end_all(self, timeout: float = 5.0) -> None:
        """Tear down every running exec (tests call this so no handler outlives its test)."""
        sessions = self.live_sessions()
        for session in sessions:
            session.end()
        deadline = time.monotonic() + timeout
        for session in sessions:
            session.done.wait(max(0.0, deadline - time.monotonic()))
        stuck = [s.argv[:1] for s in sessions if not s.done.is_set()]
        if stuck:
            print(f"exec sessions still running after {timeout}s: {stuck}", file=sys.stderr)

    def live_sessions(self) -> list[ExecSession]:
        with self.lock:
            return [s for s in self.sessions if not s.done.is_set()]


DEFAULT_WINDOWS_TOOLS = {"tar.exe", "cmd.exe"}


def settings_for(server) -> ExecSettings:  # noqa: ANN001 - tests.apiserver.server.ApiServer
    settings = getattr(server, "exec_settings", None)
    if settings is None:
        workdir = getattr(server, "workdir", None)
        settings = ExecSettings(root=str(Path(workdir) / "pods")) if workdir else ExecSettings()
        server.exec_settings = settings
    return settings


def status_body(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


def _error(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(status_body(code, reason, message), status=code)


def _is_windows(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    return ((spec.get("os") or {}).get("name") == "windows"
            or (spec.get("nodeSelector") or {}).get("kubernetes.io/os") == "windows")


def _is_host_process(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    return bool(((spec.get("securityContext") or {}).get("windowsOptions") or {}).get("hostProcess"))


async def handle(request: web.Request, ctx) -> web.StreamResponse:  # noqa: ANN001 - server.ExecContext
    settings = settings_for(ctx.server)
    namespace, name, pod = ctx.namespace, ctx.name, ctx.pod

    query = request.query
    argv = query.getall("command", [])
    containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    container = query.get("container") or (containers[0] if len(containers) == 1 else "")
    if not argv:
        return _error(400, "BadRequest", "you must specify at least 1 command")
    if not container:
        return _error(400, "BadRequest", f"a container name must be specified for pod {name}, "
                                         f"choose one of: [{' '.join(containers)}]")
    if container not in containers:
        return _error(400, "BadRequest", f"container {container} is not valid for pod {name}")
    phase = (pod.get("status") or {}).get("phase", "Running")
    if phase != "Running":
        return _error(400, "BadRequest", f"cannot exec into a container in a completed pod; current phase is {phase}")

    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    chosen = next((p for p in offered if p in settings.protocols), None)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return _error(400, "BadRequest", "Upgrade request required")
    if chosen is None:
        return _error(400, "BadRequest", f"unable to upgrade connection: requested protocol(s) are not supported: "
                                         f"{offered}; supported protocols: {list(settings.protocols)}")

    ws = web.WebSocketResponse(protocols=(chosen,), autoping=True, max_msg_size=0, compress=False)
    session = ExecSession(namespace, name, container, list(argv), chosen, asyncio.get_running_loop(),
                          transport=request.transport, frozen=asyncio.Event())
    session.frozen.set()
    with settings.lock:
        settings.sessions.append(session)
        settings.commands.append(list(argv))
    try:
        await ws.prepare(request)
        await ws.send_bytes(bytes((STDOUT,)))  # the "connection ready" empty frame
        await _serve(ws, session, settings, pod)
    except (ConnectionError, asyncio.CancelledError, RuntimeError):
        pass
    finally:
        process = session.process
        if process is not None:
            if process.returncode is None:
                _kill(process)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), 5)
            # Close the subprocess transport (stdin and every pipe) while this server's loop runs: left to a
            # garbage-collector finaliser after the loop is gone, it raises inside whatever code the collector
            # interrupts (CPython 3.11 then reports a SystemError from an unrelated compile()). asyncio's
            # Process exposes no public close; its transport is the documented SubprocessTransport.
            _close_stdin(process.stdin)
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
            await asyncio.sleep(0)
        session.done.set()
    return ws


async def _serve(ws: web.WebSocketResponse, session: ExecSession, settings: ExecSettings, pod: dict) -> None:
    try:
        session.process = await _start(session, settings, pod)
    except _StartError as exc:
        await _send_status(ws, status_body(500, "InternalError", str(exc)))
        await ws.close()
        return
    process = session.process
    reader = asyncio.create_task(_pump_client(ws, session, settings))
    out = asyncio.create_task(_pump_output(ws, session, process.stdout, STDOUT))
    err = asyncio.create_task(_pump_output(ws, session, process.stderr, STDERR))
    try:
        await asyncio.wait({out, err}, return_when=asyncio.ALL_COMPLETED)
        code = await process.wait()
    finally:
        for task in (out, err):
            task.cancel()
    if ws.closed or session.transport is None or session.transport.is_closing():
        reader.cancel()  # the client is gone (or the connection was dropped): nobody to tell
        return
    await session.frozen.wait()
    if code == 0:
        body = {"metadata": {}, "status": "Success"}
    else:
        exit_code = 128 - code if code < 0 else code  # killed by a signal: 128 + signal, as runtimes report
        body = status_body(500, "NonZeroExitCode", f"command terminated with non-zero exit code: "
                                                   f"error executing command {session.argv[:1]}, exit code {exit_code}",
                           {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]})
        body.pop("code")
        body.pop("kind")
        body.pop("apiVersion")
    await _send_status(ws, body)
    with contextlib.suppress(asyncio.TimeoutError, ConnectionError, RuntimeError):
        await asyncio.wait_for(ws.close(), 2)
    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(reader, 2)
    reader.cancel()


async def _send_status(ws: web.WebSocketResponse, body: dict) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        await ws.send_bytes(bytes((STATUS,)) + json.dumps(body).encode())


async def _pump_output(ws: web.WebSocketResponse, session: ExecSession, stream: asyncio.StreamReader,
                       channel: int) -> None:
    prefix = bytes((channel,))
    while True:
        data = await stream.read(CHUNK)
        if not data:
            return
        await session.frozen.wait()
        if ws.closed:
            break
        try:
            await ws.send_bytes(prefix + data)
        except (ConnectionError, RuntimeError):
            break
    # The client is gone: read the rest and drop it. A pipe left unread stays paused (asyncio's flow control), so
    # it never sees the process's end and Process.wait() never returns, even for a killed process.
    while await stream.read(CHUNK):
        pass


async def _pump_client(ws: web.WebSocketResponse, session: ExecSession, settings: ExecSettings) -> None:
    process = session.process
    stdin = process.stdin
    while True:
        try:
            message = await ws.receive(timeout=settings.idle_timeout)
        except TimeoutError:
            # Like kubelet's streaming-connection-idle-timeout: silence (no frames, no pings) ends it.
            await ws.close(code=1000, message=b"idle timeout")
            _kill(process)
            return
        await session.frozen.wait()
        if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
            _close_stdin(stdin)
            if process.returncode is None:
                # The client went away: the runtime tears the exec down.
                await asyncio.sleep(0.2)
                _kill(process)
            return
        if message.type != WSMsgType.BINARY or not message.data:
            continue
        data = message.data
        if data[0] == STDIN:
            if stdin is None or stdin.is_closing():
                continue
            try:
                stdin.write(memoryview(data)[1:])  # no copy of the payload
                await stdin.drain()
            except (ConnectionError, BrokenPipeError):
                pass
        elif data[0] == CLOSE and session.protocol == V5 and len(data) == 2 and data[1] == STDIN:
            _close_stdin(stdin)


def _close_stdin(stdin: asyncio.StreamWriter | None) -> None:
    if stdin is not None and not stdin.is_closing():
        with contextlib.suppress(Exception):
            stdin.close()


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        if not getattr(process, "under_wine", False):
            # The whole group: shell relays leave children holding the pipes. Not for Wine, whose
            # wineserver may share the group and is shared by every Windows exec.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()


class _StartError(Exception):
    pass


async def _start(session: ExecSession, settings: ExecSettings, pod: dict) -> asyncio.subprocess.Process:
    key = f"{session.namespace}/{session.pod}"
    env = dict(os.environ)
    if _is_host_process(pod):
        with settings.lock:
            settings.host_process_nodes[key] = str((pod.get("spec") or {}).get("nodeName") or "")
    if _is_windows(pod):
        argv, env = _windows_argv(session.argv, settings, key, env)
        missing_message = (f"error executing command in container: failed to exec in container: failed to start "
                           f"exec: hcs::System::CreateProcess {session.argv[0]}: The system cannot find the file "
                           f"specified.: unknown")
    else:
        argv = list(session.argv)
        if key in settings.linux_path:
            env["PATH"] = settings.linux_path[key]
            resolved = shutil.which(argv[0], path=env["PATH"]) if "/" not in argv[0] else argv[0]
            argv = [resolved] + argv[1:] if resolved else []
        missing_message = (f"error executing command in container: failed to exec in container: failed to start "
                           f"exec: OCI runtime exec failed: exec failed: unable to start container process: "
                           f"exec: \"{session.argv[0]}\": executable file not found in $PATH: unknown")
    if not argv:
        raise _StartError(missing_message)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True, limit=CHUNK)
        process.under_wine = argv[0] == wine_binary()  # type: ignore[attr-defined]
        _widen_pipes(process)
        return process
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        raise _StartError(missing_message) from None


def _widen_pipes(process: asyncio.subprocess.Process) -> None:
    """1 MiB pipes instead of 64 KiB: fewer context switches per 256 KiB websocket frame."""
    for stream in (process.stdin, process.stdout, process.stderr):
        transport = getattr(stream, "transport", None) or getattr(stream, "_transport", None)
        pipe = transport.get_extra_info("pipe") if transport is not None else None
        if pipe is not None:
            with contextlib.suppress(OSError, ValueError):  # ValueError: already closed (a quick exit)
                fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, 1 << 20)


def _runs_collect(argv: list[str]) -> bool:
    """The collect loader starts with its marker line (kubectl_win/collect/script.py)."""
    import base64

    if "-EncodedCommand" not in argv[:-1]:
        return False
    try:
        text = base64.b64decode(argv[argv.index("-EncodedCommand") + 1]).decode("utf-16-le")
    except ValueError:
        return False
    return text.startswith("# kubectl-win collect script")


def _windows_path(text: str, root: Path) -> Path | None:
    if len(text) < 3 or text[1:3] not in (":\\", ":/") or text[0].upper() != "C":
        return None
    parts = [p for p in text[3:].replace("\\", "/").split("/") if p]
    if any(p in (".", "..") for p in parts):
        return None
    return root.joinpath(*parts) if parts else root


def _windows_argv(argv: list[str], settings: ExecSettings, key: str, env: dict) -> tuple[list[str], dict]:
    """Translate a Windows container command into a host command, or [] when it would not be found."""
    namespace, pod = key.split("/", 1)
    root = settings.pod_root(namespace, pod)
    (root / "Windows" / "Temp").mkdir(parents=True, exist_ok=True)
    tools = settings.windows_tools.get(key, DEFAULT_WINDOWS_TOOLS)
    program = argv[0].replace("/", "\\").rsplit("\\", 1)[-1].lower()
    program_exe = program if program.endswith(".exe") else program + ".exe"
    if program_exe == "powershell.exe" and key in settings.host_process_nodes and _runs_collect(argv):
        node = settings.host_process_nodes[key]
        archive = settings.collect_archives.get(node)
        if archive is None:
            return ["sh", "-c", "echo 'collect is not emulated on this node by the test server' >&2; exit 1"], env
        stdin_file = str(root / "collect-stdin.json")
        with settings.lock:
            settings.collect_stdin[node] = stdin_file
        return ["sh", "-c", 'IFS= read -r line; IFS= read -r script; printf "%s\\n" "$line" > "$3"; '
                'printf "%s\\n" "$script" > "$3.script"; sleep "$1"; cat -- "$2"; exit "$4"',
                "collect", str(archive[1]), archive[0], stdin_file, str(archive[2])], env
    if program_exe == "powershell.exe" and key in settings.host_process_nodes:
        recorded = settings.hns_dumps.get(settings.host_process_nodes[key])
        if recorded is None:
            return ["sh", "-c", "echo 'HNS is not emulated on this node by the test server' >&2; exit 1"], env
        return ["sh", "-c", 'sleep "$1"; cat -- "$2"', "hns", str(recorded[1]), recorded[0]], env
    if program_exe == "tar.exe" and program_exe in tools and not argv[0].startswith(("C:", "c:")):
        mapped = []
        for arg in argv[1:]:
            path = _windows_path(arg, root)
            mapped.append(str(path) if path is not None else arg)
        return ["tar", "--no-same-owner", *mapped], env
    if program_exe == "cmd.exe" and program_exe in tools:
        lowered = [a.lower() for a in argv[1:]]
        if lowered[:4] == ["/c", "rmdir", "/s", "/q"] and len(argv) == 6:
            path = _windows_path(argv[5], root)
            if path is None:
                return ["sh", "-c", "echo 'The system cannot find the path specified.' >&2; exit 2"], env
            return ["rm", "-rf", "--", str(path)], env
        return ["sh", "-c", "echo 'cmd.exe: not emulated by the test server' >&2; exit 1"], env
    path = _windows_path(argv[0], root)
    wine = wine_binary()
    if path is not None and path.is_file() and wine:
        env = dict(env, WINEDEBUG="-all")
        if settings.wine_prefix:
            env["WINEPREFIX"] = settings.wine_prefix
        return [wine, str(path), *argv[1:]], env
    return [], env
