"""Terminal layout of findings: wrapping to the window, grouping by object, errors first, folding."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_win.findings import Finding, Fix, ObjectRef
from kubectl_win.output.fold import blocks, display_path, render_blocks, wrap


def finding(check: str, severity: str, name: str, path: str = "spec.containers[0].image", message: str = "m",
            file: str | None = None, line: int | None = None, hint: str = "",
            command: tuple[str, ...] = ()) -> Finding:
    return Finding(check, severity, ObjectRef("apps/v1", "Deployment", "web", name), path, message,
                   Fix(commands=(command,) if command else (), note=hint),
                   file=file, line=line)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=90),
                max_size=12),
       st.integers(min_value=5, max_value=100))
def test_wrapped_lines_never_exceed_the_width_and_keep_every_character(words: list[str], width: int) -> None:
    text = " ".join(words)
    lines = wrap(text, width)
    assert all(len(line) <= width for line in lines)
    assert "".join("".join(lines).split()) == "".join(text.split())


def test_long_paths_break_after_a_separator() -> None:
    lines = wrap("spec.template.spec.containers[0].securityContext.windowsOptions.gmsaCredentialSpecName", 40)
    assert lines == ["spec.template.spec.containers[0].", "securityContext.windowsOptions.",
                     "gmsaCredentialSpecName"]


def test_blocks_group_by_object_errors_first_and_fold_repeated_checks() -> None:
    findings = [finding("memory", "warning", f"app-{i}") for i in range(5)]
    findings += [finding("privileged", "warning", "app-1", "spec.privileged"),
                 finding("run-as-user", "error", "app-3", "spec.runAsUser"),
                 finding("seccomp", "info", "app-3", "spec.seccomp")]
    result = blocks(findings)
    assert [(b.folded, b.severity, [f.id for f in b.findings]) for b in result] == [
        (False, "error", ["run-as-user", "seccomp"]),  # the object with an error first, its error on top
        (False, "warning", ["privileged"]),
        (True, "warning", ["memory"] * 5),  # one check on five objects: one block
    ]
    assert [len(b.findings) for b in blocks(findings, fold=False)] == [3, 1, 2, 1, 1]


def test_folding_needs_three_objects_not_three_findings() -> None:
    same_object = [finding("capabilities", "warning", "app", f"spec.containers[{i}]") for i in range(4)]
    assert [b.folded for b in blocks(same_object)] == [False]


def test_rendered_blocks_fit_the_width_and_list_folded_objects() -> None:
    findings = [finding("windows-memory-limit-missing", "warning", f"web-{i}", message="no memory limit " * 8,
                        file="/work/deploy/web.yaml", line=10 * i + 1) for i in range(4)]
    findings.append(finding("windows-privileged", "error", "agent", "spec.template.spec.containers[0]."
                            "securityContext.privileged", "privileged is rejected " * 6, file="/elsewhere/a.yaml",
                            line=3, hint="Remove privileged."))
    out = io.StringIO()
    render_blocks(findings, out, 60, fixes=True, title={"windows-memory-limit-missing": "No memory limit"}.get,
                  cwd="/work")
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 60
    assert text.startswith("web/Deployment/agent  /elsewhere/a.yaml\n  ERROR    windows-privileged  line 3\n")
    assert "fix: Remove privileged." in text
    assert "WARNING  windows-memory-limit-missing on 4 objects: No\n         memory limit\n" in text
    assert "  web/Deployment/web-3  deploy/web.yaml:31\n" in text  # relative to the working directory


def test_wide_unfolds_and_colour_marks_only_the_severity() -> None:
    findings = [finding("memory", "warning", f"app-{i}", command=("kubectl", "set", "resources", f"app-{i}"))
                for i in range(3)]
    out = io.StringIO()
    render_blocks(findings, out, 80, wide=True, colour=True)
    text = out.getvalue()
    assert text.count("\033[33mWARNING\033[0m") == 3
    assert "on 3 objects" not in text and text.count("fix:\n") == 3 and text.count("kubectl set resources app-") == 3


def test_a_folded_check_shows_the_counts_an_example_its_fix_and_how_to_unfold() -> None:
    findings = [finding("memory", "warning", f"app-{i}", f"spec.containers[{c}]", f"app-{i} container {c}: no limit",
                        command=("kubectl", "set", "resources", f"deployment/app-{i}", f"-c={c}"))
                for i in range(3) for c in range(1 + (i == 0))]
    out = io.StringIO()
    render_blocks(findings, out, 100, fixes=True, title={"memory": "No memory limit"}.get)
    assert out.getvalue().splitlines() == [
        "WARNING  memory on 3 objects (4 findings): No memory limit",
        "  web/Deployment/app-0  (2 findings)",
        "  web/Deployment/app-1",
        "  web/Deployment/app-2",
        "  e.g. app-0 container 0: no limit",
        "  fix for web/Deployment/app-0 (the others: alike):",
        "    kubectl set resources deployment/app-0 -c=0",
        "  -o wide unfolds this: each of the 4 findings with its message and fix",
    ]


def test_a_folded_check_with_one_fix_for_all_says_it_once_and_explain_shows_no_fix() -> None:
    findings = [finding("taint", "error", f"app-{i}", hint="Taint the Windows nodes.") for i in range(3)]
    out = io.StringIO()
    render_blocks(findings, out, 100, fixes=True)
    assert "  fix:\n    Taint the Windows nodes.\n" in out.getvalue()
    quiet = io.StringIO()
    render_blocks(findings, quiet, 100)  # explain's layout without -o wide: no fixes, so no fix and no example
    assert quiet.getvalue().splitlines() == ["ERROR    taint on 3 objects: m", "  web/Deployment/app-0",
                                             "  web/Deployment/app-1", "  web/Deployment/app-2"]


def test_display_path() -> None:
    assert display_path("/work/a/b.yaml", "/work") == "a/b.yaml"
    assert display_path("/etc/x.yaml", "/work") == "/etc/x.yaml"
    assert display_path("../x.yaml", "/work") == "../x.yaml"
    assert display_path("-", "/work") == "-"
