"""Log lines from a bundle, made readable for the symptom matcher, with the pod a line names.

Three shapes reach us: the kubelet's and kube-proxy's klog lines (`E1201 02:10:31.511870 4424 file.go:32]
"message" err="... \\"quoted\\" ..." pod="ns/name"`, values Go-quoted), containerd's logfmt
(`time="..." level=error msg="..." error="..."`, the pod inside `&PodSandboxMetadata{Name:..,Namespace:..}`),
and event-log text as the collection script writes it (`<time> <level> <provider> <id>: <message>`).
Quoted values are unescaped so a pattern sees the text the component meant; anything else is read as is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_KLOG = re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]\s]+\] ?(.*)$")
_LOGFMT = re.compile(r'^time="[^"]*" level=\w+ ')
_PAIR = re.compile(r'([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|[^\s"]+)')
_LEADING_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"')
_SANDBOX = re.compile(r"PodSandboxMetadata\{Name:([^,}]+),(?:[^}]*?)Namespace:([^,}]+)")
_POD_LIST = re.compile(r'"([a-z0-9][a-z0-9.-]*)/([a-z0-9][a-z0-9.-]*)"')


@dataclass(frozen=True)
class LogLine:
    text: str  # what the matcher reads
    pod: tuple[str, str] | None = None  # (namespace, name) the line is about


def _unquote(value: str) -> str:
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        try:
            return str(json.loads(value))
        except ValueError:
            return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def parse(line: str) -> LogLine:
    klog = _KLOG.match(line)
    if klog:
        return _structured(klog.group(1))
    if _LOGFMT.match(line):
        pairs = dict((k, _unquote(v)) for k, v in _PAIR.findall(line))
        text = ": ".join(p for p in (pairs.get("msg", ""), pairs.get("error") or pairs.get("err") or "") if p)
        return LogLine(text or line, _sandbox_pod(text) or _pod_of(pairs))
    return LogLine(line, _sandbox_pod(line))


def _structured(body: str) -> LogLine:
    """klog's structured form ("msg" k=v ...) or its printf form (free text)."""
    lead = _LEADING_QUOTED.match(body)
    if not lead:
        return LogLine(body, _sandbox_pod(body))
    message = _unquote(lead.group(0))
    rest = body[lead.end():]
    pairs = dict((k, _unquote(v)) for k, v in _PAIR.findall(rest))
    values = [f"{k}={v}" for k, v in pairs.items() if k not in ("pod", "pods", "podUID", "namespace")]
    text = " ".join([message, *values])
    return LogLine(text, _pod_of(pairs) or _sandbox_pod(text))


def _pod_of(pairs: dict[str, str]) -> tuple[str, str] | None:
    pod = pairs.get("pod") or pairs.get("podName") or ""
    if "/" in pod:
        namespace, name = pod.split("/", 1)
        return (namespace, name) if namespace and name else None
    if pod and pairs.get("namespace"):
        return pairs["namespace"], pod
    pods = pairs.get("pods", "")
    found = _POD_LIST.findall(pods)
    return found[0] if len(found) == 1 else None


def _sandbox_pod(text: str) -> tuple[str, str] | None:
    match = _SANDBOX.search(text)
    return (match.group(2).strip(), match.group(1).strip()) if match else None
