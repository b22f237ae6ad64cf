"""doctor's results as Prometheus metrics: the families made of ClusterFigures (FiguresCollector), written in the
OpenMetrics text format (`doctor -o openmetrics`) or in whichever format a scraper asks for (`serve`).

prometheus_client writes both formats (escaping, `# EOF`, content negotiation): nothing here formats text.
Every sample carries the `cluster` label (the context name); see docs/serve.md for the families.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from kubectl_win.fleet.figures import ClusterFigures, figures_of

if TYPE_CHECKING:
    from kubectl_win.fleet.render import FleetOutput
    from kubectl_win.fleet.scan import ClusterScan
    from kubectl_win.fleet.summary import ClusterSummary

PREFIX = "kubectl_win_"


class FiguresCollector:
    """A prometheus_client collector over a fixed set of figures; `today` dates the support countdown."""

    def __init__(self, figures: Iterable[ClusterFigures], today: dt.date) -> None:
        self.figures = tuple(figures)
        self.today = today

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        def family(name: str, documentation: str, labels: tuple[str, ...], unit: str = "") -> GaugeMetricFamily:
            return GaugeMetricFamily(PREFIX + name, documentation, labels=("cluster", *labels), unit=unit)

        findings = family("findings", "Findings of doctor's last scan, by check id and severity.",
                          ("check", "severity"))
        nodes = family("windows_nodes", "Windows nodes by build, Windows Server release and readiness.",
                       ("build", "version", "ready"))
        success = family("scan_success", "1 when the last scan read the cluster, 0 when it could not.", ())
        duration = family("scan_duration", "How long the last scan took.", (), unit="seconds")
        last = family("scan_last_success_timestamp", "When the figures were read (Unix time).", (),
                      unit="seconds")
        scans = CounterMetricFamily(PREFIX + "scans", "Scans of the cluster since serve started (doctor: 1).",
                                    labels=("cluster",))
        support = family("os_support_end_days", "Days until support of the Windows Server build ends "
                         "(Microsoft's date or the platform's retirement, the earlier); negative when past.",
                         ("build",))
        released = family("node_os_revision_release_timestamp", "When the Microsoft update a Windows node's OS "
                          "revision belongs to was released (Unix time; absent for a revision newer than kubectl-win's "
                          "update history).", ("node", "build"), unit="seconds")
        behind = family("node_os_updates_behind", "Monthly Windows updates released after the one a Windows node "
                        "runs, up to the newest known for its build.", ("node", "build"))
        for f in self.figures:
            for node, build, when, count in f.patches:
                if when is not None:
                    released.add_metric([f.cluster, node, build], when)
                if count is not None:
                    behind.add_metric([f.cluster, node, build], count)
            success.add_metric([f.cluster], 1 if f.ok else 0)
            scans.add_metric([f.cluster], f.scans)
            duration.add_metric([f.cluster], round(f.seconds, 3))
            if f.last_success is not None:
                last.add_metric([f.cluster], round(f.last_success, 3))
            for check, severity, count in f.findings:
                findings.add_metric([f.cluster, check, severity], count)
            for build, version, ready, count in f.nodes:
                nodes.add_metric([f.cluster, build, version, ready], count)
            for build, end in f.support_ends:
                support.add_metric([f.cluster, build], (end - self.today).days)
        yield from (findings, nodes, support, released, behind, success, duration, last, scans)


def render_openmetrics(scans: Iterable[ClusterScan], out: IO[str], now: dt.datetime | None = None) -> None:
    """The OpenMetrics text of these scans (each turned into figures, then dropped), ending in `# EOF`."""
    from prometheus_client.openmetrics.exposition import generate_latest

    now = now or dt.datetime.now(dt.UTC)
    figures = [figures_of(scan, now.timestamp()) for scan in scans]
    out.write(generate_latest(FiguresCollector(figures, now.date())).decode("utf-8"))


def exposition(figures: Mapping[str, ClusterFigures], accept: str, accept_encoding: str = "",
               today: dt.date | None = None) -> tuple[bytes, dict[str, str]]:
    """The body and headers of a scrape: OpenMetrics when `accept` asks for it, else the Prometheus text format
    (0.0.4 unless a newer version is asked for), as prometheus_client negotiates; gzip when accepted."""
    from prometheus_client.exposition import gzip_accepted

    encoder, content_type = negotiate(accept)
    collector = FiguresCollector(figures.values(), today or dt.datetime.now(dt.UTC).date())
    try:
        body = encoder(collector)
    except Exception:  # noqa: BLE001 - a version the encoder cannot write: the default format instead
        encoder, content_type = negotiate("")
        body = encoder(collector)
    headers = {"Content-Type": content_type}
    if gzip_accepted(accept_encoding):
        import gzip

        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    return body, headers


# What a Content-Type this server sends may look like: fixed words and versions, never bytes of the request.
_SAFE_CONTENT_TYPE = re.compile(r"^(?:text/plain|application/openmetrics-text); version=(?:0\.0\.4|1\.0\.0)"
                                r"; charset=utf-8(?:; escaping=[a-z-]+)?$")


def negotiate(accept: str) -> tuple[Any, str]:
    """prometheus_client's format negotiation, made safe: a malformed Accept header gets the default format
    rather than an exception, and a version it would copy from the request into the Content-Type (or one it
    does not know) gets the format's standard version."""
    from prometheus_client.exposition import choose_encoder

    try:
        encoder, content_type = choose_encoder(accept)
    except Exception:  # noqa: BLE001 - `version=abc` raises inside the library
        return choose_encoder("")
    if _SAFE_CONTENT_TYPE.match(content_type):
        return encoder, content_type
    mime = content_type.split(";", 1)[0].strip()
    return choose_encoder(mime if mime == "application/openmetrics-text" else "")


class OpenMetricsRenderer:
    """`doctor -o openmetrics` over several contexts: each cluster's figures kept as it finishes (its report is
    dropped), one exposition of them all at the end, in the order the contexts were asked for."""

    def __init__(self, output: FleetOutput) -> None:
        self.out = output.out
        self.now = dt.datetime.now(dt.UTC)
        self.figures: dict[int, ClusterFigures] = {}

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        self.figures[summary.index] = figures_of(scan, self.now.timestamp())

    def finish(self, summaries: list[ClusterSummary]) -> None:
        from prometheus_client.openmetrics.exposition import generate_latest

        ordered = [self.figures[index] for index in sorted(self.figures)]
        self.out.write(generate_latest(FiguresCollector(ordered, self.now.date())).decode("utf-8"))
