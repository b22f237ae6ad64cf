"""doctor's fleet page (several clusters, `-o html`) in a real headless Chromium: one row per cluster linking to
its report, every cluster's report on the page with ids that do not collide, hostile cluster text inert.

The clusters come from dumps (the sample and its hostile twin) and a failed scan whose context name and error
carry markup; the page is what `kubectl win doctor --context ... -o html` writes for them. Chromium as in
test_doctor_html_browser.py: missing, the tests skip on a developer machine and fail under CI=true.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kubectl_win.doctor.run import DoctorOptions, run_doctor
from kubectl_win.fleet.html import HtmlRenderer
from kubectl_win.fleet.render import FleetOutput, render_fleet
from kubectl_win.fleet.scan import ClusterScan
from tests.support.browser import Browser
from tests.support.html_reports import hostile_dump
from tests.support.paths import SAMPLE_DUMP
from tests.test_doctor_html_browser import assert_inert, no_horizontal_overflow, visible

HOSTILE_CONTEXT = '<img src=x onerror="window.__kwPwned=7">prod\u202e'


def fleet_page(folder: Path) -> str:
    scans = [
        ClusterScan("eu", "https://eu.example:6443", run_doctor(DoctorOptions(from_dump=str(SAMPLE_DUMP))), index=0),
        ClusterScan(HOSTILE_CONTEXT, "https://x.example\"><script>window.__kwPwned=8</script>",
                    run_doctor(DoctorOptions(from_dump=str(hostile_dump(folder)))), index=1),
        ClusterScan("gone", None, None, 'cannot connect: <a href="javascript:window.__kwPwned=9">x</a>', 3, index=2),
    ]
    out = io.StringIO()
    render_fleet(iter([scans[2], scans[0], scans[1]]), [HtmlRenderer(FleetOutput(out, "html"))], "error")
    return out.getvalue()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet-html")
    path = folder / "fleet.html"
    path.write_text(fleet_page(folder), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", [1280, 390])
def test_fleet_page_lists_every_cluster_and_links_to_its_report(browser: Browser, page: Path,
                                                                width: int) -> None:
    visit = browser.open(page, width=width)
    assert_inert(visit)
    assert no_horizontal_overflow(visit)
    assert visible(visit, "table.fleet")
    rows = visit.evaluate("[...document.querySelectorAll('table.fleet tbody tr')].map(r => r.cells[0].innerText)")
    assert [row.split("\n")[0] for row in rows] == ["eu", "<img src=x onerror=\"window.__kwPwned=7\">prod<U+202E>",
                                                    "gone"]
    assert visit.evaluate("document.querySelector('table.fleet tr.unreadable').innerText").count("could not be read")
    # Each row links to a report on the page; the reports' own ids are prefixed and unique.
    targets = visit.evaluate("[...document.querySelectorAll('table.fleet a')].map(a => a.getAttribute('href'))")
    assert targets == ["#c1", "#c2", "#c3"]
    assert visit.evaluate("[...document.querySelectorAll('a[href^=\"#\"]')].every(a => "
                          "document.getElementById(a.getAttribute('href').slice(1)))")
    ids = visit.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))
    assert visit.evaluate("document.querySelectorAll('section.cluster').length") == 3
    assert visit.evaluate("document.querySelectorAll('#c1 table.matrix tr.node').length") == 3
    assert visible(visit, "#c2 article.finding")
