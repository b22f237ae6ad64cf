"""Relays: programs run inside the container that connect to HOST:PORT and pump stdin/stdout.

A relay turns a validated (host, port) into an argv. Nothing else the user typed reaches it:
`host` comes from ports.validate_remote_host and `port` is an int.
"""

from __future__ import annotations

from dataclasses import dataclass

# Exit codes shared by the relays we write (the native relay, the python and PowerShell scripts).
EXIT_MESSAGES = {
    2: "the relay rejected its arguments",
    3: "the host name did not resolve inside the pod",
    4: "connection refused inside the pod",
    5: "could not connect inside the pod",
    6: "the connection inside the pod failed",
    7: "the relay could not start networking",
    8: "the relay rejected a malformed frame",
}


@dataclass(frozen=True)
class Relay:
    """How to run one relay: `argv_template` holds `{host}` and `{port}` as whole arguments only."""

    name: str
    argv_template: tuple[str, ...]
    half_close: bool = True  # does the relay pass stdin EOF on as a TCP FIN?
    own_exit_codes: bool = False  # does it use EXIT_MESSAGES?
    host_style: str = "plain"  # "socat" wraps IPv6 literals in brackets
    # The multiplexing relay's argv (fixed: targets travel in frames), or None when this relay
    # cannot multiplex and the forwarder falls back to one exec per connection.
    mux_argv: tuple[str, ...] | None = None

    def mux_command(self) -> list[str] | None:
        return list(self.mux_argv) if self.mux_argv is not None else None

    def command(self, host: str, port: int) -> list[str]:
        if not isinstance(port, int) or not 1 <= port <= 65535:
            raise ValueError(f"invalid port {port!r}")
        host_text = f"[{host}]" if self.host_style == "socat" and ":" in host else host
        return [part.replace("{host}", host_text).replace("{port}", str(port))
                for part in self.argv_template]

    def describe_failure(self, exit_code: int | None, stderr: bytes) -> str:
        text = stderr.decode("utf-8", "replace").strip()
        last = text.splitlines()[-1].strip() if text else ""
        lowered = text.lower()
        if "connection refused" in lowered or "refused" in lowered:
            return "connection refused inside the pod"
        if self.own_exit_codes and exit_code in EXIT_MESSAGES:
            return EXIT_MESSAGES[exit_code]
        if last:
            return f"{self.name} relay failed: {last[:200]}"
        return f"{self.name} relay exited with code {exit_code}"
