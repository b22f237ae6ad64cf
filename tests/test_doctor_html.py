"""`kubectl win doctor -o html` and `--report`: the page's structure, its self-containment, escaping, files."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import html5lib
import pytest

from kubectl_win.doctor.render.html import _fix, decoded_codes
from kubectl_win.findings import Fix
from kubectl_win.output.html import text
from tests.support.cli import run_cli
from tests.support.html_reports import HOSTILE, hostile_dump, report_html
from tests.support.paths import SAMPLE_DUMP

URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "poster", "srcset", "data", "background",
                  "cite", "longdesc", "manifest", "ping", "icon"}


class Elements(HTMLParser):
    """Every start tag with its attributes, the text, and the contents of <style> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)


def elements(document: str) -> Elements:
    parser = Elements()
    parser.feed(document)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def sample_html() -> str:
    return report_html(SAMPLE_DUMP)


@pytest.fixture(scope="module")
def sample_json() -> dict:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "json")
    return result.json


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    return report_html(hostile_dump(tmp_path_factory.mktemp("hostile")))


def test_report_is_well_formed_html5(sample_html: str, hostile_html: str) -> None:
    for document in (sample_html, hostile_html):
        parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
        tree = parser.parse(document)  # strict: raises on any parse error
        assert tree.find("head/title") is not None
        assert tree.find("body") is not None


def test_every_finding_and_node_of_the_dump_is_in_the_report(sample_html: str, sample_json: dict) -> None:
    page = elements(sample_html)
    articles = [a for tag, a in page.tags if tag == "article"]
    assert len(articles) == len(sample_json["findings"]) == 28
    body = "".join(page.text)
    for finding in sample_json["findings"]:
        assert finding["id"] in body
        assert finding["object"]["name"] in body
    for node in sample_json["nodes"]:
        assert node["name"] in body
    # each Windows node has a row in the matrix with its Windows Server release name above it
    assert "Windows Server 2022" in body and "Windows Server 2019" in body
    assert body.count("kubelet-too-old") >= 2  # the marked kubelet cell and the finding
    assert "4 minors behind the API server" in body


def test_problem_cells_are_marked_and_link_to_their_finding(sample_html: str) -> None:
    page = elements(sample_html)
    anchors = {a["id"] for tag, a in page.tags if tag == "article"}
    marked = [a for tag, a in page.tags if tag == "td" and (a.get("class") or "").startswith("cell-")]
    assert {a["class"] for a in marked} == {"cell-error", "cell-warning", "cell-info"}
    links = [a["href"] for tag, a in page.tags if tag == "a" and a.get("href", "").startswith("#f-")]
    assert links and all(link[1:] in anchors for link in links)


def test_report_loads_nothing_from_outside_the_file(sample_html: str, hostile_html: str) -> None:
    for document in (sample_html, hostile_html):
        page = elements(document)
        for tag, attrs in page.tags:
            assert tag not in ("script", "img", "iframe", "object", "embed", "link", "base", "form", "frame")
            for name, value in attrs.items():
                assert not name.startswith("on"), (tag, name)
                if name in URL_ATTRIBUTES:
                    assert name == "href" and (value or "").startswith("#"), (tag, name, value)
                if name == "style":
                    assert "url(" not in (value or "") and "@import" not in (value or "")
        css = "".join(page.styles)
        assert "@import" not in css and not re.search(r"url\s*\(", css)
        csp = next(a["content"] for tag, a in page.tags if tag == "meta" and a.get("http-equiv"))
        assert "default-src 'none'" in csp and "script-src" not in csp


def test_hostile_names_are_shown_as_text_not_markup(hostile_html: str) -> None:
    page = elements(hostile_html)
    body = "".join(page.text)
    assert '<script>window.__kwPwned=1;alert(1)</script>' in body  # visible, as text
    assert "javascript:alert(document.domain)//" in body
    assert "<U+202E>" in body and "<U+0007>" in body and "<U+001B>" in body and "<U+0000>" in body
    assert "\u202e" not in hostile_html and "\x07" not in hostile_html and "\x00" not in hostile_html
    assert "more characters)" in body  # the 5,000-character name is cut, not rendered whole
    assert len(hostile_html) < 400_000
    assert not any(a.get("style") and "fixed" in a["style"] for _, a in page.tags)
    assert all(hostile not in hostile_html for hostile in HOSTILE.values() if "<" in hostile)


def test_text_escapes_isolates_and_cuts() -> None:
    assert text('<a href="x">') == "<bdi>&lt;a href=&quot;x&quot;&gt;</bdi>"
    assert text("a\u202eb") == '<bdi>a<span class="ctl" title="control character">&lt;U+202E&gt;</span>b</bdi>'
    assert text("y" * 10, limit=4).startswith("<bdi>yyyy</bdi><span class=\"cut\">… (6 more characters)")


def test_fixes_render_from_the_record_prose_commands_and_judgement(sample_html: str) -> None:
    # The record's parts, not prose parsed back: each command in its own block, the note and the caveat apart.
    assert ('<pre class="cmd"><code><bdi>kubectl taint nodes win22-1 os=windows:NoSchedule</bdi></code></pre>'
            in sample_html)
    assert '<p class="prose judgement"><b>Needs your judgement:</b>' in sample_html
    fix = Fix(commands=(("kubectl", "label", "ns", "m", "x=y"), ("kubectl", "get", "ns", "m")), note="then check")
    html = _fix(fix, "powershell")
    assert html.count('<pre class="cmd">') == 2 and '<p class="prose"><bdi>Then check</bdi></p>' in html
    patch = _fix(Fix(commands=(("kubectl", "patch", "x", "-p", '{"a":"b c"}'),)), "powershell")
    assert "kubectl patch x -p &#x27;{a: b c}&#x27;" in patch or "kubectl patch x -p '{a: b c}'" in patch


def test_the_same_fix_is_shown_once_and_refers_back(sample_html: str) -> None:
    # web-frontend's pin to build 17763 comes from three checks: the command is printed once.
    command = "kubectl patch deployment web-frontend -n shop --type merge"
    assert sample_html.count(command) == 1
    assert "The same as for" in sample_html


def test_windows_codes_in_messages_are_decoded(sample_html: str) -> None:
    codes = decoded_codes("exited with -1073741515 = 0xC0000135")
    assert [(code, meaning) for code, meaning, _ in codes] == [
        ("0xC0000135 STATUS_DLL_NOT_FOUND", "a DLL the program needs is not in the image (typical of nanoserver "
                                            "images)")]
    assert decoded_codes("listening on port 8080") == []
    assert '<dl class="codes"><dt><bdi>0xC0000135 STATUS_DLL_NOT_FOUND</bdi></dt>' in sample_html
    assert "<dt><bdi>0x1392 ERROR_OBJECT_ALREADY_EXISTS</bdi></dt>" in sample_html  # the HNS event's Win32 code


def test_hns_chart_estimates_from_services_and_nodes(sample_html: str) -> None:
    body = "".join(elements(sample_html).text)
    assert "HNS load balancers" in body
    assert re.search(r"9\s*Service ports \(7 Services\)\s*×\s*3\s*Windows nodes\s*=\s*27", body)
    assert sample_html.count('<rect class="bar"') == 3


def test_hns_chart_uses_counts_read_from_the_nodes_when_present() -> None:
    from kubectl_win.doctor.render.html import render_html
    from kubectl_win.doctor.run import DoctorOptions, run_doctor

    report = run_doctor(DoctorOptions(from_dump=str(SAMPLE_DUMP)))
    report.hns = [{"node": "win22-0", "counts": {"loadBalancers": 1400}},
                  {"node": "win22-1", "counts": {"loadBalancers": 9}}, {"node": "win19-0"}]
    page = render_html(report)
    assert "read from the node" in page
    assert page.count('<rect class="bar over"') == 1 and page.count('<rect class="bar"') == 1


def test_report_without_problems_says_so(tmp_path: Path) -> None:
    from tests.support.kube_objects import node

    dump = tmp_path / "clean.json"
    win = node("win-0")
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [win]}))
    result = run_cli("doctor", "nodes", "--from-dump", str(dump), "-o", "html", "--fail-on", "never")
    assert result.exit_code == 0
    assert "win-0" in result.stdout and "No problems found" in result.stdout
    assert "Skipped (" in result.stdout and "the dump does not record the API server version" in result.stdout


def test_report_flag_writes_the_page_and_keeps_the_table_on_stdout(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(target))
    assert result.exit_code == 1
    assert result.stdout.startswith("Node/win22-0\n  ERROR    kubelet-too-old")
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert os.listdir(target.parent) == ["report.html"]  # written atomically: no temporary file left


def test_output_html_with_report_writes_only_the_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "-o", "html", "--report", str(target))
    assert (result.exit_code, result.stdout) == (1, "")
    assert "</html>" in target.read_text(encoding="utf-8")


def test_report_never_overwrites_without_force(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("keep me")
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(target))
    assert result.exit_code == 2
    assert result.stderr == f"error: {target} already exists (use --force to overwrite)\n"
    assert result.stdout == ""
    assert target.read_text() == "keep me"
    forced = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(target), "--force")
    assert forced.exit_code == 1
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("args, message", [
    (["--force"], "--force only applies to --report PATH and --save-dump PATH"),
    (["--report", str(SAMPLE_DUMP)],
     f"--report {SAMPLE_DUMP} is the same file as --from-dump {SAMPLE_DUMP}; name another file"),
])
def test_report_flag_usage_errors(args: list[str], message: str) -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), *args)
    assert result.exit_code == 2
    assert result.stderr == f"error: {message}\n"


def test_report_into_a_missing_folder_is_one_error_line(tmp_path: Path) -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--report", str(tmp_path / "nope" / "r.html"))
    assert result.exit_code == 2
    assert result.stderr == f"error: --report {tmp_path}/nope/r.html: folder {tmp_path}/nope does not exist\n"


def test_live_cluster_report_matches_the_json_report(apiserver, tmp_path: Path) -> None:  # noqa: ANN001
    for item in json.loads(SAMPLE_DUMP.read_text())["items"]:
        apiserver.put(item)
    target = tmp_path / "live.html"
    kube = ["--kubeconfig", str(apiserver.kubeconfig)]
    result = run_cli("doctor", *kube, "-o", "json", "--report", str(target))
    assert result.exit_code == 1 and result.stderr == ""
    document = target.read_text(encoding="utf-8")
    html5lib.HTMLParser(strict=True).parse(document)
    page = elements(document)
    assert len([1 for tag, _ in page.tags if tag == "article"]) == len(result.json["findings"])
    body = "".join(page.text)
    assert "live cluster" in body and result.json["cluster"]["serverVersion"] in body
    assert all(node["name"] in body for node in result.json["nodes"])
    assert {method for method, _ in apiserver.server.requests} == {"GET"}


def test_pools_on_a_retiring_windows_server_are_a_move_table() -> None:
    from kubectl_win.doctor.checks.plan import run_checks
    from kubectl_win.doctor.render.html import render_html
    from kubectl_win.doctor.render.report import DoctorReport
    from tests.support.kube_objects import node, snapshot_of

    aks = {"kubernetes.azure.com/cluster": "mc_rg_prod", "kubernetes.azure.com/agentpool": "win19"}
    snapshot = snapshot_of(node("linux-0", os="linux"), node("win-a", build=17763, labels=aks),
                           node("win-b", build=17763, labels=aks))
    html = render_html(DoctorReport.build(snapshot, run_checks(snapshot), "cluster"))
    section = html.split('id="move"', 1)[1].split("</section>", 1)[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", section)
    assert [re.sub(r"<[^>]+>", "", c) for c in cells[:3]] == ["AKS", "win19", "win-a, win-b"]
    assert "retired 2026-03-01" in section and "Windows Server 2025 (10.0.26100)" in section
    assert 'href="#f-' in section and '<a href="#move">' in html
    assert 'id="move"' not in render_html(DoctorReport.build(snapshot_of(node("win-0")), [], "cluster"))


def test_sections_for_a_shared_page_prefix_every_id_and_in_page_link() -> None:
    from kubectl_win.doctor.render.html import render_sections
    from kubectl_win.doctor.run import DoctorOptions, run_doctor

    report = run_doctor(DoctorOptions(from_dump=str(SAMPLE_DUMP)))
    report.hns = [{"node": n.name, "counts": {"loadBalancers": 7}} for n in report.nodes if n.windows]
    sections = render_sections(report, id_prefix="c9-")
    ids = re.findall(r'\bid="([^"]*)"', sections)
    references = re.findall(r'\b(?:href="#|aria-describedby=")([^"]*)"', sections)
    assert {"c9-summary", "c9-nodes", "c9-hns", "c9-hns-cap", "c9-findings", "c9-skipped"} <= set(ids)
    assert all(i.startswith("c9-") for i in ids + references)
    assert set(references) <= set(ids)  # every link lands on this report's part of the page
