"""`kubectl win collect`: a support bundle from many Windows nodes, for doctor --from-bundle or a vendor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Connection, PositiveInt, Seconds, kube_options, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

DESCRIPTION = (
    "Gather a support bundle from Windows nodes without RDP or SSH: per node a short-lived HostProcess pod "
    "runs one fixed PowerShell script (print it with --show-script) that collects HNS state, kubelet, "
    "containerd, kube-proxy, CNI and csi-proxy logs (also files the services hold open), event logs as text, "
    "containerd and CNI configuration, port ranges, disk, memory, OS build, hotfixes and services, and "
    "streams it back over exec. Kubeconfigs, bootstrap tokens, private keys and the kubelet's credentials "
    "are never collected; bundle.json lists what was left out. The pods are deleted when the command ends, "
    "also on error and Ctrl-C. Read the bundle with kubectl win doctor --from-bundle."
)
EXAMPLES = """examples:
  kubectl win collect win-node-1 win-node-2 -o bundle.tar.gz
  kubectl win collect --all-windows -o bundle.tar.gz --parallel 8
  kubectl win collect -l agentpool=win22 -o bundle.tar.gz --log-size 50 --budget 10m
  kubectl win collect --show-script > collect.ps1      # read what runs on the node first
  kubectl win doctor --from-bundle bundle.tar.gz

exit status: 0 every node collected, 1 the bundle was written but some nodes failed (bundle.json says why),
2 bad input, 3 cluster unreachable or no node collected
"""


@dataclass(kw_only=True)
class CollectFlags(Connection):
    nodes: list[str] | None = None
    output: str | None = None
    all_windows: bool = False
    force: bool = False
    parallel: int = 4
    log_size: int = 20
    size_cap: int = 200
    budget: float = 300.0
    timeout: float = 180.0
    image: str | None = None
    show_script: bool = False


@shared(kube_options(all_namespaces=False))
def collect(
    nodes: Annotated[list[str] | None, typer.Argument(
        metavar="NODE...", help="the Windows nodes to collect from (or --all-windows, or -l)",
        show_default=False)] = None,
    output: Annotated[str | None, typer.Option(
        "-o", "--output", metavar="PATH", help="the bundle to write (a .tar.gz)")] = None,
    all_windows: Annotated[bool, typer.Option("--all-windows", help="every Windows node of the cluster")] = False,
    force: Annotated[bool, typer.Option("--force", help="replace an existing bundle file")] = False,
    parallel: Annotated[int, typer.Option(
        "--parallel", metavar="N", click_type=PositiveInt(), help="nodes collected at once (default 4)")] = 4,
    log_size: Annotated[int, typer.Option(
        "--log-size", metavar="MiB", click_type=PositiveInt(),
        help="the last MiB of each log file (default 20)")] = 20,
    size_cap: Annotated[int, typer.Option(
        "--size-cap", metavar="MiB", click_type=PositiveInt(),
        help="what one node may send at most; items past it are skipped and listed (default 200)")] = 200,
    budget: Annotated[float, typer.Option(
        "--budget", metavar="SECONDS", click_type=Seconds(),
        help="time budget per node; items past it are skipped and listed, a node past it by 30s is cut "
             "off (default 300)")] = 300.0,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", click_type=Seconds(),
        help="how long to wait for each pod to start (default 180)")] = 180.0,
    image: Annotated[str | None, typer.Option(
        "--image", metavar="IMAGE",
        help="image for the HostProcess pods (default: Windows Server Core matching each node's build)")] = None,
    show_script: Annotated[bool, typer.Option(
        "--show-script", help="print the PowerShell that runs on each node, and exit (contacts no cluster)")] = False,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("collect", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(collect)


def validate(flags: CollectFlags) -> None:
    if flags.show_script:
        return
    if not flags.output:
        raise UsageError("name the bundle to write: -o bundle.tar.gz")
    if sum(bool(x) for x in (flags.nodes, flags.all_windows, flags.selector)) != 1:
        raise UsageError("name the nodes (kubectl win collect NODE...), or give --all-windows or -l SELECTOR "
                         "(one of the three)")


def run(flags: CollectFlags, env: Env) -> int:
    from kubectl_win.collect import script

    if flags.show_script:
        env.stdout.write(script.show(script.parameters(flags.log_size << 20, flags.size_cap << 20, flags.budget)))
        return 0
    from kubectl_win.collect.gather import CollectOptions
    from kubectl_win.collect.gather import collect as collect_bundle

    assert flags.output is not None  # validate refused a run without -o
    options = CollectOptions(output=flags.output, nodes=list(flags.nodes or ()), all_windows=flags.all_windows,
                             selector=flags.selector, force=flags.force, namespace=flags.namespace or "kube-system",
                             image=flags.image, parallel=flags.parallel, log_bytes=flags.log_size << 20,
                             cap_bytes=flags.size_cap << 20, budget=flags.budget, timeout=flags.timeout)
    result = collect_bundle(flags.kube_flags(), options, _say(env) if env.stderr_isatty else None)
    render(result, env)
    if len(result.failed) == len(result.nodes):
        return 3
    return 1 if result.failed else 0


def _say(env: Env):  # type: ignore[no-untyped-def]
    def say(text: str) -> None:
        env.stderr.write(f"\r{text[:200]}\033[K")
        env.stderr.flush()
    return say


def render(result: Any, env: Env) -> None:
    from tabulate import tabulate

    rows = []
    for node, entry in result.nodes.items():
        errors = entry.get("errors") or []
        outcome = "collected" if entry.get("collected") else "failed"
        rows.append([node, outcome, len(entry.get("collected") or ()), len(entry.get("leftOut") or ()),
                     f"{entry.get('seconds', 0):g}s", errors[0][:100] if errors else ""])
    env.stdout.write(tabulate(rows, ["NODE", "RESULT", "FILES", "LEFT OUT", "TIME", "FIRST PROBLEM"],
                              tablefmt="plain") + "\n")
    failed = result.failed
    line = f"wrote {result.path}: {len(result.nodes) - len(failed)} of {len(result.nodes)} nodes collected"
    if failed:
        line += f" (failed: {', '.join(failed)}; bundle.json says why)"
    import shlex

    env.stdout.write(line + f"; read it with kubectl win doctor --from-bundle {shlex.quote(result.path)}\n")


COMMAND = Command(CollectFlags, run, validate)
