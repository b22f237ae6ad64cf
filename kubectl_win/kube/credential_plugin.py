"""Exec credential plugins (client.authentication.k8s.io) run with a time limit, and killed with their
children when they pass it or when kubectl-win exits.

The kubernetes package's ExecProvider waits for the plugin with no limit (`communicate()`), so one plugin
that hangs (a login prompt nobody answers, a cloud CLI waiting on the network) holds a scan, or a whole
fleet run, for ever, and it leaves the plugin running after the process is told to stop. This keeps that
provider's protocol (it is subclassed, and only `run` is replaced) and adds the limit, a process group per
plugin, and a sweep at exit.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from kubernetes.config.config_exception import ConfigException
from kubernetes.config.exec_provider import ExecProvider
from kubernetes.config.kube_config import FileOrData, KubeConfigLoader, parse_rfc3339

DEFAULT_TIMEOUT = 120.0  # seconds a non-interactive plugin may take when no scan deadline is set

_running: set[subprocess.Popen] = set()
_lock = threading.Lock()


class BoundedExecProvider(ExecProvider):
    """ExecProvider whose plugin runs at most `timeout` seconds (None: no limit, an interactive login)."""

    def __init__(self, exec_config: Any, cwd: str | None, cluster: Any = None, timeout: float | None = None) -> None:
        super().__init__(exec_config, cwd, cluster)
        self.timeout = timeout

    def run(self, previous_response: Any = None) -> dict:
        interactive = hasattr(sys.stdout, "isatty") and sys.stdout.isatty() and self.timeout is None
        info: dict[str, Any] = {"apiVersion": self.api_version, "kind": "ExecCredential",
                                "spec": {"interactive": interactive}}
        if previous_response:
            info["spec"]["response"] = previous_response
        if self.cluster:
            info["spec"]["cluster"] = dict(self.cluster.value)
            for extension in self.cluster.value.get("extensions") or []:
                if extension.get("name") == "client.authentication.k8s.io/exec":
                    info["spec"]["cluster"]["config"] = extension.get("extension")
                    break
        self.env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
        try:
            process = subprocess.Popen(
                self.args, stdout=subprocess.PIPE, stderr=sys.stderr if interactive else subprocess.PIPE,
                stdin=sys.stdin if interactive else subprocess.DEVNULL, cwd=self.cwd, env=self.env, text=True,
                shell=self.shell, **_own_group())
        except OSError as exc:
            raise ConfigException(f"exec: cannot run {self.args[0]}: {exc.strerror or exc}") from None
        with _lock:
            _running.add(process)
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            raise ConfigException(f"exec: {os.path.basename(str(self.args[0]))} did not answer within "
                                  f"{self.timeout:g}s and was stopped") from None
        finally:
            with _lock:
                _running.discard(process)
        if process.returncode != 0:
            message = f"exec: process returned {process.returncode}"
            if stderr and stderr.strip():
                message += f". {stderr.strip()}"
            raise ConfigException(message)
        try:
            data = json.loads(stdout)
        except ValueError as exc:
            raise ConfigException(f"exec: failed to decode process output: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigException("exec: malformed response: not an object")
        for key in ("apiVersion", "kind", "status"):
            if key not in data:
                raise ConfigException(f"exec: malformed response. missing key '{key}'")
        if data["apiVersion"] != self.api_version:
            raise ConfigException(f"exec: plugin api version {data['apiVersion']} does not match {self.api_version}")
        return data["status"]


class BoundedLoader(KubeConfigLoader):
    """The kubernetes loader, with its exec plugin run by BoundedExecProvider; `plugin_timeout()` gives the
    limit when the plugin runs (at load and at each refresh), so a scan's deadline applies to both."""

    def __init__(self, *args: Any, plugin_timeout: Any = None, **kwargs: Any) -> None:
        self._plugin_timeout = plugin_timeout or (lambda: None)
        super().__init__(*args, **kwargs)

    def _load_from_exec_plugin(self) -> bool | None:  # the library's method, with the bounded provider
        import logging

        if "exec" not in self._user:
            return None
        try:
            base_path = self._get_base_path(self._cluster.path)
            status = BoundedExecProvider(self._user["exec"], base_path, self._cluster,
                                         self._plugin_timeout()).run()
            if "token" in status:
                self.token = f"Bearer {status['token']}"
            elif "clientCertificateData" in status:
                if "clientKeyData" not in status:
                    logging.error("exec: missing clientKeyData field in plugin output")
                    return None
                for attribute, key in (("cert_file", "clientCertificateData"), ("key_file", "clientKeyData")):
                    setattr(self, attribute, FileOrData(status, None, data_key_name=key, file_base_path=base_path,
                                                        base64_file_content=False,
                                                        temp_file_path=self._temp_file_path).as_file())
            else:
                logging.error("exec: missing token or clientCertificateData field in plugin output")
                return None
            if "expirationTimestamp" in status:
                self.expiry = parse_rfc3339(status["expirationTimestamp"])
            return True
        except Exception as exc:  # noqa: BLE001 - the library logs and carries on; config.py turns it into one line
            logging.error(str(exc))
            return None


def _own_group() -> dict[str, Any]:
    """A process group of the plugin's own, so that its children (a CLI it wraps) go with it."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(process: subprocess.Popen) -> None:
    """End the plugin and everything it started; a process already gone is fine."""
    try:
        if os.name == "nt":
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(process.pid)], capture_output=True, check=False,
                           timeout=10)
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        process.kill()
        process.wait(timeout=5)
    except (OSError, subprocess.SubprocessError):
        pass


def kill_running() -> None:
    """Every plugin still running (the process is stopping): killed with its children."""
    with _lock:
        running = list(_running)
        _running.clear()
    for process in running:
        kill_tree(process)


atexit.register(kill_running)
