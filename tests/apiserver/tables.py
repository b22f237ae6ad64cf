"""Server-side printing: answer `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` with a Table.

Columns follow kube-apiserver's printers for the types kubectl users look at most; any other
resource gets NAME and AGE.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from tests.apiserver.resources import Resource

Column = tuple[str, str, Callable[[dict], object]]


def human_age(timestamp: str | None, now: dt.datetime | None = None) -> str:
    if not timestamp:
        return "<unknown>"
    try:
        then = dt.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "<invalid>"
    seconds = int(((now or dt.datetime.now(dt.UTC)) - then).total_seconds())
    if seconds < 0:
        return "<invalid>"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y"


def _name(o: dict) -> str:
    return o["metadata"]["name"]


def _age(o: dict) -> str:
    return human_age(o["metadata"].get("creationTimestamp"))


def _node_status(o: dict) -> str:
    ready = next((c for c in (o.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    status = "Ready" if ready and ready.get("status") == "True" else "NotReady"
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    return status


def _node_roles(o: dict) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix):] for k in (o["metadata"].get("labels") or {}) if k.startswith(prefix))
    return ",".join(roles) or "<none>"


def _pod_ready(o: dict) -> str:
    statuses = (o.get("status") or {}).get("containerStatuses") or []
    total = len((o.get("spec") or {}).get("containers") or [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_status(o: dict) -> str:
    status = o.get("status") or {}
    if o["metadata"].get("deletionTimestamp"):
        return "Terminating"
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            return waiting["reason"]
    return status.get("reason") or status.get("phase") or "Unknown"


def _pod_restarts(o: dict) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (o.get("status") or {}).get("containerStatuses") or [])


def _deploy_ready(o: dict) -> str:
    return f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 1)}"


COLUMNS: dict[str, list[Column]] = {
    "nodes": [("Name", "string", _name), ("Status", "string", _node_status), ("Roles", "string", _node_roles),
              ("Age", "string", _age),
              ("Version", "string", lambda o: ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion"))],
    "pods": [("Name", "string", _name), ("Ready", "string", _pod_ready), ("Status", "string", _pod_status),
             ("Restarts", "string", _pod_restarts), ("Age", "string", _age)],
    "deployments": [("Name", "string", _name), ("Ready", "string", _deploy_ready),
                    ("Up-to-date", "integer", lambda o: (o.get("status") or {}).get("updatedReplicas", 0)),
                    ("Available", "integer", lambda o: (o.get("status") or {}).get("availableReplicas", 0)),
                    ("Age", "string", _age)],
    "namespaces": [("Name", "string", _name),
                   ("Status", "string", lambda o: (o.get("status") or {}).get("phase", "Active")),
                   ("Age", "string", _age)],
}
DEFAULT_COLUMNS: list[Column] = [("Name", "string", _name), ("Age", "string", _age)]


def wants_table(accept: str) -> bool:
    return any("as=Table" in part and "g=meta.k8s.io" in part for part in accept.split(","))


def table(resource: Resource, objects: list[dict], resource_version: str, continue_token: str = "",
          include_object: str = "Metadata") -> dict:
    columns = COLUMNS.get(resource.plural, DEFAULT_COLUMNS)
    definitions = [{"name": title, "type": kind, "format": "name" if title == "Name" else "",
                    "description": title, "priority": 0} for title, kind, _ in columns]
    rows = []
    for o in objects:
        row: dict = {"cells": [fn(o) for _, _, fn in columns]}
        if include_object == "Object":
            row["object"] = o
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o["metadata"]}
        rows.append(row)
    meta: dict = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": definitions, "rows": rows}
