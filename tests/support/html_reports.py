"""Reports for the HTML tests: the bundled sample cluster, and the same cluster with hostile names.

The hostile dump is the sample dump with names, namespaces, runtime versions and event messages replaced
(consistently, so every reference still resolves) by text that would run script, load something, reorder
or hide text, or stretch the layout if a report put it into the page unescaped. Each payload that could
run sets `window.__kwPwned` or opens a dialog, which the browser test looks for.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP

LONG = "x" * 40 + "-no-break-" * 500  # 5,040 characters without a space
HOSTILE = {
    "win22-1": 'win22-1"><script>window.__kwPwned=1;alert(1)</script><b title=\'',
    "win19-0": "\u202ewin19-0\u200f\u0007\u001b[31m\u0000<svg onload=\"window.__kwPwned=2\">",
    "win22-0": "win22-0-" + LONG,
    "shop": "shop</style><img src=x onerror=\"window.__kwPwned=3;alert(3)\"><link rel=stylesheet href=//e.test/x.css>",
    "monitoring": "javascript:alert(document.domain)//",
    "node-exporter": "node-exporter' onmouseover='window.__kwPwned=4' style='position:fixed;inset:0",
    "containerd://1.7.22": "containerd://1.7.22<iframe src=\"javascript:window.__kwPwned=5\"></iframe>",
    "hcnCreateEndpoint failed": "hcnCreateEndpoint failed <a href=\"javascript:window.__kwPwned=6\">click</a>"
                                " @import url(https://e.test/a.css); \u202egnp.exe",
}


def hostile_dump(folder: Path) -> Path:
    raw = SAMPLE_DUMP.read_text(encoding="utf-8")
    for plain, hostile in HOSTILE.items():
        raw = raw.replace(json.dumps(plain)[1:-1], json.dumps(hostile)[1:-1])
    path = folder / "hostile-dump.json"
    path.write_text(raw, encoding="utf-8")
    return path


def report_html(dump: Path, *args: str) -> str:
    result = run_cli("doctor", "--from-dump", str(dump), "-o", "html", *args)
    assert result.exit_code == 1, result.stderr
    assert result.stderr == ""
    return result.stdout
