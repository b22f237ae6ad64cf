"""Flag groups shared by several commands, spelled the way kubectl spells them."""

from __future__ import annotations

import argparse

SEVERITIES = ("error", "warning", "info")


def add_kube_flags(parser: argparse.ArgumentParser, selector: bool = True, all_namespaces: bool = True) -> None:
    """kubectl's connection flags; kubectl does not pass its own flags to plugins."""
    group = parser.add_argument_group("cluster connection")
    group.add_argument(
        "--kubeconfig", metavar="PATH", help="path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    group.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    group.add_argument("--cluster", metavar="NAME", help="the kubeconfig cluster to use")
    group.add_argument("--user", metavar="NAME", help="the kubeconfig user to use")
    group.add_argument("-n", "--namespace", metavar="NS", help="namespace (default: the context's namespace)")
    if all_namespaces:
        group.add_argument("-A", "--all-namespaces", action="store_true", help="look in every namespace")
    if selector:
        group.add_argument("-l", "--selector", metavar="SELECTOR", help="label selector, e.g. app=web,tier!=db")
    group.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        type=_positive_float,
        default=30.0,
        help="timeout for each API request (default 30)",
    )


def add_output_flag(parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=choices,
        default=default,
        metavar="FORMAT",
        help=f"output format: {'|'.join(choices)} (default {default})",
    )


def add_policy_flags(parser: argparse.ArgumentParser) -> None:
    """--fail-on and --config, shared by explain and doctor."""
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES + ("never",),
        default="error",
        metavar="LEVEL",
        help="exit 1 when a finding is at or above LEVEL: error|warning|info|never (default error)",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="suppression config (default: .kubectl-win.yaml in the working directory, if present)",
    )


def _positive_float(text: str) -> float:
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text!r}")
    return value
