"""doctor's HTML report in a real headless Chromium: clean load, no network, visible content, hostile input inert.

Chromium comes from Debian (`.ci/run` installs it). Without it the tests skip on a developer machine and
fail under CI=true.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from tests.support.browser import Browser, Visit
from tests.support.html_reports import hostile_dump, report_html
from tests.support.paths import SAMPLE_DUMP

# Elements a report may contain; anything else (script, img, iframe, svg onload, ...) came from the cluster.
ALLOWED_TAGS = {"DIV", "HEADER", "H1", "H2", "H3", "P", "SPAN", "B", "BDI", "NAV", "A", "MAIN", "SECTION", "DL", "DT",
                "DD", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "UL", "LI", "FIGURE", "FIGCAPTION", "ARTICLE",
                "PRE", "CODE", "FOOTER", "DETAILS", "SUMMARY", "svg", "rect", "line"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("html")
    sample = folder / "sample.html"
    sample.write_text(report_html(SAMPLE_DUMP), encoding="utf-8")
    hostile_html = report_html(hostile_dump(folder))
    hostile = folder / "hostile.html"
    hostile.write_text(hostile_html, encoding="utf-8")
    # The same page without its Content-Security-Policy: escaping alone must keep it inert.
    start = hostile_html.index('<meta http-equiv="Content-Security-Policy"')
    bare = folder / "hostile-no-csp.html"
    bare.write_text(hostile_html[:start] + hostile_html[hostile_html.index(">", start) + 1:], encoding="utf-8")
    return {"sample": sample, "hostile": hostile, "hostile-no-csp": bare}


def colours(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    found = image.getcolors(maxcolors=1 << 16)
    return len(found) if found is not None else 1 << 16


def visible(visit: Visit, selector: str) -> bool:
    """The first element matching selector, scrolled into view, has a size and is inside the viewport."""
    return bool(visit.evaluate(f"""(() => {{
        const el = document.querySelector({selector!r});
        if (!el) return false;
        el.scrollIntoView({{block: 'center'}});
        const r = el.getBoundingClientRect(), s = getComputedStyle(el);
        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'
            && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
    }})()"""))


def assert_clean(visit: Visit) -> None:
    assert visit.console_errors == []
    assert visit.requests == []
    assert visit.dialogs == []


def assert_inert(visit: Visit) -> None:
    assert_clean(visit)
    assert visit.evaluate("typeof window.__kwPwned") == "undefined"
    assert visit.evaluate("document.scripts.length") == 0
    tags = set(visit.evaluate("[...document.body.querySelectorAll('*')].map(e => e.tagName)"))
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    # every element sits inside the report; nothing is positioned over it
    assert visit.evaluate("[...document.body.children].map(e => e.className)") == ["page"]
    assert visit.evaluate("""[...document.body.querySelectorAll('*')].filter(e =>
        ['fixed', 'sticky'].includes(getComputedStyle(e).position)).length""") == 0
    assert visit.evaluate("""[...document.querySelectorAll('*')].filter(e =>
        [...e.attributes].some(a => a.name.startsWith('on'))).length""") == 0
    assert visit.evaluate("[...document.links].filter(a => !a.getAttribute('href').startsWith('#')).length") == 0


def no_horizontal_overflow(visit: Visit) -> bool:
    return bool(visit.evaluate("document.documentElement.scrollWidth <= innerWidth"))


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_report_loads_cleanly_and_shows_nodes_and_findings(browser: Browser, pages: dict[str, Path],
                                                           dark: bool) -> None:
    visit = browser.open(pages["sample"], dark=dark)
    assert_clean(visit)
    shot = visit.screenshot()
    assert colours(shot) > 50  # not blank: text, badges, tables in several colours
    assert visible(visit, "table.matrix")
    assert visible(visit, "article.finding")
    assert visit.evaluate("document.querySelectorAll('table.matrix tr.node').length") == 3
    assert visit.evaluate("document.querySelector('article.finding .sev').textContent") == "error"
    background = visit.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(15, 20, 27)") is dark  # the dark scheme follows the reader's system setting
    assert no_horizontal_overflow(visit)


def test_report_is_usable_on_a_narrow_screen(browser: Browser, pages: dict[str, Path]) -> None:
    visit = browser.open(pages["sample"], width=390, height=844)
    assert_clean(visit)
    assert no_horizontal_overflow(visit)
    assert visible(visit, "table.matrix td.name")
    assert visible(visit, "article.finding pre.cmd")
    assert colours(visit.screenshot(full_page=False)) > 20


def test_report_is_readable_without_javascript(browser: Browser, pages: dict[str, Path]) -> None:
    visit = browser.open(pages["sample"], javascript=False)
    assert_clean(visit)
    assert colours(visit.screenshot(full_page=False)) > 50


@pytest.mark.parametrize("page", ["hostile", "hostile-no-csp"])
@pytest.mark.parametrize("width", [1280, 390])
def test_hostile_names_stay_inert_and_keep_the_layout(browser: Browser, pages: dict[str, Path], page: str,
                                                      width: int) -> None:
    visit = browser.open(pages[page], width=width)
    assert_inert(visit)
    visit.evaluate("document.querySelectorAll('*').forEach(e => e.dispatchEvent(new MouseEvent('mouseover')))")
    browser.drain(0.2)
    assert_inert(visit)
    assert no_horizontal_overflow(visit)
    assert visible(visit, "table.matrix")
    assert visible(visit, "article.finding")


@pytest.fixture(scope="module")
def large_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """doctor's page and JSON for a generated cluster of 1,000 nodes (200 Windows) and 30,000 pods."""
    from tests.support.cli import run_cli
    from tests.support.doctor_digests import synthetic_dump

    folder = tmp_path_factory.mktemp("large")
    dump = synthetic_dump("nodes=1000,pods=30000,windows=0.2,seed=1", folder)
    page = folder / "report.html"
    assert run_cli("doctor", "--from-dump", str(dump), "--report", str(page), "-o", "json").exit_code == 1
    return page, run_cli("doctor", "--from-dump", str(dump), "-o", "json").json


def test_a_large_cluster_report_folds_node_pools_and_stays_small(browser: Browser,
                                                                large_report: tuple[Path, dict]) -> None:
    page, report = large_report
    assert len(report["nodes"]) == 1000  # folding is presentation only
    assert page.stat().st_size <= 250_000
    visit = browser.open(page, width=1280)
    assert_clean(visit)
    assert visit.evaluate("document.querySelectorAll('tr').length") <= 60
    # Every Windows node is named in the page, pooled ones inside a closed list the browser's search opens.
    windows = [n["name"] for n in report["nodes"] if n["os"] == "windows"]
    assert visit.evaluate(f"(() => {{ const t = document.getElementById('nodes').textContent;"
                          f" return {windows!r}.filter(n => !t.includes(n)); }})()") == []
    assert visit.evaluate("document.querySelectorAll('#nodes details.pool').length") > 0
    assert visit.evaluate("document.querySelectorAll('#nodes details[open]').length") == 0
    # A node with a finding the others of its pool lack has a row of its own.
    not_ready = [f["object"]["name"] for f in report["findings"] if f["id"] == "windows-node-not-ready"]
    assert not_ready
    rows = visit.evaluate("[...document.querySelectorAll('#nodes tr.node td.name')].map(td => td.textContent)")
    for name in not_ready:
        assert any(row.startswith(name) for row in rows), name
    # Every finding's object is in the page: in full, or in its check's list.
    names = visit.evaluate("document.getElementById('findings').textContent")
    missing = [f["object"]["name"] for f in report["findings"] if f["object"]["name"] not in names]
    assert missing == []
