"""What a dump written for sharing keeps: the fields doctor's checks (and `hns --cluster-from-dump`) read,
and nothing else a cluster would rather not hand out.

`reduce.py` already cuts objects to the parts doctor reads; this pass removes what is left that the checks
never look at but that can carry secrets or internal details:

- container `env` keeps the variable names (values and `valueFrom` go), `envFrom` goes;
- container `command` and `args`, probes, and lifecycle hooks go (the checks read `lifecycle.stopSignal`
  only, which stays);
- annotations keep only those a check reads: `kubectl-win.io/ignore` and the keys the field rules test
  (knowledge/field_rules.yaml, `key-prefix:` triggers on metadata.annotations);
- an inline `gmsaCredentialSpec` (domain SIDs and account names) becomes a placeholder of the same
  emptiness and size class, which is all the gMSA rule reads;
- node `nodeInfo` keeps the versions and OS fields (machine and boot ids go); node addresses keep the IP
  addresses (hns matches them), not DNS names;
- event and container-status texts are kept (the symptom checks read them) with credentials redacted.

`--save-dump --no-redact` writes the reduced objects without this pass, for the rare case that needs them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kubectl_win.addresses import is_ip
from kubectl_win.kinds import POD_SPEC_PATHS
from kubectl_win.manifests.objects import CONTAINER_LISTS
from kubectl_win.policy import IGNORE_ANNOTATION
from kubectl_win.redact import redact

NOTE = ("Written by kubectl-win doctor --save-dump for sharing: objects keep only the fields doctor's checks read. "
        "Removed: environment variable values and envFrom (names kept), container command and args, probes, "
        "lifecycle hooks (stopSignal kept), annotations no check reads, inline gmsaCredentialSpec content, "
        "node machine and boot ids, node DNS names; credentials in event and container-status texts are "
        "redacted. Use --save-dump --no-redact to keep them.")
NOTE_UNREDACTED = ("Written by kubectl-win doctor --save-dump --no-redact: environment values, commands, "
                   "arguments, annotations and inline gMSA credential specs are kept as the cluster returned "
                   "them. Do not share this file without reading it first.")
REMOVED_MARK = "<removed by kubectl-win>"
_GMSA_MAX = 64 * 1024  # the gMSA rule tells empty, normal and oversized specs apart
_NODE_INFO_KEPT = ("architecture", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
                   "kubeletVersion", "operatingSystem", "osImage")
_CONTAINER_DROPPED = ("command", "args", "envFrom", "livenessProbe", "readinessProbe", "startupProbe")


@cache
def read_annotation_prefixes() -> tuple[str, ...]:
    """The annotation keys (prefixes) a check reads: the ignore annotation and the field rules' key tests."""
    from kubectl_win.explain.rules import all_rules

    prefixes = [IGNORE_ANNOTATION]
    for rule in all_rules():
        check = rule.check
        if check is None or not check.trigger.startswith("key-prefix:"):
            continue
        if any(loc.scope == "metadata" and tuple(loc.path) == ("annotations",) for loc in check.at):
            prefixes.append(check.trigger.partition(":")[2])
    return tuple(prefixes)


def for_sharing(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a reduced object (see reduce.py) without what the checks do not read."""
    kind = obj.get("kind")
    out = dict(obj)
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = _metadata(out["metadata"])
    if kind == "Node":
        out["status"] = _node_status(out.get("status"))
    elif kind == "Event":
        for key in ("message", "note"):
            if isinstance(out.get(key), str):
                out[key] = redact(out[key])
    path = POD_SPEC_PATHS.get(str(kind))
    if path is not None:
        out = _with_pod_spec(out, path)
        if kind == "Pod" and isinstance(out.get("status"), dict):
            out["status"] = _pod_status(out["status"])
    return out


def _metadata(meta: dict[str, Any]) -> dict[str, Any]:
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        return meta
    prefixes = read_annotation_prefixes()
    kept = {k: v for k, v in annotations.items() if isinstance(k, str) and k.startswith(prefixes)}
    out = {k: v for k, v in meta.items() if k != "annotations"}
    if kept:
        out["annotations"] = kept
    return out


def _with_pod_spec(obj: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    """Copy along the path to the pod spec, cleaning the template metadata on the way and the spec at the end."""
    if not path:
        return _pod_spec(obj) if isinstance(obj, dict) else obj
    step = path[0]
    if not isinstance(obj, dict) or not isinstance(obj.get(step), dict):
        return obj
    out = dict(obj)
    child = _with_pod_spec(out[step], path[1:])
    if isinstance(child, dict) and isinstance(child.get("metadata"), dict):  # a template's metadata
        child = {**child, "metadata": _metadata(child["metadata"])}
    out[step] = child
    return out


def _pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    if isinstance(out.get("securityContext"), dict):
        out["securityContext"] = _security_context(out["securityContext"])
    for list_name in CONTAINER_LISTS:
        containers = out.get(list_name)
        if isinstance(containers, list):
            out[list_name] = [_container(c) if isinstance(c, dict) else c for c in containers]
    return out


def _container(container: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in container.items() if k not in _CONTAINER_DROPPED}
    env = out.get("env")
    if isinstance(env, list):
        out["env"] = [{"name": e.get("name")} if isinstance(e, dict) else REMOVED_MARK for e in env]
    lifecycle = out.get("lifecycle")
    if isinstance(lifecycle, dict):
        kept = {k: v for k, v in lifecycle.items() if k == "stopSignal"}
        if kept:
            out["lifecycle"] = kept
        else:
            del out["lifecycle"]
    if isinstance(out.get("securityContext"), dict):
        out["securityContext"] = _security_context(out["securityContext"])
    return out


def _security_context(context: dict[str, Any]) -> dict[str, Any]:
    options = context.get("windowsOptions")
    if not isinstance(options, dict) or not options.get("gmsaCredentialSpec"):
        return context
    spec = options["gmsaCredentialSpec"]
    size = len(str(spec).encode("utf-8"))
    placeholder = REMOVED_MARK if size <= _GMSA_MAX else REMOVED_MARK.ljust(_GMSA_MAX + 1, ".")
    return {**context, "windowsOptions": {**options, "gmsaCredentialSpec": placeholder}}


def _pod_status(status: dict[str, Any]) -> dict[str, Any]:
    out = dict(status)
    for key in ("initContainerStatuses", "containerStatuses"):
        if isinstance(out.get(key), list):
            out[key] = [_redact_texts(item) for item in out[key]]
    return out


def _redact_texts(value: Any) -> Any:
    """Every `message` under a container status (waiting, terminated, lastState) with credentials redacted."""
    if isinstance(value, dict):
        return {k: redact(v) if k == "message" and isinstance(v, str) else _redact_texts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_texts(v) for v in value]
    return value


def _node_status(status: Any) -> Any:
    if not isinstance(status, dict):
        return status
    out = dict(status)
    if isinstance(out.get("nodeInfo"), dict):
        out["nodeInfo"] = {k: v for k, v in out["nodeInfo"].items() if k in _NODE_INFO_KEPT}
    if isinstance(out.get("addresses"), list):
        out["addresses"] = [a for a in out["addresses"] if isinstance(a, dict) and is_ip(a.get("address"))]
    for key in ("conditions",):
        if isinstance(out.get(key), list):
            out[key] = [{**c, "message": redact(c["message"])} if isinstance(c, dict)
                        and isinstance(c.get("message"), str) else c for c in out[key]]
    return out
