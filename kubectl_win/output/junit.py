"""JUnit XML for CI dashboards: one testcase per check id, a failure per finding at error or warning."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from xml.sax import saxutils

from kubectl_win.findings import Finding
from kubectl_win.terminal import xml_safe

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import IO


def escape(text: str) -> str:
    """Element text: XML-escaped, and any character XML 1.0 cannot hold shown as its escape."""
    return saxutils.escape(xml_safe(text))


def quoteattr(text: str) -> str:
    """An attribute value, likewise."""
    return saxutils.quoteattr(xml_safe(text))


def render_junit(
    findings: Iterable[Finding], check_ids: Sequence[str], out: IO[str], suite: str = "kubectl-win",
    shell: str = "posix",
) -> None:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>')
    render_testsuite(findings, check_ids, out, suite, shell)
    out.write("</testsuites>\n")


def render_testsuite(findings: Iterable[Finding], check_ids: Sequence[str], out: IO[str],
                     suite: str = "kubectl-win", shell: str = "posix") -> None:
    """One <testsuite> element (doctor over several clusters writes one per cluster)."""
    by_check: dict[str, list[Finding]] = {check_id: [] for check_id in check_ids}
    for finding in findings:
        by_check.setdefault(finding.id, []).append(finding)
    failures = sum(1 for items in by_check.values() if any(f.severity != "info" for f in items))
    out.write(f'<testsuite name={quoteattr(suite)} tests="{len(by_check)}" failures="{failures}">\n')
    for check_id, items in by_check.items():
        out.write(f"  <testcase classname={quoteattr(suite)} name={quoteattr(check_id)}>")
        problems = [f for f in items if f.severity != "info"]
        if problems:
            text = "\n".join(
                f"[{f.severity}] {f.object.display()} {f.path}: {f.message}"
                + (f"\n  fix: {f.fix.text(shell)}" if f.fix else "") for f in problems
            )
            out.write(
                f"\n    <failure type={quoteattr(problems[0].severity)} message={quoteattr(problems[0].message)}>"
                f"{escape(text)}</failure>\n  "
            )
        infos = [f for f in items if f.severity == "info"]
        if infos:
            out.write(
                f"<system-out>{escape(chr(10).join(f'{f.object.display()} {f.path}: {f.message}' for f in infos))}"
                "</system-out>"
            )
        out.write("</testcase>\n")
    out.write("</testsuite>")
