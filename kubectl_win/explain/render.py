"""Rendering explain's results: findings (table, wide, json, yaml, sarif) and the field reference."""

from __future__ import annotations

import textwrap

from kubectl_win.env import Env
from kubectl_win.output.table import render_rows, render_table
from kubectl_win.versions import Version, format_version

TYPE_CHECKING = False  # typing itself is only for type checkers: importing it costs start-up time

if TYPE_CHECKING:
    from kubectl_win.explain.field_query import FieldMatch
    from kubectl_win.explain.service import ExplainReport


def render_report(report: ExplainReport, output: str, env: Env, live: bool = False) -> None:
    for problem in report.problems:
        label = "error" if problem.fatal else "note"
        print(f"{label}: {problem}", file=env.stderr)
    if output in ("json", "yaml"):
        from kubectl_win.output.structured import render_json, render_yaml

        (render_json if output == "json" else render_yaml)(report.payload(env.shell), env.stdout)
        return
    if output == "sarif":
        from kubectl_win.explain.rules import all_rules
        from kubectl_win.output.sarif import render_sarif

        rules = {
            rule.id: {"description": rule.summary, "help": rule.instead, "source": rule.source} for rule in all_rules()
        }
        if any(f.id.startswith("image-") for f in report.findings):  # --check-images
            from kubectl_win.images.lint import RULES

            rules.update(RULES)
        render_sarif(report.findings, rules, env.stdout, shell=env.shell)
        return
    _render_table(report, output == "wide", env, live)


def _render_table(report: ExplainReport, wide: bool, env: Env, live: bool) -> None:
    if env.stdout_isatty:
        _render_terminal(report, wide, env)
        return
    if report.findings:
        headers = (
            ["object", "path", "severity", "message"] if live else ["location", "object", "path", "severity", "message"]
        )
        if wide:
            headers = headers[:-1] + ["id", "message", "fix"]
        rows = []
        for finding in report.findings:
            location = f"{finding.file}:{finding.line}" if finding.line else (finding.file or "")
            row = [finding.object.display(), finding.path, finding.severity.upper()]
            row = row if live else [location] + row
            row += [finding.id, finding.message, finding.fix.text(env.shell)] if wide else [finding.message]
            rows.append(row)
        render_table(headers, rows, env.stdout, colour_column=2 if live else 3, colour=env.color)
        if not wide:
            print(
                "\nRun with -o wide for the fix of each finding, or 'kubectl win explain CHECK-ID' for the rule.",
                file=env.stdout,
            )
    print(("\n" if report.findings else "") + _summary(report), file=env.stdout)
    _note_no_windows(report, env)


def _render_terminal(report: ExplainReport, wide: bool, env: Env) -> None:
    """On a terminal: grouped by object, errors first, repeated checks folded, wrapped to the window."""
    from kubectl_win.explain.rules import all_rules
    from kubectl_win.output.fold import Writer, render_blocks, terminal_width

    width = terminal_width()
    writer = Writer(env.stdout, width)
    if report.findings:
        summaries = {rule.id: rule.summary for rule in all_rules()}
        render_blocks(report.findings, env.stdout, width, wide=wide, colour=env.color, title=summaries.get,
                      shell=env.shell)
        writer.blank()
        if not wide:
            writer.text("Run with -o wide for the fix of each finding and every finding of a folded check, or "
                        "'kubectl win explain CHECK-ID' for the rule.")
            writer.blank()
    writer.text(_summary(report))
    _note_no_windows(report, env)


def _summary(report: ExplainReport) -> str:
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in report.findings:
        counts[finding.severity] += 1
    from kubectl_win.output.words import counted, severity_counts

    return (
        f"{severity_counts(counts['error'], counts['warning'], counts['info'])} "
        f"in {counted(report.objects, 'object')} with a pod spec ({report.windows_objects} targeting Windows)"
    )


def _note_no_windows(report: ExplainReport, env: Env) -> None:
    if report.objects and not report.windows_objects:
        print(
            "note: no object targets Windows (spec.os.name, nodeSelector, tolerations, windowsOptions or a "
            "Windows image); add --assume-windows to check them as Windows pods",
            file=env.stderr,
        )


def render_fields(matches: list[FieldMatch], version: Version, env: Env) -> None:
    from kubectl_win.explain.field_query import status_line

    out = env.stdout
    limit = 96
    if env.stdout_isatty:
        from kubectl_win.output.fold import terminal_width

        limit = min(limit, terminal_width() - len("SOURCES  "))
    for index, match in enumerate(matches):
        rule = match.rule
        if index:
            out.write("\n")
        rows = [
            ("FIELD", ", ".join(rule.fields)),
            ("STATUS", status_line(match, version)),
            ("SUMMARY", rule.summary),
            ("WHY", rule.reason[:1].upper() + rule.reason[1:] + "."),
            ("INSTEAD", rule.instead),
            ("CHECK", rule.id if rule.check else f"{rule.id} (reference only; not checked in manifests)"),
            ("SOURCES", "; ".join(rule.sources)),
        ]
        lines = []
        for label, text in rows:  # long values wrap at 96 columns (or the terminal's), continued under the value
            wrapped = textwrap.wrap(text, width=limit, break_on_hyphens=False) or [""]
            lines += [(label, wrapped[0]), *(("", line) for line in wrapped[1:])]
        render_rows(lines, out)


def render_rule_list(output: str, version: Version, env: Env) -> None:
    from kubectl_win.explain.field_query import FieldMatch, field_payload
    from kubectl_win.explain.rules import all_rules
    from kubectl_win.versions import in_range, parse_version

    matches = [
        FieldMatch(
            rule,
            in_range(version, rule.since, rule.until),
            rule.field_since is None or version >= parse_version(rule.field_since),
        )
        for rule in all_rules()
    ]
    if output in ("json", "yaml"):
        from kubectl_win.findings import SCHEMA_VERSION
        from kubectl_win.output.structured import render_json, render_yaml

        payload = {
            "schemaVersion": SCHEMA_VERSION,
            "k8sVersion": format_version(version),
            "fields": [field_payload(m, version) for m in matches],
        }
        (render_json if output == "json" else render_yaml)(payload, env.stdout)
        return
    rows = []
    for match in matches:
        rule = match.rule
        since = rule.since if match.in_effect and match.exists else f"{rule.since} (not in {format_version(version)})"
        row = [
            rule.id,
            rule.status,
            rule.fields[0] + (f" (+{len(rule.fields) - 1})" if len(rule.fields) > 1 else ""),
            since,
            rule.summary,
        ]
        rows.append(row)
    render_table(["id", "status", "field", "since", "summary"], rows, env.stdout)
