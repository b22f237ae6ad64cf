"""One cluster's report in each `-o` format: `RENDERERS` maps the format to its function, as
kubectl_win/fleet/render.py does for several clusters, so a format is one entry here.

Each renderer takes the report and a `Page` (where to write and what the terminal allows); the modules a format
needs are imported only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from kubectl_win.doctor.render.report import DoctorReport


@dataclass(frozen=True, slots=True)
class Page:
    out: IO[str]
    shell: str = "posix"
    colour: bool = False
    width: int | None = None  # a terminal's; None when piped
    source: str = ""  # what was read: "context eu", "dump cluster.json", ...
    label: str = ""  # the `cluster` label of -o openmetrics
    seconds: float = 0.0  # how long the scan took (-o openmetrics)
    cluster_label: str | None = None  # -o openmetrics: --cluster-label (fleet/metrics.py label_for)
    artifact: str | None = None  # the dump file read (--from-dump): -o sarif's physical location of its objects


def _json(report: DoctorReport, page: Page) -> None:
    from kubectl_win.output.structured import render_json

    render_json(report.to_dict(page.shell, lazy=True), page.out)


def _yaml(report: DoctorReport, page: Page) -> None:
    from kubectl_win.output.structured import render_yaml

    render_yaml(report.to_dict(page.shell), page.out)


def _junit(report: DoctorReport, page: Page) -> None:
    from kubectl_win import catalog
    from kubectl_win.output.junit import render_junit

    render_junit(report.findings, sorted(catalog.doctor_checks()), page.out, suite="kubectl-win doctor",
                 shell=page.shell)


# Past this size a dump is not read a second time for its objects' lines: their results point at line 1.
SARIF_LINES_MAX_BYTES = 64 << 20


def _sarif(report: DoctorReport, page: Page) -> None:
    from kubectl_win import catalog
    from kubectl_win.errors import InputError
    from kubectl_win.manifests.inputs import read_input_text
    from kubectl_win.output.sarif import Artifact, render_sarif

    artifact = None
    if page.artifact and page.artifact != "-":
        try:  # decoded as the dump was (UTF-16 from Windows PowerShell's `>` too)
            text = read_input_text(page.artifact, "dump", SARIF_LINES_MAX_BYTES)
        except InputError:
            text = ""  # gone since, or too large to read twice: its results point at line 1
        artifact = Artifact(page.artifact, text)
    render_sarif(report.findings, catalog.sarif_rules(report.findings, page.shell), page.out, shell=page.shell,
                 artifact=artifact)


def _html(report: DoctorReport, page: Page) -> None:
    from kubectl_win.doctor.render.html import render_html

    page.out.write(render_html(report, page.source, shell=page.shell))


def _openmetrics(report: DoctorReport, page: Page) -> None:
    from kubectl_win.fleet.metrics import render_openmetrics
    from kubectl_win.fleet.scan import scan_of

    render_openmetrics([scan_of(page.label, None, report, page.seconds)], page.out,
                       cluster_label=page.cluster_label)


def _table(report: DoctorReport, page: Page, wide: bool = False) -> None:
    from kubectl_win.doctor.render.report import render_findings, render_nodes

    if report.scope == "nodes":
        render_nodes(report, page.out, wide, page.width)
        page.out.write("\n")
    render_findings(report, page.out, wide, page.colour, page.width, page.shell)


def _wide(report: DoctorReport, page: Page) -> None:
    _table(report, page, wide=True)


RENDERERS: dict[str, Callable[[DoctorReport, Page], None]] = {
    "table": _table,
    "wide": _wide,
    "json": _json,
    "yaml": _yaml,
    "junit": _junit,
    "sarif": _sarif,
    "html": _html,
    "openmetrics": _openmetrics,
}
