"""The explicit registry of subcommands: name -> module.

Each module defines optional DESCRIPTION and EXAMPLES, `add_arguments(parser)` and
`run(args, env) -> int`; its one-line summary lives in SUMMARIES below, so that `kubectl win --help`
and a run of one command import no other command module. Command modules import only argparse-level code at the top; the
work (and any heavy import) happens inside `run`.
"""

COMMANDS: dict[str, str] = {
    "explain": "kubectl_win.commands.explain",
    "doctor": "kubectl_win.commands.doctor",
    "completion": "kubectl_win.commands.completion",
    "version": "kubectl_win.commands.version",
    "scaffold": "kubectl_win.commands.scaffold",
    "port-forward": "kubectl_win.commands.port_forward",
    "hns": "kubectl_win.commands.hns",
    "logs": "kubectl_win.commands.logs",
}

SUMMARIES: dict[str, str] = {
    "explain": "explain pod fields that Windows rejects, ignores or does not support",
    "doctor": "inspect a cluster (or a dump of one) for Windows node and workload problems",
    "completion": "print a shell completion script (bash, zsh, fish, powershell, kubectl)",
    "version": "print the kubectl-win version and the runtime it uses",
    "scaffold": "write Windows workload manifests, or add OS placement to existing ones",
    "port-forward": "forward local ports to a Windows (or Linux) pod through an in-pod relay",
    "hns": "check a Windows node's HNS load balancers and endpoints against the cluster's Services",
    "logs": "read a Windows node's kubelet, containerd, kube-proxy and CNI logs through the API server",
}
