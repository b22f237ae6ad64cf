"""The one place that says what the value of a flag or argument is, when its type can't tell.

Keyed by the parameter's name (the typer function's parameter, e.g. `namespace`), so every
command's flag with that name completes the same way and a new command picks it up without
touching this package. Choices need no entry here: the tree carries them (see tree.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LiveNames:
    """Names of a resource read from the cluster (or, for contexts, from the kubeconfig)."""

    resource: str
    namespaced: bool = True


@dataclass(frozen=True)
class TypedNames:
    """kubectl's TYPE/NAME form (pod/web-0, deploy/web, svc/web), as port-forward takes it."""

    types: tuple[tuple[str, str], ...]  # (prefix the user may type, resource listed)
    offered: tuple[str, ...]  # the prefixes a TAB on an empty word suggests


@dataclass(frozen=True)
class WindowsBuilds:
    """Windows Server builds from knowledge/windows_builds.yaml: ltsc names and 10.0.N versions."""

    supported_only: bool = True


@dataclass(frozen=True)
class FieldPaths:
    """Pod field paths that explain knows (knowledge/field_rules.yaml), as the first argument only."""


@dataclass(frozen=True)
class Files:
    """File names; with extensions, the shell filters by them (directories are still offered)."""

    extensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Directories:
    pass


Hint = LiveNames | TypedNames | WindowsBuilds | FieldPaths | Files | Directories

# Names in the kubeconfig rather than in the cluster: read locally, no API call.
KUBECONFIG_RESOURCES = ("contexts", "clusters", "users")

MANIFEST_EXTENSIONS = ("yaml", "yml", "json")

# Keyed by dest, or by "command:dest" (the command path joined by spaces) where one command's
# argument means something else than another's with the same dest; the scoped key wins.
BY_DEST: dict[str, Hint] = {
    "namespace": LiveNames("namespaces", namespaced=False),
    "context": LiveNames("contexts", namespaced=False),
    "cluster": LiveNames("clusters", namespaced=False),
    "user": LiveNames("users", namespaced=False),
    "node": LiveNames("nodes", namespaced=False),
    "nodes": LiveNames("nodes", namespaced=False),
    "pod": LiveNames("pods"),
    "pods": LiveNames("pods"),
    "deployment": LiveNames("deployments"),
    "port-forward:target": TypedNames(
        types=(("pod/", "pods"), ("po/", "pods"), ("deployment/", "deployments"), ("deploy/", "deployments"),
               ("statefulset/", "statefulsets"), ("sts/", "statefulsets"), ("replicaset/", "replicasets"),
               ("rs/", "replicasets"), ("service/", "services"), ("svc/", "services")),
        offered=("pod/", "deploy/", "sts/", "rs/", "svc/")),
    "explain:target": FieldPaths(),
    "windows_build": WindowsBuilds(),
    "images:build": WindowsBuilds(),
    "images:target_build": WindowsBuilds(),
    "explain:build": WindowsBuilds(),
    "filename": Files(MANIFEST_EXTENSIONS),
    "filenames": Files(MANIFEST_EXTENSIONS),
    "files": Files(MANIFEST_EXTENSIONS),
    "kubeconfig": Files(),
    "config": Files(MANIFEST_EXTENSIONS),
    "dump": Files(),
    "output_dir": Directories(),
}

# Fallback for flags whose dest is not listed: what the metavar says the value is.
BY_METAVAR: dict[str, Hint] = {
    "PATH": Files(),
    "FILE": Files(),
    "DIR": Directories(),
    "NS": LiveNames("namespaces", namespaced=False),
    "NODE": LiveNames("nodes", namespaced=False),
    "POD": LiveNames("pods"),
}
