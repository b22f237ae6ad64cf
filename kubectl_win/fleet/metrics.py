"""doctor's results as Prometheus metrics: the families made of ClusterFigures (FiguresCollector), written in the
OpenMetrics text format (`doctor -o openmetrics`) or in whichever format a scraper asks for (`serve`).

prometheus_client writes both formats (escaping, `# EOF`, content negotiation): nothing here formats text.
Every sample carries a label that names its cluster (`cluster` unless `--cluster-label` says another name;
left out for the one cluster a pod runs in, whose Prometheus adds its own); see docs/serve.md for the families.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from kubectl_win.fleet.figures import ClusterFigures, figures_of
from kubectl_win.updates import updates_to

if TYPE_CHECKING:
    from kubectl_win.fleet.render import FleetOutput
    from kubectl_win.fleet.scan import ClusterScan
    from kubectl_win.fleet.summary import ClusterSummary

PREFIX = "kubectl_win_"
DEFAULT_CLUSTER_LABEL = "cluster"
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def cluster_label_option(value: str | None) -> str | None:
    """--cluster-label: None (not given: the default rule), "" (no label) or a valid label name."""
    from kubectl_win.errors import UsageError

    if value is None or value == "":
        return value
    if not _LABEL_NAME.match(value) or value.startswith("__"):
        raise UsageError(f"invalid --cluster-label {value!r}: a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, "
                         "not starting with __)")
    return value


def label_for(figures: Iterable[ClusterFigures], asked: str | None) -> str | None:
    """The label that names the cluster: the one asked for ("" for none); not asked, `cluster`, except for a
    single cluster read in-cluster, where it is left out (the cluster label multi-cluster setups add as an
    external or target label would clash with it)."""
    from kubectl_win.fleet.contexts import IN_CLUSTER

    if asked is not None:
        return asked or None
    names = [f.cluster for f in figures]
    return None if names == [IN_CLUSTER] else DEFAULT_CLUSTER_LABEL


class FiguresCollector:
    """A prometheus_client collector over a fixed set of figures (`today` is kept for callers; support end is a
    timestamp and needs no date)."""

    def __init__(self, figures: Iterable[ClusterFigures], today: dt.date, cluster_label: str | None = None) -> None:
        self.figures = tuple(figures)
        self.today = today
        self.label = label_for(self.figures, cluster_label)
        if self.label is None and len(self.figures) > 1:
            from kubectl_win.errors import UsageError

            raise UsageError("several clusters need a label that names each: leave out --cluster-label '' "
                             "or give it a name")

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        named = self.label is not None

        def family(name: str, documentation: str, labels: tuple[str, ...], unit: str = "") -> GaugeMetricFamily:
            return GaugeMetricFamily(PREFIX + name, documentation, labels=(self.label, *labels) if named else labels,
                                     unit=unit)

        def key(cluster: str, *values: str) -> list[str]:
            return [cluster, *values] if named else list(values)

        findings = family("findings", "Findings of doctor's last scan, by check id and severity.",
                          ("check", "severity"))
        causes = family("findings_cause", "Of kubectl_win_findings of the checks that read failure messages, the "
                        "findings whose message shows their cause (confidence cause; the others are unsure).",
                        ("check", "severity"))
        nodes = family("windows_nodes", "Windows nodes by build, Windows Server release, readiness and the platform "
                       "that runs them (aks, eks, gke, openshift, rke2, capi, aks-engine, kubeadm, unknown).",
                       ("build", "version", "ready", "platform"))
        success = family("scan_success", "1 when the last scan read the cluster, 0 when it could not.", ())
        duration = family("scan_duration", "How long the last scan took.", (), unit="seconds")
        last = family("scan_last_success_timestamp", "When the figures were read (Unix time).", (),
                      unit="seconds")
        scans = CounterMetricFamily(PREFIX + "scans", "Scans of the cluster since serve started (doctor: 1).",
                                    labels=(self.label,) if named else ())
        # A point in time in base units (Prometheus's naming rules): alerts compare it with time().
        support = family("os_support_end_timestamp", "When support of the Windows Server build ends (Microsoft's "
                         "date or the platform's retirement, the earlier; Unix time, 00:00 UTC of that day).",
                         ("build",), unit="seconds")
        # Each Windows node's patch level: the release time of its update and the monthly updates it is behind.
        released = family("node_os_revision_release_timestamp", "When the Microsoft update a Windows node's OS "
                          "revision belongs to was released (Unix time; absent for a revision newer than kubectl-win's "
                          "update history).", ("node", "build"), unit="seconds")
        behind = family("node_os_updates_behind", "Monthly Windows updates released after the one a Windows node "
                        "runs, up to the newest known for its build (a lower bound when some are estimated).",
                        ("node", "build"))
        estimated = family("node_os_updates_behind_estimated", "Of kubectl_win_node_os_updates_behind, the monthly "
                           "updates released after kubectl-win's update data, counted from Microsoft's monthly "
                           "release cadence rather than read (0: all counted from the data or the registry).",
                           ("node", "build"))
        # The day of the newest update kubectl-win's update history knows: alerts compare it with time().
        data = family("update_data_timestamp", "When the newest Windows update kubectl-win's update history knows "
                      "was released (Unix time, 00:00 UTC of that day).", (), unit="seconds")
        data_day = _midnight_utc(updates_to())
        for f in self.figures:
            data.add_metric(key(f.cluster), data_day)
            for node, build, when, count, guessed in f.patches:
                if when is not None:
                    released.add_metric(key(f.cluster, node, build), when)
                if count is not None:
                    behind.add_metric(key(f.cluster, node, build), count)
                    estimated.add_metric(key(f.cluster, node, build), guessed)
            success.add_metric(key(f.cluster), 1 if f.ok else 0)
            scans.add_metric(key(f.cluster), f.scans)
            duration.add_metric(key(f.cluster), round(f.seconds, 3))
            if f.last_success is not None:
                last.add_metric(key(f.cluster), round(f.last_success, 3))
            for check, severity, count in f.findings:
                findings.add_metric(key(f.cluster, check, severity), count)
            for check, severity, count in f.causes:
                causes.add_metric(key(f.cluster, check, severity), count)
            for build, version, ready, platform, count in f.nodes:
                nodes.add_metric(key(f.cluster, build, version, ready, platform), count)
            for build, end in f.support_ends:
                support.add_metric(key(f.cluster, build), _midnight_utc(end))
        yield from (findings, causes, nodes, support, released, behind, estimated, data, success, duration, last,
                    scans)


def _midnight_utc(day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()


def render_openmetrics(scans: Iterable[ClusterScan], out: IO[str], now: dt.datetime | None = None,
                       cluster_label: str | None = None) -> None:
    """The OpenMetrics text of these scans (each turned into figures, then dropped), ending in `# EOF`."""
    from prometheus_client.openmetrics.exposition import generate_latest

    now = now or dt.datetime.now(dt.UTC)
    figures = [figures_of(scan, now.timestamp()) for scan in scans]
    out.write(generate_latest(FiguresCollector(figures, now.date(), cluster_label)).decode("utf-8"))


def exposition(figures: Mapping[str, ClusterFigures], accept: str, accept_encoding: str = "",
               today: dt.date | None = None, cluster_label: str | None = None) -> tuple[bytes, dict[str, str]]:
    """The body and headers of a scrape: OpenMetrics when `accept` asks for it, else the Prometheus text format
    (0.0.4 unless a newer version is asked for), as prometheus_client negotiates; gzip when accepted."""
    from prometheus_client.exposition import gzip_accepted

    encoder, content_type = negotiate(accept)
    collector = FiguresCollector(figures.values(), today or dt.datetime.now(dt.UTC).date(), cluster_label)
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
        self.cluster_label = output.cluster_label
        self.now = dt.datetime.now(dt.UTC)
        self.figures: dict[int, ClusterFigures] = {}

    def add(self, scan: ClusterScan, summary: ClusterSummary) -> None:
        self.figures[summary.index] = figures_of(scan, self.now.timestamp())

    def finish(self, summaries: list[ClusterSummary]) -> None:
        from prometheus_client.openmetrics.exposition import generate_latest

        ordered = [self.figures[index] for index in sorted(self.figures)]
        self.out.write(generate_latest(FiguresCollector(ordered, self.now.date(), self.cluster_label)).decode("utf-8"))
