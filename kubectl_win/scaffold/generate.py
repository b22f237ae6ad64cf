"""The scaffold service: validated options in, objects plus the warnings and notes a user should read out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_win.builds import build_of_image
from kubectl_win.scaffold import templates
from kubectl_win.scaffold.options import PlacementOptions, WorkloadOptions
from kubectl_win.scaffold.placement import Placement, windows_placement


@dataclass
class Scaffold:
    objects: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)  # something will likely go wrong
    notes: list[str] = field(default_factory=list)  # something the user has to do elsewhere


def scaffold_workload(opts: WorkloadOptions, nodes: list[dict[str, Any]] | None = None) -> Scaffold:
    """A Windows workload (and its Service when asked); `nodes` are the cluster's nodes for --from-cluster."""
    placement = windows_placement(opts.placement, nodes)
    result = Scaffold([templates.workload(opts, placement)], list(placement.warnings))
    if opts.service:
        result.objects.append(templates.service(opts))
    _check_builds(opts, placement, result)
    if opts.hostprocess:
        namespace = opts.namespace or "NAMESPACE"
        result.notes.append(
            "HostProcess pods need the namespace's Pod Security level 'privileged' (baseline forbids hostProcess "
            f"and hostNetwork): kubectl label namespace {namespace} pod-security.kubernetes.io/enforce=privileged"
        )
    return result


def scaffold_runtime_class(name: str, handler: str, placement_opts: PlacementOptions,
                           nodes: list[dict[str, Any]] | None = None) -> Scaffold:
    placement = windows_placement(placement_opts, nodes)
    result = Scaffold([templates.runtime_class(name, handler, placement)], list(placement.warnings))
    if placement.build is not None and not placement.build.supported:
        result.warnings.append(f"{placement.build.display()} is not a supported Kubernetes node OS")
    return result


def default_runtime_class_name(placement_opts: PlacementOptions) -> str:
    build = placement_opts.build
    if build is None:
        return "windows"
    return "windows-" + build.label.lower().replace(".", "-")


def _check_builds(opts: WorkloadOptions, placement: Placement, result: Scaffold) -> None:
    node_build = placement.build
    if node_build is not None and not node_build.supported:
        result.warnings.append(f"{node_build.display()} is not a supported Kubernetes node OS")
    if opts.hostprocess:
        return  # HostProcess containers run on the host: their image build need not match the node's
    image_build = build_of_image(opts.image)
    if image_build is None:
        return
    if node_build is None:
        result.notes.append(
            f"image {opts.image} is built for {image_build.display()}; pass --windows-build "
            f"{image_build.label} so the pods only land on nodes of that build"
        )
    elif image_build.version != node_build.version:
        result.warnings.append(
            f"image {opts.image} is built for {image_build.display()} but the pods are pinned to "
            f"{node_build.display()} nodes; process-isolated containers need an image of the node's build"
        )
