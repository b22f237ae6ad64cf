"""`kubectl win port-forward`: forward local ports to a pod through a relay run with exec."""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Choice, Connection, Seconds, kube_options, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.portforward.forwarder import ForwardOptions

DESCRIPTION = """\
Forward one or more local ports to a pod, like kubectl port-forward, but through pods/exec: a
small relay in the container connects to --remote-host:PORT there. With --mux=auto (the default)
one exec carries every connection and UDP flow; --mux=off runs one exec per connection.

This reaches servers bound to the pod's loopback, works without wincat in the pause image, on
Nano Server (an uploaded native relay) and on older runtimes. Needs get and create on pods/exec,
and get/list on pods (plus the workload or Service named as the target).

Relays, chosen per container by probing once: native (uploaded with tar.exe, removed on exit),
powershell, pwsh; for Linux containers python3, socat, nc, bash. --relay forces one."""
EXAMPLES = """\
examples:
  kubectl win port-forward pod/iis-7d9c 8080:80
  kubectl win port-forward deploy/api :5000 -n web          # a free local port, printed
  kubectl win port-forward svc/sql 1433 --remote-host ::1
  kubectl win port-forward iis-7d9c 8080:http --address 127.0.0.1,::1 -c iis
  kubectl win port-forward pod/dns-test 5353:53/udp --remote-host 10.96.0.10   # cluster DNS
  kubectl win port-forward --relay powershell --show-script  # the PowerShell the relay runs in the pod"""


RELAYS = ("native", "powershell", "pwsh", "python3", "socat", "nc", "bash")


@dataclass(kw_only=True)
class PortForwardFlags(Connection):
    """The flags; `script` (--show-script) and `forward` are built from them once, when validate first asks."""

    target: str | None = None
    ports: list[str] | None = None
    container: str | None = None
    address: list[str] | None = None
    remote_host: str = "127.0.0.1"
    relay: str | None = None
    pod_running_timeout: float = 60.0
    ping_interval: float = 5.0
    mux: str = "auto"
    read_timeout: float = 60.0
    show_script: bool = False

    @cached_property
    def script(self) -> str:
        return show_script(self)

    @cached_property
    def forward(self) -> ForwardOptions:
        """What the forwarder needs; the namespace is -n's ("" until complete reads the context's)."""
        return forward_options(self)


@shared(kube_options(selector=False, all_namespaces=False))
def port_forward(
    target: Annotated[str | None, typer.Argument(
        metavar="TYPE/NAME", help="pod/NAME (or NAME), deploy/, sts/, rs/ or svc/NAME", show_default=False)] = None,
    ports: Annotated[list[str] | None, typer.Argument(
        metavar="[LOCAL:]REMOTE[/udp]...", show_default=False,
        help="port pairs; :REMOTE picks a free local port; REMOTE may be a port name; "
             "/udp forwards datagrams (/tcp is the default)")] = None,
    container: Annotated[str | None, typer.Option(
        "-c", "--container", metavar="NAME", help="the container to run the relay in")] = None,
    address: Annotated[list[str] | None, typer.Option(
        "--address", metavar="ADDR",
        help="local addresses to listen on, comma-separated or repeated; localhost means 127.0.0.1 and ::1 "
             "(default localhost, as kubectl)")] = None,
    remote_host: Annotated[str, typer.Option(
        "--remote-host", metavar="HOST",
        help="where the relay connects inside the pod: an IP (::1, the pod IP) or a DNS name "
             "(default 127.0.0.1)")] = "127.0.0.1",
    relay: Annotated[str | None, typer.Option(
        "--relay", metavar="NAME", click_type=Choice(RELAYS), help=f"force a relay: {'|'.join(RELAYS)}")] = None,
    pod_running_timeout: Annotated[float, typer.Option(
        "--pod-running-timeout", metavar="SECONDS", click_type=Seconds(),
        help="how long to wait for a running pod (default 60)")] = 60.0,
    ping_interval: Annotated[float, typer.Option(
        "--ping-interval", metavar="SECONDS", click_type=Seconds(allow_zero=True),
        help="websocket ping interval that keeps idle connections alive; 0 disables (default 5)")] = 5.0,
    mux: Annotated[str, typer.Option(
        "--mux", metavar="MODE", click_type=Choice(("auto", "off")),
        help="auto: one exec carries every connection where the relay can (default); "
             "off: one exec per connection, as before (no UDP)")] = "auto",
    read_timeout: Annotated[float, typer.Option(
        "--read-timeout", metavar="SECONDS", click_type=Seconds(),
        help="drop a connection when nothing, not even a pong, arrives for this long (default 60)")] = 60.0,
    show_script: Annotated[bool, typer.Option(
        "--show-script", help="with --relay powershell|pwsh: print the PowerShell the relay runs in the pod, and "
                              "exit (contacts no cluster)")] = False,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("port-forward", help=verbatim(DESCRIPTION), short_help=summary, epilog=verbatim(EXAMPLES))(
        port_forward)


def show_script(args: PortForwardFlags) -> str:
    """The probe, then the relay: the multiplexing one (fixed) or, with --mux=off, the one per connection."""
    from kubectl_win.portforward.ports import validate_remote_host
    from kubectl_win.portforward.relays import powershell
    from kubectl_win.portforward.relays.powershell_mux import MUX_SCRIPT

    if args.relay not in ("powershell", "pwsh"):
        raise UsageError("--show-script prints the PowerShell relays: add --relay powershell or --relay pwsh")
    exe = "powershell.exe" if args.relay == "powershell" else "pwsh.exe"
    travel = (f"# It travels as: {exe} -NoLogo -NoProfile -NonInteractive -InputFormat None "
              "-EncodedCommand <UTF-16LE base64>\n")
    parts = [f"# The probe, run once per container (the relay needs FullLanguage mode):\n{travel}"
             f"{powershell.PROBE_SCRIPT}\n"]
    if args.mux == "auto":
        parts.append(f"# The relay: one exec carries every connection (fixed; targets arrive in OPEN frames):\n"
                     f"{travel}{MUX_SCRIPT.rstrip()}\n")
    else:
        host = validate_remote_host(args.remote_host, "--remote-host")
        remotes = sorted({pair.rsplit(":", 1)[-1].split("/")[0] for pair in args.ports or ()})
        numbers = [int(r) for r in remotes if r.isdigit() and 1 <= int(r) <= 65535]
        if not numbers:
            raise UsageError("with --mux=off the relay is built per port: give the port pairs (numeric remote ports)")
        for port in numbers:
            parts.append(f"# The relay for one connection to {host}:{port}:\n{travel}"
                         f"{powershell.relay_script(host, port).rstrip()}\n")
    return "\n".join(parts)


def forward_options(flags: PortForwardFlags) -> ForwardOptions:
    from kubectl_win.portforward.forwarder import ForwardOptions
    from kubectl_win.portforward.ports import parse_listen_addresses, parse_port_pair, validate_remote_host
    from kubectl_win.portforward.targets import parse_target, validate_container

    assert flags.target is not None and flags.ports is not None  # validate refused a run without them
    pairs = [parse_port_pair(p) for p in flags.ports]
    if flags.mux == "off" and any(pair.protocol == "udp" for pair in pairs):
        raise UsageError("UDP ports need the multiplexing relay: drop --mux=off")
    return ForwardOptions(
        target=parse_target(flags.target),
        namespace=flags.namespace or "",
        pairs=pairs,
        mux=flags.mux,
        addresses=parse_listen_addresses(flags.address, "--address"),
        remote_host=validate_remote_host(flags.remote_host, "--remote-host"),
        container=validate_container(flags.container),
        relay=flags.relay,
        pod_running_timeout=flags.pod_running_timeout,
        ping_interval=flags.ping_interval,
        read_timeout=flags.read_timeout,
    )


def validate(flags: PortForwardFlags) -> None:
    """Everything the user typed, refused before the cluster is touched."""
    if flags.show_script:
        flags.script  # noqa: B018 - building it checks --relay, --mux=off's ports and --remote-host
        return
    if not flags.target:
        raise UsageError("missing argument TYPE/NAME (kubectl win port-forward TYPE/NAME [LOCAL:]REMOTE...)")
    if not flags.ports:
        raise UsageError("missing argument [LOCAL:]REMOTE (kubectl win port-forward TYPE/NAME [LOCAL:]REMOTE...)")
    flags.forward  # noqa: B018 - building it checks the ports, addresses, host, container and target


def complete(flags: PortForwardFlags, env: Env) -> PortForwardFlags:
    """Without -n, the namespace of the kubeconfig's context."""
    if flags.show_script or flags.forward.namespace:
        return flags
    from kubectl_win.kube.config import load

    flags.forward.namespace = load(flags.kube_flags()).namespace
    return flags


def run(flags: PortForwardFlags, env: Env) -> int:
    if flags.show_script:
        env.stdout.write(flags.script)
        return 0
    from kubectl_win.kube import connect
    from kubectl_win.portforward.forwarder import Forwarder

    forwarder = Forwarder(connect(flags.kube_flags()), flags.forward, env.stdout, env.stderr)
    forwarder.start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: forwarder.stop())
    from kubectl_win.console import console_events_interrupt

    with console_events_interrupt(forwarder.stop):  # Windows: Ctrl-Break, console closed
        return forwarder.wait()


COMMAND = Command(PortForwardFlags, run, validate, complete)
