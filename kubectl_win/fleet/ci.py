"""A fleet run for CI: SARIF with one run per cluster, JUnit with one testsuite per cluster.

Each run and testsuite is the single-cluster one, told apart by the context: SARIF's
`automationDetails.id` is `kubectl-win-doctor/CONTEXT/` and the run's properties carry the context and server;
a testsuite is named `kubectl-win doctor CONTEXT`. A cluster that could not be read is a run whose invocation
failed (executionSuccessful false, the reason as an error notification) and a testsuite with one errored test
case. Clusters are in the order asked for (see render.InOrder).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from kubectl_win.fleet.render import FleetOutput, InOrder
from kubectl_win.fleet.summary import ClusterSummary

if TYPE_CHECKING:
    from kubectl_win.fleet.scan import ClusterScan

SUITE = "kubectl-win doctor"


def sarif_run(scan: ClusterScan, shell: str) -> dict[str, Any]:
    from kubectl_win import catalog
    from kubectl_win.output.sarif import sarif_document

    findings = scan.report.findings if scan.report is not None else []
    run: dict[str, Any] = sarif_document(findings, catalog.sarif_rules(findings, shell), shell)["runs"][0]
    run["automationDetails"] = {"id": f"kubectl-win-doctor/{scan.context}/"}
    run["properties"] = {"context": scan.context, "server": scan.server}
    if scan.report is None:
        run["invocations"] = [{"executionSuccessful": False, "exitCode": scan.exit_code,
                               "toolExecutionNotifications": [{"level": "error", "message": {"text": scan.error}}]}]
    else:
        run["invocations"] = [{"executionSuccessful": True}]
    return run


class SarifRenderer:
    def __init__(self, output: FleetOutput) -> None:
        from kubectl_win.output.sarif import SARIF_SCHEMA
        from kubectl_win.output.structured import byte_writer, encode

        self.o = output
        self._encode = encode
        self._write = byte_writer(output.out)
        self._write(b'{\n  "$schema": ' + encode(SARIF_SCHEMA, 0) + b',\n  "version": "2.1.0",\n  "runs": [\n')
        self._parts = InOrder(self._write)

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        separator = b"" if summary.index == 0 else b",\n"
        self._parts.put(summary.index, separator + b"    " + self._encode(sarif_run(scan, self.o.shell), 4))

    def finish(self, summaries: list[ClusterSummary]) -> None:
        self._parts.flush()
        self._write(b"\n  ]\n}\n")


def junit_suite(scan: ClusterScan, shell: str) -> str:
    from kubectl_win import catalog
    from kubectl_win.output.junit import escape, quoteattr, render_testsuite

    name = f"{SUITE} {scan.context}"
    if scan.report is None:
        return (f'<testsuite name={quoteattr(name)} tests="1" failures="0" errors="1">\n'
                f'  <testcase classname={quoteattr(name)} name="read the cluster">'
                f'<error type="unreadable" message={quoteattr(scan.error or "")}>{escape(scan.error or "")}</error>'
                "</testcase>\n</testsuite>")
    out = io.StringIO()
    render_testsuite(scan.report.findings, sorted(catalog.doctor_checks()), out, suite=name, shell=shell)
    return out.getvalue()


class JunitRenderer:
    def __init__(self, output: FleetOutput) -> None:
        from kubectl_win.output.structured import byte_writer

        self.o = output
        self._write = byte_writer(output.out)
        self._write(b'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        self._parts = InOrder(self._write)

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        self._parts.put(summary.index, (junit_suite(scan, self.o.shell) + "\n").encode("utf-8"))

    def finish(self, summaries: list[ClusterSummary]) -> None:
        self._parts.flush()
        self._write(b"</testsuites>\n")
