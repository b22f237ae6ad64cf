"""explain's service layer: lint manifests on disk or live objects and build the report (no printing here)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubectl_win.explain.lint import lint_object_detailed
from kubectl_win.explain.placement import runtime_class_selector
from kubectl_win.findings import SCHEMA_VERSION, SEVERITY_RANK, Finding, ObjectRef, summarize
from kubectl_win.kinds import POD_SPEC_PATHS
from kubectl_win.manifests.inputs import Problem
from kubectl_win.manifests.objects import ManifestObject, malformed_pod_spec
from kubectl_win.manifests.reader import read_objects
from kubectl_win.policy import Policy
from kubectl_win.versions import NEWEST_KNOWN, Version

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO, Any


@dataclass(slots=True)
class ExplainOptions:
    k8s_version: Version = NEWEST_KNOWN
    assume_windows: bool = False
    policy: Policy = field(default_factory=Policy)
    images: Any = None  # an images.run Resolver: also read the Windows images from registries (--check-images)
    builds: tuple[Any, ...] = ()  # HostBuilds to judge images against (default: the build a workload pins)


@dataclass(slots=True)
class ExplainReport:
    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    objects: int = 0  # pod-bearing objects checked
    windows_objects: int = 0  # of which target Windows (or were assumed to)

    @property
    def unreadable(self) -> bool:
        return any(problem.fatal for problem in self.problems)

    def payload(self, shell: str = "posix") -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "findings": [finding.to_dict(shell=shell) for finding in self.findings],
            "summary": {"objects": self.objects, **summarize(self.findings)},
        }


def explain_files(paths: Iterable[str], options: ExplainOptions, stdin: IO[str] | None = None) -> ExplainReport:
    """Lint every pod-bearing object in the files, directories or stdin ('-') given."""
    report = ExplainReport()
    items = []
    runtime_classes: dict[str, dict[str, str]] = {}  # a RuntimeClass's scheduling may carry a pod's OS selector
    for item in read_objects(paths, stdin, kinds=_READ_KINDS):
        if isinstance(item, Problem):
            report.problems.append(item)
        elif item.obj.get("kind") == "RuntimeClass":
            name, selector = runtime_class_selector(item.obj)
            runtime_classes[name] = selector
        else:
            items.append(item)
    for item in items:
        _lint_manifest(item, options, report, runtime_classes)
    if options.images is not None:
        from kubectl_win.images.lint import image_findings

        report.findings.extend(image_findings(
            [i for i in items if str(i.obj.get("kind", "")) in POD_SPEC_PATHS], options.builds, options.images))
    return _finish(report, options)


def explain_objects(objects: Iterable[dict[str, Any]], options: ExplainOptions,
                    runtime_classes: dict[str, dict[str, str]] | None = None) -> ExplainReport:
    """Lint objects that came from the cluster (no files, no line numbers); `runtime_classes`: every RuntimeClass
    of the cluster (its nodeSelector), None when they were not read."""
    report = ExplainReport()
    for obj in objects:
        if str(obj.get("kind")) not in POD_SPEC_PATHS:
            continue
        report.objects += 1
        findings, windows = lint_object_detailed(
            obj, k8s_version=options.k8s_version, assume_windows=options.assume_windows,
            runtime_classes=runtime_classes, all_runtime_classes=runtime_classes is not None,
        )
        report.windows_objects += windows
        report.findings.extend(findings)
    return _finish(report, options)


_READ_KINDS = frozenset(POD_SPEC_PATHS) | {"RuntimeClass"}


def _lint_manifest(item: ManifestObject, options: ExplainOptions, report: ExplainReport,
                   runtime_classes: dict[str, dict[str, str]]) -> None:
    kind = str(item.obj.get("kind", ""))
    if kind not in POD_SPEC_PATHS:
        return  # other kinds are not ours to judge, and say nothing
    problem = malformed_pod_spec(item.obj)
    if problem:
        ref = ObjectRef.of(item.obj)
        report.problems.append(Problem(item.source, f"{ref.display()}: {problem}; skipped", line=item.line(())))
        return
    report.objects += 1
    findings, windows = lint_object_detailed(
        item.obj,
        k8s_version=options.k8s_version,
        assume_windows=options.assume_windows,
        file=item.source,
        locate=item.line,
        runtime_classes=runtime_classes,
    )
    report.windows_objects += windows
    report.findings.extend(findings)


def _finish(report: ExplainReport, options: ExplainOptions) -> ExplainReport:
    report.findings = sorted(options.policy.apply(report.findings), key=_file_order)
    return report


def _file_order(finding: Finding) -> tuple[Any, ...]:
    """Findings in the order a reader meets them in the files (live objects: by namespace and name)."""
    ref = finding.object
    return (
        finding.file or "",
        finding.line or 0,
        ref.namespace or "",
        ref.kind,
        ref.name,
        finding.path,
        -SEVERITY_RANK[finding.severity],
        finding.id,
    )
