"""Tables for `kubectl win images` (json/yaml are the reports' to_dict)."""

from __future__ import annotations

from typing import IO, Any

from kubectl_win.images.service import ImagesReport, WorkloadReport
from kubectl_win.output.table import render_table


def _short(digest: str | None) -> str:
    return digest.split(":", 1)[-1][:12] if digest else "<none>"


def render_images(report: ImagesReport, out: IO[str], wide: bool = False, colour: bool = False,
                  width: int | None = None) -> None:
    headers = ["image", "build", "verdict", "variant"] + (["digest", "chosen"] if wide else []) + ["reason"]
    rows: list[list[Any]] = []
    for row in report.rows:
        for build, verdict in row.verdicts:
            cells = [row.resolved.image, build, verdict.verdict, verdict.variant or "<none>"]
            if wide:
                cells += [_short(row.resolved.digest), _short(verdict.digest)]
            rows.append([*cells, verdict.reason])
    _table(headers, rows, out, colour, width, verdict_column=2)


def render_workloads(report: WorkloadReport, out: IO[str], wide: bool = False, colour: bool = False,
                     width: int | None = None) -> None:
    if not report.workloads:
        out.write("No Windows workloads found.\n")
        return
    rows: list[list[Any]] = []
    if report.target is not None:
        headers = ["namespace", "workload", "container", "image", f"on {report.target.given}"] + \
                  (["variant"] if wide else []) + ["reason"]
        for workload in report.workloads:
            for use in workload.images:
                verdict = workload.image_targets[use.image]
                cells = [workload.namespace or "<none>", workload.owner, use.container, use.image, verdict.verdict]
                if wide:
                    cells.append(verdict.variant or "<none>")
                rows.append([*cells, _plan_reason(verdict)])
        _table(headers, rows, out, colour, width, verdict_column=4)
        out.write("\n")
        _summary(report, out)
        return
    headers = ["namespace", "workload", "container", "image", "build", "verdict", "image-os", "older-nodes"] + \
              (["nodes"] if wide else []) + ["reason"]
    for workload in report.workloads:
        nodes_of = dict(workload.builds)
        for use in workload.images:
            for build, verdict in workload.verdicts.get(use.image, []):
                older = workload.older_nodes(build, verdict)
                cells = [workload.namespace or "<none>", workload.owner, use.container, use.image, build,
                         verdict.verdict, _with_update(verdict.variant) or "<none>",
                         ", ".join(f"{name} ({_with_update(kernel, ', ')})" for name, kernel in older) or "<none>"]
                if wide:
                    cells.append(",".join(f"{n} ({workload.kernels[n]})" if n in workload.kernels else n
                                          for n in nodes_of.get(build, [])) or "<none>")
                rows.append([*cells, verdict.reason])
    _table(headers, rows, out, colour, width, verdict_column=5)
    for workload in report.workloads:
        if workload.note:
            out.write(f"note: {workload.namespace}/{workload.owner}: {workload.note}\n")


def _with_update(version: str | None, between: str = " ") -> str | None:
    """'10.0.20348.3207 KB5051979': an OS version with the update it is, when the update history knows it."""
    if not version:
        return version
    from kubectl_win.updates import kb_of_version

    kb = kb_of_version(version)
    return f"{version}{between}{kb}" if kb else version


def _plan_reason(verdict: Any) -> str:
    action = {"runs": "runs as it is", "hyperv-only": "needs Hyper-V isolation or a rebuild",
              "no-variant": "needs a rebuild for the target", "unknown": "could not be checked"}[verdict.verdict]
    return f"{action}: {verdict.reason}"


def _summary(report: WorkloadReport, out: IO[str]) -> None:
    summary = report.summary()
    headers = ["namespace", "runs", "hyperv-only", "rebuild", "unknown"]
    rows = [[ns, c["runs"], c["hyperv-only"], c["no-variant"], c["unknown"]]
            for ns, c in sorted(summary["namespaces"].items())]
    render_table(headers, rows, out)
    out.write("\n")
    rows = [[owner, c["runs"], c["hyperv-only"], c["no-variant"], c["unknown"]]
            for owner, c in sorted(summary["owners"].items())]
    render_table(["owner", "runs", "hyperv-only", "rebuild", "unknown"], rows, out)


def _table(headers: list[str], rows: list[list[Any]], out: IO[str], colour: bool, width: int | None,
           verdict_column: int) -> None:
    # No colour in cells: the table measures what it prints, and escape codes would skew the columns.
    render_table(headers, rows, out, width=width)
