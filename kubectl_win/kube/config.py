"""kubeconfig handling like kubectl's: --kubeconfig, KUBECONFIG with several files, --context,
--cluster, --user, --namespace, and in-cluster config when there is no kubeconfig at all.

Authentication itself (tokens, token files, client certificates, exec credential plugins and
their refresh) is delegated to the kubernetes package's loader, imported only here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectl_win.kube.errors import CredentialPluginError, KubeconfigError, NoKubeconfig
from kubectl_win.redact import redact as _redact
from kubectl_win.redact import remember

if TYPE_CHECKING:
    from kubectl_win.kube.deadline import Deadline

_OVERRIDE_CONTEXT = "kubectl-win-override"


@dataclass
class KubeFlags:
    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str | None = None
    request_timeout: float = 30.0
    deadline: Deadline | None = None  # a fleet or serve scan's --scan-timeout: bounds every read and plugin

    def plugin_timeout(self) -> float | None:
        """How long an exec credential plugin may run now: what is left of the deadline; without one, no limit
        at a terminal (an interactive login) and a default otherwise."""
        import sys

        from kubectl_win.kube.credential_plugin import DEFAULT_TIMEOUT

        if self.deadline is not None:
            return max(0.1, self.deadline.remaining())
        at_terminal = all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout))
        return None if at_terminal else DEFAULT_TIMEOUT



@dataclass
class ClientConfig:
    """What the HTTP layer needs, read out of a kubernetes.client.Configuration."""

    server: str
    namespace: str
    context: str | None
    configuration: Any  # kubernetes.client.Configuration: holds the credentials and refresh hook
    reload: Any = None  # callable forcing a credential reload (exec plugins), or None
    source: str = ""  # where the config came from, for messages
    extra: dict = field(default_factory=dict)

    @property
    def verify_ssl(self) -> bool:
        return bool(getattr(self.configuration, "verify_ssl", True))

    @property
    def ca_file(self) -> str | None:
        return getattr(self.configuration, "ssl_ca_cert", None) or None

    @property
    def cert_file(self) -> str | None:
        return getattr(self.configuration, "cert_file", None) or None

    @property
    def key_file(self) -> str | None:
        return getattr(self.configuration, "key_file", None) or None

    @property
    def tls_server_name(self) -> str | None:
        return getattr(self.configuration, "tls_server_name", None) or None

    @property
    def proxy(self) -> str | None:
        """The kubeconfig's proxy-url (environment proxies are resolved by the client, per host)."""
        return self.extra.get("proxy-url") or None

    def authorization(self) -> str | None:
        """The Authorization header value, refreshed first when the credential has expired."""
        cfg = self.configuration
        hook = getattr(cfg, "refresh_api_key_hook", None)
        if hook is not None:
            hook(cfg)
        for key in ("BearerToken", "authorization"):  # the key was renamed in kubernetes 32
            value = cfg.api_key.get(key)
            if value:
                prefix = cfg.api_key_prefix.get(key)
                value = f"{prefix} {value}" if prefix else value
                scheme, _, rest = value.strip().partition(" ")
                # client-go trims a token file's whitespace (`echo $T > file` adds a newline, CRLF on
                # Windows); the loader here keeps it, which would make the header invalid.
                rest = rest.strip()
                remember(rest)
                return f"Bearer {rest}" if scheme.lower() == "bearer" else f"{scheme} {rest}".strip()
        return None


def kubeconfig_paths(flags: KubeFlags) -> list[Path]:
    """--kubeconfig, else every file in $KUBECONFIG (os.pathsep-separated), else ~/.kube/config."""
    from kubectl_win.env import kubeconfig_candidates

    paths = kubeconfig_candidates(flags.kubeconfig)
    if flags.kubeconfig and not paths[0].exists():
        raise KubeconfigError(f"kubeconfig {paths[0]} does not exist")
    return [path for path in paths if path.exists()]


MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024


def _read_yaml(path: Path) -> dict:
    import yaml

    from kubectl_win.manifests.inputs import Problem, TooLarge, decode_text, read_capped
    from kubectl_win.manifests.yamlsafe import yaml_load

    try:
        text = decode_text(read_capped(str(path), MAX_KUBECONFIG_BYTES), str(path))
        if isinstance(text, Problem):
            raise KubeconfigError(f"kubeconfig {path}: {text.message}")
        data = yaml_load(text)
    except TooLarge as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc}") from None
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc.strerror}") from None
    except ValueError as exc:  # nesting or an alias bomb
        raise KubeconfigError(f"kubeconfig {path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise KubeconfigError(f"kubeconfig {path} is not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KubeconfigError(f"kubeconfig {path} is not a mapping")
    return data


def merge_kubeconfigs(paths: list[Path]) -> Any:
    """Merge like kubectl: the first file to define a name (or current-context) wins.

    Entries are wrapped in the loader's ConfigNode with their file, so relative certificate
    and token paths resolve against the file that named them.
    """
    from kubernetes.config.kube_config import ConfigNode

    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": []}
    seen: dict[str, set[str]] = {k: set() for k in merged}
    for path in paths:
        data = _read_yaml(path)
        for section in ("clusters", "contexts", "users"):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise KubeconfigError(f"kubeconfig {path}: {section} must be a list")
            for entry in entries:
                if not isinstance(entry, dict) or "name" not in entry:
                    raise KubeconfigError(f"kubeconfig {path}: every entry in {section} needs a name")
                if entry["name"] in seen[section]:
                    continue
                seen[section].add(entry["name"])
                if section == "users":
                    entry = _with_token_file_read(entry, path)
                merged[section].append(ConfigNode(f"{path}/{section}[{entry['name']}]", entry, str(path)))
        if data.get("current-context") and "current-context" not in merged:
            merged["current-context"] = data["current-context"]
    return ConfigNode(str(paths[0]), merged, str(paths[0]))


def _with_token_file_read(entry: dict, kubeconfig: Path) -> dict:
    """A user's tokenFile read as kubectl reads it: surrounding white space (a newline, `echo`'s CRLF)
    dropped, and in any encoding a file of ours may be in (PowerShell 5.1 writes UTF-16). The
    kubernetes loader would send the raw text, line break included, which no server accepts."""
    user = entry.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("tokenFile"), str) or user.get("token"):
        return entry
    from kubectl_win.manifests.inputs import Problem, decode_text

    path = Path(user["tokenFile"]).expanduser()
    if not path.is_absolute():
        path = kubeconfig.parent / path
    try:
        text = decode_text(path.read_bytes(), str(path))
    except OSError:
        return entry  # the loader reports it
    if isinstance(text, Problem):
        raise KubeconfigError(f'tokenFile of user "{entry.get("name")}": {text}')
    user = {key: value for key, value in user.items() if key != "tokenFile"}
    return {**entry, "user": {**user, "token": text.strip()}}


def _empty(merged: Any, flags: KubeFlags) -> bool:
    """Nothing to connect with and nothing asked for: clientcmd's empty config, which falls to in-cluster."""
    return not (flags.kubeconfig or flags.context or flags.cluster or merged.value.get("current-context")
                or merged.value["clusters"] or merged.value["contexts"])


def context_namespace(flags: KubeFlags) -> str:
    """The namespace the context names (doctor workloads without -n), "default" when it names none."""
    return load(flags).namespace or "default"


def context_names(flags: KubeFlags) -> list[str]:
    """Every context of the merged kubeconfig, in kubeconfig order (the first file naming one places it)."""
    paths = kubeconfig_paths(flags)
    if not paths:
        raise NoKubeconfig("no kubeconfig found (use --kubeconfig, set KUBECONFIG, or create ~/.kube/config)")
    return _names(merge_kubeconfigs(paths), "contexts")


def context_server(flags: KubeFlags) -> str | None:
    """The server URL the context names, read from the kubeconfig without loading credentials (an exec
    plugin is not run for it); None when the kubeconfig does not say."""
    paths = kubeconfig_paths(flags)
    if not paths:
        return None
    merged = merge_kubeconfigs(paths)
    name = flags.context or merged.value.get("current-context")
    if name not in _names(merged, "contexts"):
        return None
    cluster = flags.cluster or (merged["contexts"].get_with_name(name).value.get("context") or {}).get("cluster")
    if cluster not in _names(merged, "clusters"):
        return None
    server = (merged["clusters"].get_with_name(cluster).value.get("cluster") or {}).get("server")
    return str(server).rstrip("/") if server else None


def _names(node: Any, section: str) -> list[str]:
    return [entry.value["name"] if hasattr(entry, "value") else entry["name"] for entry in node.value[section]]


def load(flags: KubeFlags) -> ClientConfig:
    """clientcmd's order: --kubeconfig (which must exist), else $KUBECONFIG's files, else ~/.kube/config,
    else, when none of them exists or they hold nothing (no context, no cluster), the in-cluster config."""
    from kubectl_win.kube import incluster

    paths = kubeconfig_paths(flags)
    merged = merge_kubeconfigs(paths) if paths else None
    if merged is None or _empty(merged, flags):
        if incluster.possible():
            return load_incluster(flags)
        if merged is None:
            raise NoKubeconfig("no kubeconfig found (use --kubeconfig, set KUBECONFIG, or create ~/.kube/config) "
                               "and not running inside a cluster")
    where = ", ".join(str(p) for p in paths)
    context_name = flags.context or merged.value.get("current-context")
    contexts = _names(merged, "contexts")
    if not context_name:
        if not (flags.cluster and flags.user is not None):
            raise KubeconfigError(f"no current context in {where}; pick one with --context "
                                  f"(available: {', '.join(contexts) or 'none'})")
        context: dict[str, Any] = {}
    elif context_name not in contexts:
        raise KubeconfigError(f'context "{context_name}" not found in {where} '
                              f"(available: {', '.join(contexts) or 'none'})")
    else:
        context = dict(merged["contexts"].get_with_name(context_name).value.get("context") or {})
    for flag, section, key in ((flags.cluster, "clusters", "cluster"), (flags.user, "users", "user")):
        if flag:
            if flag not in _names(merged, section):
                raise KubeconfigError(f'{key} "{flag}" not found in {where}')
            context[key] = flag
    if not context.get("cluster"):
        raise KubeconfigError(f'context "{context_name}" names no cluster')
    if context.get("cluster") not in _names(merged, "clusters"):
        raise KubeconfigError(f'cluster "{context["cluster"]}" of context "{context_name}" not found in {where}')
    if flags.cluster or flags.user or not context_name:
        from kubernetes.config.kube_config import ConfigNode

        merged.value["contexts"].append(ConfigNode("override", {"name": _OVERRIDE_CONTEXT, "context": context},
                                                   str(paths[0])))
        active = _OVERRIDE_CONTEXT
    else:
        active = context_name
    return _client_config(merged, active, context, flags, where, context_name)


def _client_config(merged: Any, active: str, context: dict, flags: KubeFlags, where: str,
                   context_name: str | None) -> ClientConfig:
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException

    from kubectl_win.kube.credential_plugin import BoundedLoader

    cfg = Configuration()
    try:
        loader = BoundedLoader(config_dict=merged, active_context=active, config_base_path=None,
                               plugin_timeout=flags.plugin_timeout)
        with _captured_loader_errors() as loader_errors:
            loader.load_and_set(cfg)
    except ConfigException as exc:
        raise KubeconfigError(f"invalid kubeconfig {where}: {_redact(str(exc))}") from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise KubeconfigError(f"invalid kubeconfig {where}: {type(exc).__name__}: {_redact(str(exc))}") from None
    if not cfg.host or cfg.host == "http://localhost":
        server = (merged["clusters"].get_with_name(context["cluster"]).value.get("cluster") or {}).get("server")
        if not server:
            raise KubeconfigError(f'cluster "{context["cluster"]}" in {where} has no server')
    user = loader._user  # the loader's view of the user entry (None when the context names none)
    if user is not None:
        for key in ("token", "password"):
            remember(user.safe_get(key) if hasattr(user, "safe_get") else None)
    for value in cfg.api_key.values():
        remember(str(value).partition(" ")[2] or str(value))
    reload = None
    if user is not None and "exec" in user and loader_errors and not _has_credentials(cfg):
        # The loader logs a failed credential plugin and carries on without credentials; say why.
        raise CredentialPluginError(f'the credential plugin of user "{context.get("user")}" failed: '
                                    f"{_redact(loader_errors[0])}")
    if user is not None and "exec" in user:
        def reload() -> None:
            loader._load_authentication()
            loader._set_config(cfg)
    namespace = flags.namespace or context.get("namespace") or "default"
    cluster_entry = merged["clusters"].get_with_name(context["cluster"]).value.get("cluster") or {}
    extra = {"proxy-url": cluster_entry["proxy-url"]} if cluster_entry.get("proxy-url") else {}
    return ClientConfig(cfg.host.rstrip("/"), namespace, context_name, cfg, reload, where, extra)


def _has_credentials(cfg: Any) -> bool:
    return bool(cfg.api_key.get("BearerToken") or cfg.api_key.get("authorization") or cfg.cert_file)


@contextlib.contextmanager
def _captured_loader_errors() -> Iterator[list[str]]:
    """Collect what the kubernetes loader logs (it reports exec plugin failures only by logging),
    instead of letting Python's last-resort handler print it."""
    messages: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(" ".join(record.getMessage().split()))

    handler = _Collect(level=logging.ERROR)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield messages
    finally:
        root.removeHandler(handler)


def load_incluster(flags: KubeFlags) -> ClientConfig:
    """The service account's token, CA and namespace (kubectl_win.kube.incluster)."""
    from kubectl_win.kube.incluster import service_account

    configuration, namespace, reload = service_account(flags.namespace)
    return ClientConfig(configuration.host, namespace, None, configuration, reload, "in-cluster config")
