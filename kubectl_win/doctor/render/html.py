"""doctor's report as one self-contained HTML page (`-o html`, `--report PATH`).

Sections: a cluster summary, the Windows node matrix (one row per pool of nodes alike but for their names,
grouped by build, problem cells marked and linked to their findings; the names folded in the row), the HNS
load-balancer cost of the Services, the findings grouped by area and severity with their fix commands (the
first EXAMPLES of each check in full, the rest listed by object), and what was skipped. All cluster text goes through
`kubectl_win.output.html.text`/`plain`; ids and anchors are built from indexes, never from cluster text.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kubectl_win import __version__, builds
from kubectl_win.catalog import doctor_checks
from kubectl_win.doctor.checks import knowledge
from kubectl_win.doctor.grouping import NodePool, node_pools
from kubectl_win.doctor.records import NodeRecord
from kubectl_win.doctor.render.report import DoctorReport
from kubectl_win.findings import SEVERITY_RANK, Finding, Fix, Severity
from kubectl_win.output.fix_lines import fix_key
from kubectl_win.output.html import page, plain, text
from kubectl_win.versions import parse_version

SEVERITIES = tuple(reversed(Severity))  # worst first
SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("info", "info")}
MARKS = {"error": "✖", "warning": "▲", "info": "●"}

# Which node-matrix column a node finding belongs to; any other finding on a node goes to "other".
NODE_COLUMNS: dict[str, tuple[str, ...]] = {
    "build": ("windows-build-unsupported", "windows-build-unknown", "windows-build-label-mismatch",
              "windows-build-label-missing"),
    "runtime": ("runtime-docker", "runtime-containerd-outdated", "runtime-unknown"),
    "kubelet": ("kubelet-too-old", "kubelet-newer-than-apiserver"),
    "ready": ("windows-node-not-ready", "windows-node-cordoned", "windows-node-network-unavailable"),
    "taints": ("windows-node-untainted",),
    "update": ("windows-update-known-problem", "windows-updates-behind", "windows-revision-spread"),
}
AREA_TITLES = {
    "nodes": "Nodes", "runtime": "Container runtime", "skew": "Version skew", "placement": "Scheduling and placement",
    "images": "Images and Windows builds", "memory": "Memory", "network": "Networking", "storage": "Storage",
    "gmsa": "gMSA and HostProcess", "patches": "Windows updates", "events": "Events and container states",
    "hns": "HNS on the nodes",
    "pods": "Pod fields Windows rejects or ignores",
}


def render_html(report: DoctorReport, source: str = "", now: datetime | None = None, shell: str = "posix") -> str:
    """The whole page. `source` says where the data came from (a dump's file name, a context)."""
    generated = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    counts = Counter(f.severity for f in report.findings)
    title = "kubectl-win doctor: " + (_count_words(counts) or "no problems found")
    if report.server_version:
        title += f" ({report.server_version})"
    body = (
        '<div class="page">\n'
        + _masthead(report, source, generated, counts)
        + _toc(report)
        + '<main>\n' + render_sections(report, shell) + "</main>\n"
        + f'<footer>kubectl-win {text(__version__)} · generated {text(generated)} · doctor only reads the '
        "cluster; every fix above is a suggestion to review before you run it.</footer>\n"
        "</div>\n"
    )
    return page(title, body)


def render_sections(report: DoctorReport, shell: str = "posix", id_prefix: str = "") -> str:
    """The report's sections (the page's <main>). Every element id and in-page link starts with `id_prefix`, so
    several reports can share one page (the fleet page gives each cluster its own)."""
    anchors = {id(f): f"{id_prefix}f-{index}" for index, f in enumerate(report.findings, 1)}
    for tail in _folded(report.findings):  # links to a folded finding go to its list
        for f in tail[1:]:
            anchors[id(f)] = anchors[id(tail[0])]
    sections = [
        _summary(report, id_prefix),
        _node_matrix(report, anchors, id_prefix),
        _move(report, anchors, id_prefix),
        _hns(report, id_prefix),
        _findings(report, anchors, shell, id_prefix),
        _skipped(report, id_prefix),
    ]
    return "".join(s for s in sections if s)


# -- masthead and summary ------------------------------------------------------------------------------

def _count_words(counts: Counter[str]) -> str:
    parts = []
    for severity in SEVERITIES:
        n = counts.get(severity, 0)
        if n:
            one, many = SEVERITY_WORDS[severity]
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts)


def _masthead(report: DoctorReport, source: str, generated: str, counts: Counter[str]) -> str:
    worst = next((s for s in SEVERITIES if counts.get(s)), None)
    verdict_class = worst if worst in ("error", "warning") else "ok"
    verdict = _count_words(counts) if worst else ("Incomplete" if report.unread() else "No problems found")
    scope = {"cluster": "whole cluster", "nodes": "Windows nodes", "workloads": "workloads"}.get(report.scope,
                                                                                               report.scope)
    meta = [f"<span>API server <b>{text(report.server_version or 'unknown')}</b></span>",
            f"<span>scope <b>{text(scope)}</b></span>"]
    if source:
        meta.append(f"<span>source <b>{text(source)}</b></span>")
    meta.append(f"<span>generated <b>{text(generated)}</b></span>")
    return (
        '<header class="masthead">\n<div>\n'
        f'<div class="brand">{_logo()} kubectl win doctor</div>\n'
        "<h1>Windows nodes health report</h1>\n"
        f'<p class="meta">{"".join(meta)}</p>\n'
        "</div>\n"
        f'<div class="verdict {verdict_class}">{text(verdict)}</div>\n'
        "</header>\n"
    )


def _logo() -> str:
    return ('<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">'
            '<rect x="1" y="1" width="6.5" height="6.5" rx="1" fill="currentColor"/>'
            '<rect x="8.5" y="1" width="6.5" height="6.5" rx="1" fill="currentColor" opacity=".75"/>'
            '<rect x="1" y="8.5" width="6.5" height="6.5" rx="1" fill="currentColor" opacity=".75"/>'
            '<rect x="8.5" y="8.5" width="6.5" height="6.5" rx="1" fill="currentColor" opacity=".5"/></svg>')


def _toc(report: DoctorReport) -> str:
    links = [("summary", "Summary"), ("nodes", "Windows nodes")]
    if report.server_moves():
        links.append(("move", "Windows Server move"))
    if _hns_applies(report):
        links.append(("hns", "HNS load balancers"))
    links.append(("findings", f"Findings ({len(report.findings)})"))
    links.append(("skipped", f"Skipped ({len(report.skipped)})"))
    return '<nav class="toc">' + "".join(f'<a href="#{a}">{text(t)}</a>' for a, t in links) + "</nav>\n"


def _summary(report: DoctorReport, id_prefix: str) -> str:
    counts = Counter(f.severity for f in report.findings)
    windows = [n for n in report.nodes if n.windows]
    cards = []
    for severity in SEVERITIES:
        n = counts.get(severity, 0)
        label = {"error": "Errors", "warning": "Warnings", "info": "Info"}[severity]
        cards.append(f'<div class="card {severity}{" zero" if not n else ""}"><div class="num">{n}</div>'
                     f'<div class="label">{label}</div></div>')
    cards.append(f'<div class="card nodes"><div class="num">{len(windows)}</div><div class="label">Windows nodes</div>'
                 f'<div class="detail">of {len(report.nodes)} nodes</div></div>')
    if report.scope != "nodes":
        cards.append(f'<div class="card nodes"><div class="num">{report.counts.get("pods", 0):,}</div>'
                     '<div class="label">Pods scanned</div></div>')
    facts = [("API server", _chips([(report.server_version or "unknown (not in the dump)", None)]))]
    by_os = Counter(n.os or "unknown" for n in report.nodes)
    facts.append(("Nodes by OS", _chips(sorted(by_os.items(), key=lambda kv: (-kv[1], kv[0])))))
    if windows:
        by_build = Counter(_build_name(n) for n in windows)
        facts.append(("Windows builds", _chips(sorted(by_build.items(), key=lambda kv: (-kv[1], kv[0])))))
    runtimes = Counter(_runtime_text(n) for n in report.nodes)
    facts.append(("Runtimes", _chips(sorted(runtimes.items(), key=lambda kv: (-kv[1], kv[0])))))
    kubelets = Counter(n.kubelet_version or "unknown" for n in report.nodes)
    facts.append(("Kubelets", _chips(sorted(kubelets.items(), key=lambda kv: (-kv[1], kv[0])))))
    dl = "".join(f"<dt>{text(k)}</dt><dd>{v}</dd>" for k, v in facts)
    return (
        f'<section class="block" id="{id_prefix}summary">\n<h2>Cluster summary</h2>\n'
        f'<div class="cards">{"".join(cards)}</div>\n'
        f'<dl class="facts">{dl}</dl>\n</section>\n'
    )


def _chips(items: Iterable[tuple[str, int | None]]) -> str:
    out = []
    for label, n in items:
        count = f'<span class="n">{n}</span>' if n is not None else ""
        out.append(f'<span class="chip">{text(label, 200)}{count}</span>')
    return "".join(out)


def _build_name(node: NodeRecord) -> str:
    known = builds.build_of(node.build_number)
    if known:
        return f"{known.name} ({known.build})"
    return f"build {node.windows_build}" if node.windows_build else "unknown build"


def _runtime_text(node: NodeRecord) -> str:
    if node.runtime:
        return f"{node.runtime} {node.runtime_release}".strip()
    return node.runtime_version or "unknown"


# -- node matrix ---------------------------------------------------------------------------------------

def _node_matrix(report: DoctorReport, anchors: dict[int, str], id_prefix: str) -> str:
    windows = [n for n in report.nodes if n.windows]
    head = f'<section class="block" id="{id_prefix}nodes">\n'
    if not windows:
        return head + ("<h2>Windows nodes</h2>\n<p class=\"muted\">The cluster has no Windows nodes "
                       "(no node is labelled kubernetes.io/os=windows).</p>\n" + _other_nodes(report) + "</section>\n")
    column_of = {check: column for column, checks in NODE_COLUMNS.items() for check in checks}
    groups: dict[int | None, list[NodePool]] = defaultdict(list)
    for pool in node_pools(windows, report.findings):
        groups[pool.first.build_number].append(pool)
    rows = []
    for number in sorted(groups, key=lambda b: (b is None, -(b or 0))):
        pools = groups[number]
        rows.append(_build_row(number, [n for pool in pools for n in pool.nodes]))
        for pool in pools:
            cells: dict[str, list[Finding]] = defaultdict(list)
            for f in pool.findings:
                cells[column_of.get(f.id, "other")].append(f)
            rows.append(_node_row(pool, report.server_version, cells, anchors, report.patches.get(pool.first.name)))
    problems = sum(len(pool.nodes) for pools in groups.values() for pool in pools if pool.findings)
    sub = f"{len(windows)} node{'s' if len(windows) != 1 else ''}, {problems} with findings"
    if len(windows) > len(rows) - len(groups):
        sub += "; nodes alike but for their names share a row"
    from kubectl_win import platforms

    where = platforms.platform(platforms.of_cluster(n.platform for n in report.nodes))
    sub += f"; platform: {where.name}" + ("" if where.specific else " (no platform marker: read as kubeadm)")
    return (
        head + f'<h2>Windows nodes <span class="sub">{text(sub)}</span></h2>\n'
        '<div class="scroll"><table class="matrix">\n<thead><tr><th scope="col">Node</th><th scope="col">Build</th>'
        '<th scope="col">Update</th><th scope="col">Runtime</th><th scope="col">Kubelet</th><th scope="col">Ready</th>'
        '<th scope="col">Taints</th><th scope="col">Other findings</th></tr></thead>\n<tbody>\n'
        + "".join(rows) + "</tbody></table></div>\n" + _other_nodes(report) + "</section>\n"
    )


def _build_row(number: int | None, nodes: list[NodeRecord]) -> str:
    known = builds.build_of(number)
    if known:
        tag = ('<span class="tag supported">supported</span>' if known.supported
               else '<span class="tag unsupported">out of support</span>')
        release = f" · version {known.release}" if known.release else ""
        image = f" · images {known.label}" if known.image_tags else ""
        details = f"· build {known.build}{text(release)}{text(image)}"
        label = f'{text(known.name)} <span class="muted">{details}</span>{tag}'
    else:
        version = nodes[0].windows_build or "unknown"
        label = f"Windows build {text(version)} <span class=\"tag\">not in kubectl-win's build list</span>"
    count = f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}"
    return (f'<tr class="build"><th colspan="8" scope="rowgroup">{label} <span class="muted">· {count}</span>'
            "</th></tr>\n")


def _update_html(patch: Any) -> str:
    """The node's update: its KB and month, then how many monthly updates it is behind the newest known."""
    if patch is None:
        return '<span class="none">unknown</span>'
    if patch.newer_than_data:
        return text("newer than this release knows")
    kb, month = patch.kb_text(), patch.month()
    first = " · ".join(part for part in (kb, month) if part) or "not in the update history"
    behind = patch.behind_text()
    second = (f"{behind} monthly update{'s' if behind != '1' else ''} behind" if behind not in (None, "0")
              else ("up to date with the newest known" if behind == "0" else ""))
    if patch.estimated:
        second += f" ({patch.estimated} estimated from the monthly release cadence)"
    return text(first, 100) + (f'<span class="line2">{text(second, 100)}</span>' if second else "")


def _node_row(pool: NodePool, server: str | None, cells: dict[str, list[Finding]],
              anchors: dict[int, str], patch: Any = None) -> str:
    node = pool.first
    if len(pool.nodes) == 1:
        who = text(node.name, 253)
    else:  # the names stay in the page, folded: the browser's find-in-page opens the list
        who = (f'{len(pool.nodes)} nodes <details class="pool"><summary>names</summary>'
               f'<span class="names">{text(", ".join(n.name for n in pool.nodes), 1_000_000)}</span></details>')
    name = f'<td class="name" data-label="Node">{who}' \
           f'<span class="line2">{text(node.os_image or "unknown OS image", 200)}</span></td>'
    build = f"{node.kernel_version or 'unknown kernel'}"
    label = node.build_label
    build_html = text(build, 100) + (f'<span class="line2">label {text(label, 100)}</span>' if label
                                     else '<span class="line2">no windows-build label</span>')
    runtime = text(_runtime_text(node), 200)
    kubelet = text(node.kubelet_version or "unknown", 100) + f'<span class="line2">{text(_skew(node, server))}</span>'
    ready = "Ready" if node.ready else ("NotReady" if node.ready is False else "Unknown")
    if node.unschedulable:
        ready += ", cordoned"
    taints = "".join(f'<span class="taint">{text(t.text(), 300)}</span>' for t in node.taints) or \
        '<span class="none">none</span>'
    parts = [
        name,
        _cell("Build", build_html, cells.get("build"), anchors),
        _cell("Update", _update_html(patch), cells.get("update"), anchors),
        _cell("Runtime", runtime, cells.get("runtime"), anchors),
        _cell("Kubelet", kubelet, cells.get("kubelet"), anchors),
        _cell("Ready", text(ready), cells.get("ready"), anchors),
        _cell("Taints", taints, cells.get("taints"), anchors),
        _cell("Other findings", "" if cells.get("other") else '<span class="none">none</span>', cells.get("other"),
              anchors),
    ]
    return '<tr class="node">' + "".join(parts) + "</tr>\n"


def _cell(label: str, content: str, findings: list[Finding] | None, anchors: dict[int, str]) -> str:
    if not findings:
        return f'<td data-label="{label}">{content}</td>'
    worst = max(findings, key=lambda f: SEVERITY_RANK[f.severity]).severity
    why = "".join(
        f'<span class="why"><span class="mark" aria-hidden="true">{MARKS[f.severity]}</span>'
        f'<span class="sr">{f.severity}: </span><a href="#{anchors[id(f)]}" title="{plain(f.message)}">'
        f"{text(f.id, 100)}</a></span>" for f in findings)
    return f'<td class="cell-{worst}" data-label="{label}">{content}{why}</td>'


def _skew(node: NodeRecord, server: str | None) -> str:
    try:
        kubelet = parse_version(node.kubelet_version)
        api = parse_version(server or "")
    except ValueError:
        return "skew unknown"
    if kubelet[0] != api[0]:
        return "other major version"
    behind = api[1] - kubelet[1]
    if behind == 0:
        return "same minor as the API server"
    if behind < 0:
        return f"{-behind} minor{'s' if behind < -1 else ''} newer than the API server"
    return f"{behind} minor{'s' if behind > 1 else ''} behind the API server"


def _other_nodes(report: DoctorReport) -> str:
    others = [n for n in report.nodes if not n.windows]
    if not others:
        return ""
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for n in others:
        ready = "Ready" if n.ready else ("NotReady" if n.ready is False else "Unknown")
        groups[(n.os or "unknown OS", n.os_image, _runtime_text(n), n.kubelet_version or "unknown", ready)].append(
            n.name)
    items = []
    for key, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        os_name, image, runtime, kubelet, ready = key
        what = " · ".join(x for x in (image or os_name, runtime, f"kubelet {kubelet}", ready) if x)
        shown = ", ".join(sorted(names))
        items.append(f'<li><b>{len(names)}</b> × {text(what, 400)} <details class="pool"><summary>names</summary>'
                     f'<span class="names">{text(shown, 1_000_000)}</span></details></li>')
    return (f'<div class="others">Other nodes ({len(others)}), not Windows:<ul>' + "".join(items) + "</ul></div>\n")


# -- the Windows Server move ---------------------------------------------------------------------------

def _move(report: DoctorReport, anchors: dict[int, str], id_prefix: str) -> str:
    moves = report.server_moves()
    if not moves:
        return ""
    finding_of = {f.object.name: f for f in report.findings if f.id == "windows-os-retiring"}
    rows = []
    for move in moves:
        pool, number, entry, nodes = move.pool, move.build, move.entry, move.nodes
        info = builds.build_of(number)
        target = builds.resolve_build(str(entry["move_to"]))
        finding = finding_of.get(nodes[0].name)
        link = f' <a href="#{anchors[id(finding)]}">finding</a>' if finding is not None else ""
        when = ("retired " if move.status == "retired" else "retires ") + str(entry["date"])
        rows.append(
            f"<tr><td>{text(move.platform)}</td><td>{text(pool or '—')}</td>"
            f"<td>{text(', '.join(n.name for n in nodes), 4000)}</td>"
            f"<td>{text(info.display() if info else f'build {number}')}</td>"
            f'<td class="cell-warning">{text(when)}</td>'
            f"<td>{text(target.display())}{link}</td></tr>\n")
    return (
        f'<section class="block" id="{id_prefix}move">\n<h2>Windows Server move <span class="sub">pools on a '
        'retired or retiring Windows Server</span></h2>\n'
        '<div class="scroll"><table class="matrix">\n<thead><tr><th scope="col">Platform</th><th scope="col">Pool</th>'
        '<th scope="col">Nodes</th><th scope="col">Windows Server</th><th scope="col">Date</th>'
        '<th scope="col">Move to</th></tr></thead>\n<tbody>\n' + "".join(rows) + "</tbody></table></div>\n"
        '<p class="muted">Which images block the move: '
        f"<code>{text('kubectl win images --target-build ' + str(moves[0].entry['move_to']) + ' -A')}</code>.</p>\n"
        "</section>\n"
    )


# -- HNS load balancers --------------------------------------------------------------------------------

def _hns_applies(report: DoctorReport) -> bool:
    return report.scope != "nodes" and any(n.windows for n in report.nodes)


def _hns(report: DoctorReport, id_prefix: str) -> str:
    if not _hns_applies(report):
        return ""
    windows = sorted(n.name for n in report.nodes if n.windows)
    head = (f'<section class="block" id="{id_prefix}hns">\n<h2>HNS load balancers <span class="sub">every Service '
            "becomes a load balancer in the Host Networking Service of every Windows node</span></h2>\n")
    measured = report.hns_load_balancers()
    if not report.services_read and measured is None:
        reason = next((s.reason for s in report.skipped if s.resource == "services"), "")
        return head + ('<p class="muted">Services were not read' + (f" ({text(reason)})" if reason else "")
                       + ", so the load-balancer cost is unknown.</p>\n</section>\n")
    warn_at = int(knowledge("service_ports_warn_at"))
    per_node = report.service_ports
    total = per_node * len(windows)
    equation = (
        '<div class="equation">'
        f'<div class="term"><b>{per_node:,}</b><span>Service ports ({report.services:,} Services)</span></div>'
        '<div class="op">×</div>'
        f'<div class="term"><b>{len(windows):,}</b><span>Windows nodes</span></div>'
        '<div class="op eq">=</div>'
        f'<div class="term total"><b>{total:,}</b><span>HNS load balancers kube-proxy keeps in sync</span></div>'
        + (f'<div class="term"><b>{sum(measured.values()):,}</b><span>read from {len(measured)} node'
           f'{"s" if len(measured) != 1 else ""}\' HNS</span></div>' if measured else "")
        + "</div>\n"
    )
    if measured is not None:
        bars = sorted(measured.items(), key=lambda kv: (-kv[1], kv[0]))
        caption = ("Load balancers each node's HNS holds (read from the node). A node far from the others has "
                   "stale or missing policies.")
    elif len(windows) <= 12:
        bars = [(name, per_node) for name in windows]
        caption = ("Estimated from the Services: kube-proxy (winkernel) programs one HNS load balancer per "
                   "Service port on each Windows node.")
    else:
        bars = [(f"each of {len(windows):,} nodes", per_node)]
        caption = "Estimated from the Services: the same count on every Windows node."
    caption += (f" The dashed line marks {warn_at:,} ports per node, where kube-proxy syncs on Windows become slow "
                "(network congestion and slow deployments).")
    return head + equation + _bar_chart(bars, warn_at, caption, f"{id_prefix}hns-cap") + "</section>\n"


def _bar_chart(bars: list[tuple[str, int]], limit: int, caption: str, caption_id: str, max_rows: int = 40) -> str:
    """Horizontal bars, one row each: the label and value are HTML (readable at any width), the bar and
    the dashed limit line inline SVG stretched to the row."""
    shown = bars[:max_rows]
    scale_max = max([limit] + [v for _, v in shown]) * 1.08 or 1
    x_limit = 1000 * limit / scale_max
    rows = ['<div class="lbl"></div>'
            f'<div class="scale"><span style="position:absolute;left:0">0</span>'
            f'<span style="position:absolute;left:{x_limit / 10:.1f}%;transform:translateX(-50%)">{limit:,}</span>'
            "</div><div></div>"]
    for name, value in shown:
        width = max(6.0, 1000 * value / scale_max)
        over = " over" if value >= limit else ""
        rows.append(
            f'<div class="lbl" title="{plain(name)}">{text(name, 253)}</div>'
            '<svg viewBox="0 0 1000 30" preserveAspectRatio="none" aria-hidden="true">'
            '<rect class="track" x="0" y="6" width="1000" height="18"/>'
            f'<rect class="bar{over}" x="0" y="6" width="{width:.1f}" height="18"/>'
            f'<line class="limit" x1="{x_limit:.1f}" y1="0" x2="{x_limit:.1f}" y2="30" '
            'vector-effect="non-scaling-stroke"/></svg>'
            f'<div class="val">{value:,}</div>')
    more = f" ({len(bars) - max_rows} more nodes not drawn.)" if len(bars) > max_rows else ""
    return (f'<figure class="chart" aria-describedby="{caption_id}"><div class="rows">{"".join(rows)}</div>'
            f'<figcaption id="{caption_id}">{text(caption + more)}</figcaption></figure>\n')


# -- findings ------------------------------------------------------------------------------------------

# Findings of one check shown in full in each area; the page lists the rest by object (a 30,000-pod cluster's
# thousands of findings would make a page too large to share; -o json keeps every one).
EXAMPLES = 3

def _area(finding: Finding) -> str:
    info = doctor_checks().get(finding.id)
    return info.area if info else "pods"


def _findings(report: DoctorReport, anchors: dict[int, str], shell: str, id_prefix: str) -> str:
    head = f'<section class="block" id="{id_prefix}findings">\n'
    incomplete = report.incomplete_text()
    if incomplete and not report.findings:
        return head + f'<h2>Findings</h2>\n<div class="incomplete">{text(incomplete)}</div>\n</section>\n'
    if incomplete:
        head += f'<div class="incomplete">{text(incomplete)}</div>\n'
    elif not report.findings:
        return head + ('<h2>Findings</h2>\n<div class="clean"><span aria-hidden="true">✔</span> No problems found: '
                       "every check passed.</div>\n</section>\n")
    areas: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        areas[_area(f)].append(f)
    order = list(AREA_TITLES)

    def area_key(item: tuple[str, list[Finding]]) -> tuple[Any, ...]:
        name, items = item
        severity = Counter(f.severity for f in items)
        return (-severity["error"], -severity["warning"], order.index(name) if name in order else len(order), name)

    sections = []
    shown: dict[tuple[object, ...], tuple[str, str]] = {}  # fix -> (object, anchor) it was first shown under
    for name, items in sorted(areas.items(), key=area_key):
        items = sorted(items, key=lambda f: -SEVERITY_RANK[f.severity])  # stable: keeps doctor's order inside
        counts = Counter(f.severity for f in items)
        pills = "".join(f'<span class="pill {s}">{counts[s]} {SEVERITY_WORDS[s][counts[s] != 1]}</span>'
                        for s in SEVERITIES if counts.get(s))
        title = AREA_TITLES.get(name, name.replace("-", " ").capitalize())
        articles = []
        for members in _by_check(items).values():
            articles.extend(_finding(f, anchors[id(f)], shell, shown) for f in members[:EXAMPLES])
            if len(members) > EXAMPLES:
                articles.append(_more(members[EXAMPLES:], anchors[id(members[EXAMPLES])]))
        sections.append(f'<section class="area"><h3>{text(title)} <span class="counts">{pills}</span></h3>\n'
                        + "".join(articles) + "</section>\n")
    counts = Counter(f.severity for f in report.findings)
    return (head + f'<h2>Findings <span class="sub">{text(_count_words(counts))}, grouped by area</span></h2>\n'
            + "".join(sections) + "</section>\n")


def _by_check(findings: Iterable[Finding]) -> dict[tuple[str, str], list[Finding]]:
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.id, f.severity), []).append(f)
    return groups


def _folded(findings: Iterable[Finding]) -> list[list[Finding]]:
    """The findings of each check past its first EXAMPLES, which the page lists by object only."""
    return [members[EXAMPLES:] for members in _by_check(findings).values() if len(members) > EXAMPLES]


def _more(tail: list[Finding], anchor: str) -> str:
    first = tail[0]
    words = f"{len(tail):,} more with {first.id}; the message and fix of each are in -o json and -o sarif"
    names = ", ".join(f.object.display() for f in tail)
    return (f'<article class="finding {first.severity} more" id="{anchor}"><p class="msg">{text(words)}</p>'
            f'<details class="objects"><summary>show them</summary><span class="names">{text(names, 1_000_000)}'
            "</span></details></article>\n")


def _finding(f: Finding, anchor: str, shell: str, shown: dict[tuple[object, ...], tuple[str, str]]) -> str:
    obj = f.object
    kind = f'<span class="kind">{text(obj.kind)}/</span>' if obj.kind else ""
    namespace = f'{text(obj.namespace, 253)}/' if obj.namespace else ""
    path = f'<span class="path">{text(f.path, 300)}</span>' if f.path else ""
    head = (f'<div class="fhead"><span class="sev {f.severity}">{f.severity}</span>'
            f'<span class="obj">{namespace}{kind}{text(obj.name, 300)}</span>{path}'
            f'<span class="fid">{text(f.id, 100)}</span>'
            + (f'<span class="fid">confidence: {text(f.confidence, 20)}</span>' if f.confidence else "")
            + '</div>')
    parts = [f'<article class="finding {f.severity}" id="{anchor}">', head,
             f'<p class="msg">{text(f.message)}</p>']
    codes = decoded_codes(f.message)
    if codes:
        parts.append('<dl class="codes">' + "".join(
            f"<dt>{text(code)}</dt><dd>{text(meaning)}"
            + (f'<span class="hint">{text(_sentence(hint))}</span>' if hint else "") + "</dd>"
            for code, meaning, hint in codes) + "</dl>")
    key = fix_key(f) if f.fix else None
    if key in shown:
        parts.append('<div class="fix"><div class="label">Fix</div><p class="prose">The same as for '
                     f'<a href="#{shown[key][1]}">{text(shown[key][0])}</a>.</p></div>')
    elif key is not None:
        shown[key] = (f.object.display(), anchor)
        parts.append(_fix(f.fix, shell))
    parts.append("</article>\n")
    return "".join(parts)


def _fix(fix: Fix, shell: str) -> str:
    """The fix record as it is: prose, then each command in a block of its own, then the judgement."""
    from kubectl_win.shells import quote_command

    out = ['<div class="fix"><div class="label">Fix'
           + ('<span class="how">click a command to select it</span>' if fix.commands else "") + "</div>"]
    if fix.note:
        out.append(f'<p class="prose">{text(_sentence(fix.note))}</p>')
    out.extend(f'<pre class="cmd"><code>{text(quote_command(argv, shell), 100_000)}</code></pre>'
               for argv in fix.commands)
    if fix.judgement:
        out.append(f'<p class="prose judgement"><b>Needs your judgement:</b> {text(fix.judgement)}</p>')
    out.append("</div>")
    return "".join(out)


def _sentence(prose: str) -> str:
    prose = prose.strip()
    return prose[:1].upper() + prose[1:]


def decoded_codes(message: str) -> list[tuple[str, str, str]]:
    """(code and name, meaning, hint) of each Windows error or status code the message quotes."""
    from kubectl_win.wincodes import find_codes

    return [(f"{c.hex} {c.name}", c.meaning, c.hint) for c in find_codes(message)]


# -- skipped -------------------------------------------------------------------------------------------

def _skipped(report: DoctorReport, id_prefix: str) -> str:
    head = f'<section class="block" id="{id_prefix}skipped">\n<h2>Skipped</h2>\n'
    if not report.skipped:
        return head + '<p class="muted">Nothing was skipped: doctor read everything it looks at.</p>\n</section>\n'
    items = "".join(f'<li><span class="res">{text(s.resource, 200)}</span><span>{text(s.reason)}</span></li>'
                    for s in report.skipped)
    return (head + '<p class="muted">The checks that need these stay silent; everything else is reported.</p>\n'
            f'<ul class="skipped">{items}</ul>\n</section>\n')
