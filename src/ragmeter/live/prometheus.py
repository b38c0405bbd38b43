"""The watcher's rolling windows, counts and judge figures as Prometheus gauges, and the HTTP
endpoint that serves them (``/metrics``, bound to 127.0.0.1 by default; ``ragmeter[live]``)."""

from __future__ import annotations

import errno
from typing import Any, Protocol

from ragmeter.core.settings import DEFAULTS, InvalidSettingError


class Watched(Protocol):
    """What the gauges read of a watcher (:class:`ragmeter.live.watch.Watcher`)."""

    counts: dict[str, int]
    judge: Any
    alerts_total: int

    def window_summary(self, which: str = "last_n") -> dict[str, dict]: ...


class Gauges:
    """The watcher's figures as Prometheus gauges on ``registry``."""

    def __init__(self, registry) -> None:
        from prometheus_client import Gauge

        self.mean = Gauge("ragmeter_rolling_mean", "Rolling mean of a metric", ["metric", "window"], registry=registry)
        self.coverage = Gauge("ragmeter_rolling_samples", "Samples in the rolling window by status",
                              ["metric", "window", "status"], registry=registry)
        self.counts = Gauge("ragmeter_log_lines", "Log lines read, by outcome", ["outcome"], registry=registry)
        self.calls = Gauge("ragmeter_judge_calls", "Judge calls made by this watcher", registry=registry)
        self.latency = Gauge("ragmeter_judge_latency_seconds_avg", "Mean judge call latency", registry=registry)
        self.alerts = Gauge("ragmeter_alerts_fired", "Alerts fired since start", registry=registry)

    def update(self, w: Watched) -> None:
        for which in ("last_n", "last_hour"):
            for m, s in w.window_summary(which).items():
                if s["mean"] is not None:
                    self.mean.labels(m, which).set(s["mean"])
                for status in ("scored", "not_computed", "failed"):
                    self.coverage.labels(m, which, status).set(s[status])
        for k, v in w.counts.items():
            self.counts.labels(k).set(v)
        stats = getattr(w.judge, "stats", None)
        if stats is not None:
            self.calls.set(stats.calls)
            self.latency.set(stats.latency_s / stats.calls if stats.calls else 0.0)
        self.alerts.set(w.alerts_total)


def serve(registry, host: str = DEFAULTS.watch.host, port: int = DEFAULTS.watch.port):
    """Start the /metrics endpoint (loopback by default); returns the server. A port in use (or
    an address that cannot be bound) is an ``InvalidSettingError`` naming ``--port`` / ``--host``."""
    from prometheus_client import start_http_server

    try:
        server, _thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        in_use = exc.errno in (errno.EADDRINUSE, errno.EACCES) or "in use" in str(exc).lower()
        setting = "port" if in_use else "host"
        raise InvalidSettingError(setting, f"the /metrics endpoint cannot listen on {host}:{port} "
                                           f"({exc.strerror or exc}): give another --port (0 for no endpoint)"
                                           + ("" if in_use else " or --host")) from None
    return server
