"""The kubelet's /logs/ endpoint behind the API server's node proxy, as a Windows kubelet serves it.

`server.node_logs[node] = NodeLogs(files={...}, providers={...})`: files are the node's C:\\var\\log
(relative paths with '/'; a value may be a callable returning an iterable of byte chunks, for logs too big
to build), providers the Application-log event providers with their formatted text (one event a line,
starting with its `YYYY-MM-DD HH:MM:SS` time).

Answers as kubernetes v1.37.2 does (pkg/kubelet/kubelet.go Run, kubelet_server_journal.go, its _windows.go),
word for word: options that fail to parse are 400; a path together with a query is 406 "path not allowed in
query mode"; validate() failures are 406 (a file and services, more than one file, a file with options, a
file that is not there, more than 4 services, unsafe name characters, untilTime before sinceTime, boot on
Windows, tailLines outside 0..100000, a pattern Go's regexp/syntax rejects), all as field errors joined
like an apimachinery aggregate. A service that is no event provider is a file logger: with any option the
answer is 200 "options present and query resolved to log files for [NAME] try without specifying options",
without options the first of NAME, NAME.log and NAME/NAME.log, else "log not found for NAME".
Go's regexp check is emulated for what Python accepts and Go does not (lookarounds, backreferences).
`handler=False` is enableSystemLogHandler: false (405), `query=False` leaves the plain file server (a
directory listing for /logs/), `served=False` is a kubelet older than the API (404).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from aiohttp import web

_UNSAFE = re.compile(r"[^a-zA-Z\-_.:0-9@]+")  # reServiceNameUnsafeCharacters
_OPTIONS = ("sinceTime", "untilTime", "boot", "tailLines", "pattern")
_EVENT_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")


@dataclass
class NodeLogs:
    files: dict[str, str | Callable[[], Iterable[bytes]]] = field(default_factory=dict)
    providers: dict[str, str] = field(default_factory=dict)
    handler: bool = True
    query: bool = True
    served: bool = True
    requests: list[str] = field(default_factory=list)


def _error(status: int, text: str) -> web.Response:
    """net/http's http.Error: the text and a newline, as text/plain."""
    response = web.Response(status=status, text=text + "\n", content_type="text/plain", charset="utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error alone, else the distinct ones in brackets."""
    distinct = list(dict.fromkeys(errors))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def _invalid(path: str, value: object, detail: str) -> str:
    """field.Invalid(...).Error(): strings quoted (%q), anything else as JSON."""
    shown = json.dumps(value) if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return f"{path}: Invalid value: {shown}: {detail}"


async def handle(request: web.Request, logs: NodeLogs, rest: str) -> web.StreamResponse:
    logs.requests.append(request.path_qs)
    if not logs.served:
        return _error(404, "404 page not found")
    if not logs.handler:
        return _error(405, "logs endpoint is disabled.")
    if not logs.query:
        return await _file_server(request, logs, rest)
    query, errors = _parse(request)
    if errors:
        return _error(400, _aggregate(errors))
    if query is None:  # no query parameters at all: the plain file server
        return await _file_server(request, logs, rest)
    if rest:
        return _error(406, "path not allowed in query mode")
    errors = _validate(query, logs)
    if errors:
        return _error(406, _aggregate(errors))
    if query["files"]:
        return await _file_server(request, logs, query["files"][0].replace("\\", "/"))
    return await _journal(request, query, logs)


def _parse(request: web.Request) -> tuple[dict | None, list[str]]:
    """newNodeLogQuery: parse errors (400), or the query (None when it has nothing at all)."""
    errors: list[str] = []
    queries = request.query.getall("query", [])
    files = [q for q in queries if "/" in q or "\\" in q]
    services = [q for q in queries if q not in files and q.strip()]
    if "query" in request.query and not files and not services:
        errors.append(_invalid("query", queries, "query cannot be empty"))
    options: dict[str, object] = {}
    for name in ("sinceTime", "untilTime"):
        value = request.query.get(name, "")
        if value:
            try:
                options[name] = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                errors.append(_invalid(name, value, "invalid time format"))
    for name in ("boot", "tailLines"):
        value = request.query.get(name, "")
        if value:
            try:
                options[name] = int(value)
            except ValueError:
                errors.append(_invalid(name, value, f'strconv.Atoi: parsing "{value}": invalid syntax'))
    if request.query.get("pattern", ""):
        options["pattern"] = request.query["pattern"]
    if errors:
        return None, errors
    if not files and not services and not options:
        return None, []
    return {"files": files, "services": services, "options": options}, []


def _validate(query: dict, logs: NodeLogs) -> list[str]:
    """(*nodeLogQuery).validate."""
    files, services, options = query["files"], query["services"], query["options"]
    errors = []
    for service in services:
        if len(service) > 256:
            errors.append(_invalid("query", service, "length must be less than 100"))
        elif _UNSAFE.search(service):
            errors.append(_invalid("query", service, "input contains unsupported characters"))
    if len(services) > 4:
        errors.append(f"query: Too many: {len(services)}: must have at most 4 items")
    if not files and not services:
        errors.append("query: Required value: cannot be empty with options")
    elif files and services:
        errors.append(_invalid("query", f"[{' '.join(files)}], [{' '.join(services)}]",
                               "cannot specify a file and service"))
    elif len(files) > 1:
        errors.append(_invalid("query", files, "cannot specify more than one file"))
    elif files and options:
        errors.append(_invalid("query", files, "cannot specify file with options"))
    elif files and files[0].replace("\\", "/").strip("/") not in logs.files:
        parent = files[0].replace("\\", "/").strip("/").rpartition("/")[0]
        reason = "The system cannot find the file specified." if not parent or any(
            f.startswith(parent + "/") for f in logs.files) else "The system cannot find the path specified."
        errors.append(_invalid("query", files, f"statat {files[0]}: {reason}"))
    since, until = options.get("sinceTime"), options.get("untilTime")
    if since is not None and until is not None and since > until:
        errors.append(_invalid("untilTime", until.isoformat().replace("+00:00", "Z"), "must be after `sinceTime`"))
    if "boot" in options:
        errors.append(_invalid("boot", options["boot"], "not supported on Windows"))
        if options["boot"] > 0:
            errors.append(_invalid("boot", options["boot"], "must be less than 1"))
    if "tailLines" in options and not 0 <= options["tailLines"] <= 100000:
        errors.append(_invalid("tailLines", options["tailLines"], "must be between 0 and 100000, inclusive"))
    problem = _go_regexp_problem(str(options.get("pattern", "")))
    if problem:
        errors.append(_invalid("pattern", options["pattern"], problem))
    return errors


def _go_regexp_problem(pattern: str) -> str | None:
    """regexp/syntax.Parse(pattern, syntax.Perl)'s error, for what Python takes and Go does not."""
    look = re.search(r"\(\?(<?[=!])", pattern)
    if look:
        return f"error parsing regexp: invalid or unsupported Perl syntax: `(?{look.group(1)}`"
    backreference = re.search(r"(?<!\\)\\[1-9]", pattern)
    if backreference:
        return f"error parsing regexp: invalid escape sequence: `{backreference.group(0)}`"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"error parsing regexp: {exc.msg}: `{pattern}`"
    return None


async def _journal(request: web.Request, query: dict, logs: NodeLogs) -> web.StreamResponse:
    """journalServer.ServeHTTP on Windows: Get-WinEvent for event providers, the heuristics for the rest."""
    options = query["options"]
    native = [s for s in query["services"] if s in logs.providers]
    file_loggers = [s for s in query["services"] if s not in logs.providers]
    pieces: list[str | Callable[[], Iterable[bytes]]] = []
    for service in native:
        lines = [ln for ln in logs.providers[service].splitlines() if _in_window(ln, options)]
        if "tailLines" in options:  # -MaxEvents runs before the pattern, as on Windows
            lines = lines[-options["tailLines"]:] if options["tailLines"] else []
        if "pattern" in options:
            pattern = re.compile(str(options["pattern"]), re.IGNORECASE)
            lines = [ln for ln in lines if pattern.search(ln)]
        pieces.append("".join(line + "\n" for line in lines))
    if file_loggers and options:
        pieces.append(f"\noptions present and query resolved to log files for [{' '.join(file_loggers)}]\n"
                      "try without specifying options\n")
        return await _send(request, pieces, "text/plain;charset=UTF-8")
    for service in file_loggers:
        path = next((p for p in (service, f"{service}.log", f"{service}/{service}.log") if p in logs.files), None)
        pieces.append(logs.files[path] if path else f"\nlog not found for {service}\n")
    return await _send(request, pieces, "text/plain;charset=UTF-8")


async def _send(request: web.Request, pieces: list[str | Callable[[], Iterable[bytes]]],
                content_type: str) -> web.StreamResponse:
    """The pieces as one body; streamed, chunk by chunk, when one of them is a callable."""
    if all(isinstance(piece, str) for piece in pieces):
        return web.Response(body="".join(pieces).encode(), headers={"Content-Type": content_type})
    response = web.StreamResponse(headers={"Content-Type": content_type})
    await response.prepare(request)
    for piece in pieces:
        for chunk in (piece.encode(),) if isinstance(piece, str) else piece():
            await response.write(chunk)
    await response.write_eof()
    return response


def _in_window(line: str, options: dict) -> bool:
    match = _EVENT_TIME.match(line)
    if match is None:
        return True
    stamp = datetime.fromisoformat(match.group(1) + "+00:00")
    since, until = options.get("sinceTime"), options.get("untilTime")
    return (since is None or stamp >= since) and (until is None or stamp <= until)


async def _file_server(request: web.Request, logs: NodeLogs, path: str) -> web.StreamResponse:
    """http.FileServer(http.Dir(nodeLogDir)): a listing for the directory, a file as it is read."""
    path = path.strip("/")
    if not path:
        names = sorted({f.split("/")[0] + ("/" if "/" in f else "") for f in logs.files})
        listing = "".join(f'<a href="{name}">{name}</a>\n' for name in names)
        return web.Response(text=f"<pre>\n{listing}</pre>\n", content_type="text/html", charset="utf-8")
    content = logs.files.get(path)
    if content is None:
        return _error(404, "404 page not found")
    return await _send(request, [content], "text/plain; charset=utf-8")
