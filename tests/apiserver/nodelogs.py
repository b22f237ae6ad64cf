"""The kubelet's /logs/ endpoint behind the API server's node proxy, as a Windows kubelet serves it.

`server.node_logs[node] = NodeLogs(files={...}, providers={...})`: files are the node's C:\\var\\log
(relative paths with '/'), providers the Application-log event providers with their formatted text.
Query mode validates like kubelet_server_journal.go (at most 4 services, name characters, one file
and no options with it, tailLines 0..100000, boot rejected on Windows) and answers its messages;
`handler=False` is enableSystemLogHandler: false (405), `query=False` leaves the plain file server
(a directory listing for /logs/), `served=False` is a kubelet older than the API (404).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from aiohttp import web

_NAME = re.compile(r"^[a-zA-Z0-9_@-]+$")


@dataclass
class NodeLogs:
    files: dict[str, str] = field(default_factory=dict)
    providers: dict[str, str] = field(default_factory=dict)
    handler: bool = True
    query: bool = True
    served: bool = True
    requests: list[str] = field(default_factory=list)


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, content_type="text/plain")


def handle(request: web.Request, logs: NodeLogs, rest: str) -> web.Response:
    logs.requests.append(request.path_qs)
    if not logs.served:
        return _text(404, "404 page not found\n")
    if not logs.handler:
        return _text(405, "logs endpoint is disabled.\n")
    queries = request.query.getall("query", [])
    if rest:
        if queries and logs.query:
            return _text(406, "path not allowed in query mode\n")
        return _file(logs, rest)
    if not logs.query or not queries:
        listing = "".join(f'<a href="{name}">{name}</a>\n' for name in sorted({f.split("/")[0] for f in logs.files}))
        return web.Response(text=f"<pre>\n{listing}</pre>\n", content_type="text/html")
    return _query(request, logs, queries)


def _file(logs: NodeLogs, path: str) -> web.Response:
    content = logs.files.get(path.strip("/"))
    return _text(200, content) if content is not None else _text(404, "404 page not found\n")


def _query(request: web.Request, logs: NodeLogs, queries: list[str]) -> web.Response:
    errors = []
    files = [q for q in queries if "/" in q or "\\" in q]
    services = [q for q in queries if q not in files]
    options = {k: request.query[k] for k in ("sinceTime", "untilTime", "tailLines", "pattern", "boot")
               if k in request.query}
    if files and services:
        errors.append("query: Invalid value: cannot specify a file and services")
    if len(files) > 1:
        errors.append("query: Invalid value: cannot specify more than one file")
    if files and options:
        errors.append("query: Invalid value: cannot specify a file with options")
    if len(services) > 4:
        errors.append("query: Too many: at most 4 services")
    for service in services:
        if len(service) > 256 or not _NAME.match(service):
            errors.append(f'query: Invalid value: "{service}": input contains unsupported characters')
    if "boot" in options:
        errors.append("boot: Invalid value: boot is not supported on Windows")
    tail = None
    if "tailLines" in options:
        try:
            tail = int(options["tailLines"])
        except ValueError:
            return _text(400, f'parse error: tailLines: "{options["tailLines"]}" is not an integer\n')
        if not 0 <= tail <= 100000:
            errors.append(f"tailLines: Invalid value: {tail}: must be between 0 and 100000")
    since = None
    if "sinceTime" in options:
        try:
            since = datetime.fromisoformat(options["sinceTime"].replace("Z", "+00:00"))
        except ValueError:
            return _text(400, f'parse error: sinceTime: "{options["sinceTime"]}" is not RFC3339\n')
    pattern = None
    if "pattern" in options:
        try:
            pattern = re.compile(options["pattern"], re.IGNORECASE)
        except re.error:
            errors.append(f'pattern: Invalid value: "{options["pattern"]}": invalid regular expression')
    if errors:
        return _text(406, "[" + ", ".join(errors) + "]\n")
    if files:
        return _file(logs, files[0].replace("\\", "/"))
    out = []
    file_loggers = [s for s in services if s not in logs.providers]
    for service in services:
        if service in logs.providers:
            lines = logs.providers[service].splitlines()
            if since is not None:
                lines = [ln for ln in lines if not ln[:4].isdigit() or ln[:10] >= since.strftime("%Y-%m-%d")]
            if tail is not None:
                lines = lines[-tail:] if tail else []
            if pattern is not None:  # -MaxEvents runs before the pattern, as on Windows
                lines = [ln for ln in lines if pattern.search(ln)]
            out.extend(lines)
    if file_loggers and options:
        out.append(f"\noptions present and query resolved to log files for {file_loggers}\n"
                   "try without specifying options")
        return _text(200, "\n".join(out) + "\n")
    for service in file_loggers:
        content = next((logs.files[p] for p in (service, f"{service}.log", f"{service}/{service}.log")
                        if p in logs.files), None)
        out.append(content.rstrip("\n") if content is not None else f"log not found for {service}")
    return _text(200, "\n".join(out) + "\n")
