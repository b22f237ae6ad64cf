"""`kubectl win hns`: a Windows node's HNS networks, endpoints and load balancers, checked against the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

from kubectl_win.commands.base import Command, KubectlWinTyper, invoke, verbatim
from kubectl_win.commands.flags import Connection, Policy, Seconds, kube_options, output_option, policy_options, shared
from kubectl_win.env import Env
from kubectl_win.errors import UsageError

DESCRIPTION = (
    "Read the Host Networking Service state of a Windows node (networks, endpoints, load balancers, HNS "
    "version) through a short-lived HostProcess pod, or from a dump collected by hand, and compare it with "
    "the cluster's Services, EndpointSlices, Pods and Nodes: missing and stale load balancers, stale remote "
    "endpoints, duplicate IPs, unhealthy endpoints, overlay and DSR settings, ephemeral port use and scale. "
    "The pod is deleted when the command ends, also on error and Ctrl-C."
)
EXAMPLES = """examples:
  kubectl win hns win-node-1                                   # live: a HostProcess pod in kube-system
  kubectl win hns win-node-1 -n win-debug --image registry.local/servercore:ltsc2022
  kubectl win hns --from-file hns.json --cluster-from-dump cluster.json -o wide
  kubectl win hns --show-script                                # what the pod runs on the node
  kubectl get services,endpointslices,pods,nodes -A -o json > cluster.json

exit status: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input, 3 cluster unreachable
"""
FORMATS = ("table", "wide", "json", "yaml")


@dataclass(kw_only=True)
class HnsOptions(Connection, Policy):
    node: str | None = None
    from_file: str | None = None
    cluster_from_dump: str | None = None
    image: str | None = None
    timeout: float = 180.0
    show_script: bool = False
    output: str = "table"


@shared(output_option(FORMATS, "table"), policy_options(), kube_options(selector=False, all_namespaces=False))
def hns(
    node: Annotated[str | None, typer.Argument(
        metavar="NODE", show_default=False,
        help="the Windows node to inspect (with --from-file: the node the dump came from)")] = None,
    from_file: Annotated[str | None, typer.Option(
        "--from-file", metavar="PATH",
        help="analyse an HNS dump collected on the node (see the README) instead of starting a pod")] = None,
    cluster_from_dump: Annotated[str | None, typer.Option(
        "--cluster-from-dump", metavar="PATH",
        help="compare with the Services, EndpointSlices, Pods and Nodes of a doctor dump or of "
             "kubectl get services,endpointslices,pods,nodes -A -o json")] = None,
    image: Annotated[str | None, typer.Option(
        "--image", metavar="IMAGE",
        help="image for the HostProcess pod (default: Windows Server Core matching the node's build)")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", click_type=Seconds(),
        help="how long to wait for the pod to start and the dump to finish (default 180)")] = 180.0,
    show_script: Annotated[bool, typer.Option(
        "--show-script", help="print the PowerShell the pod runs on the node, and exit (contacts no cluster)")
    ] = False,
    **shared: Any,
) -> int:
    return invoke(COMMAND, locals())


def register(app: KubectlWinTyper, summary: str) -> None:
    app.command("hns", help=DESCRIPTION, short_help=summary, epilog=verbatim(EXAMPLES))(hns)


def validate(options: HnsOptions) -> None:
    if options.show_script:
        return
    if options.from_file:
        if options.image:
            raise UsageError("--image starts a pod; it cannot be combined with --from-file")
        return
    if not options.node:
        raise UsageError("name a Windows node (kubectl win hns NODE), or give --from-file PATH")
    if options.cluster_from_dump:
        raise UsageError("--cluster-from-dump goes with --from-file; a live run reads the cluster itself")


def run(options: HnsOptions, env: Env) -> int:
    from kubectl_win.findings import exit_code

    if options.show_script:
        from kubectl_win.hns import script

        env.stdout.write(script.show())
        return 0
    if options.from_file:
        from kubectl_win.hns.service import analyze_files

        report = analyze_files(options.from_file, options.cluster_from_dump, options.node, options.config)
    else:
        from kubectl_win.hns.from_node import inspect_node
        from kubectl_win.kube.hostprocess import PodOptions

        assert options.node is not None  # validate refused a live run without one
        pod = PodOptions(node=options.node, namespace=options.namespace or "kube-system", image=options.image,
                         timeout=options.timeout)
        report = inspect_node(options.kube_flags(), pod, options.config,
                              progress=env.stderr if env.stderr_isatty else None)
    render(report, options.output, env)
    return exit_code(report.findings, options.fail_on)


def render(report, output: str, env: Env) -> None:  # type: ignore[no-untyped-def]
    if output in ("json", "yaml"):
        from kubectl_win.output.structured import render_json, render_yaml

        (render_json if output == "json" else render_yaml)(report.to_dict(env.shell), env.stdout)
        return
    from kubectl_win.hns.report import render as render_table

    width = None
    if env.stdout_isatty:
        from kubectl_win.output.fold import terminal_width

        width = terminal_width()
    render_table(report, env.stdout, wide=output == "wide", colour=env.color, width=width, shell=env.shell)


COMMAND = Command(HnsOptions, run, validate)
