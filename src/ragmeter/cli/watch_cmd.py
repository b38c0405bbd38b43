"""``ragmeter watch``: score a sample of live traffic (the loop is :func:`ragmeter.live.loop.run_watch`)."""

from __future__ import annotations

import typer

from ragmeter.cli.app import app, echo_err, friendly, split_metrics
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import AUTO_JUDGE, DEFAULTS, Settings, WatchSettings

W = DEFAULTS.watch
DEFAULT_METRICS = ",".join(W.metrics)


@app.command("watch")
@friendly
def watch_command(
    log: str | None = typer.Argument(None, help="the JSONL request log your app appends to (or exported OTel "
                                                "spans); or none, with --otlp"),
    otlp: str | None = typer.Option(None, "--otlp", help="[HOST:]PORT: receive traces over OTLP/HTTP (/v1/traces, "
                                                        "protobuf or JSON) instead of reading a log; loopback "
                                                        "unless a host is given"),
    statsd: str | None = typer.Option(None, "--statsd", help="HOST:PORT: send the gauges (rag.retrieved_count, "
                                                            "rag.avg_relevance, rag.answer_length, "
                                                            "rag.user_feedback) to statsd"),
    to_phoenix: str | None = typer.Option(None, "--to-phoenix", help="a Phoenix server's URL: each scored "
                                                                    "request's metrics as annotations on its root "
                                                                    "span"),
    settle: float = typer.Option(W.settle, "--settle", help="seconds after a trace's root span before it is read"),
    quiet: float = typer.Option(W.quiet, "--quiet", help="seconds without a span before a trace with no root "
                                                         "is read as it is"),
    max_open: int = typer.Option(W.max_open, "--max-open", help="unfinished traces kept at most (the oldest "
                                                                "past it are read as they are)"),
    judge: str | None = typer.Option(None, "--judge", help=judge_specs(notes={"local": "offline"}, last=",")
                                     + ", or none (nothing judged is scored); default: the bundled local judge when "
                                       "ragmeter\\[local] is installed and a watched metric needs one"),
    judge_base_url: str | None = typer.Option(None, "--judge-base-url", help="the judge server's URL"),
    metrics: list[str] | None = typer.Option(None, "--metrics", "-m", help=f"default: {DEFAULT_METRICS}"),
    sample_rate: float = typer.Option(W.sample_rate, "--sample-rate",
                                      help="share of requests scored (deterministic by id)"),
    window: int = typer.Option(W.window, "--window", help="the rolling window: last N scored requests"),
    state: str = typer.Option(W.state, "--state", help="offset, scored results and ledger live here"),
    host: str = typer.Option(W.host, "--host", help="where /metrics listens (loopback by default)"),
    port: int = typer.Option(W.port, "--port", help="the Prometheus port; 0 = no endpoint"),
    interval: float = typer.Option(W.interval, "--interval", help="seconds between polls"),
    alert: list[str] | None = typer.Option(None, "--alert",
                                              help="METRIC<VALUE: alert when the rolling mean falls below "
                                                   "(a floor); METRIC>VALUE: when it rises above (a ceiling, "
                                                   "for lower-is-better metrics such as contradiction_rate)"),
    baseline: str | None = typer.Option(None, "--baseline", help="a run whose means the traffic is checked against"),
    max_drop: float = typer.Option(W.max_drop, "--max-drop",
                                   help="a significant drop from the baseline larger than this alerts "
                                        "(a rise, for lower-is-better metrics)"),
    alert_command: str | None = typer.Option(None, "--alert-command",
                                                help="run on an alert, without a shell: the line is split as a "
                                                     "shell splits words (quotes kept together) and nothing in it "
                                                     "is expanded; the alert's text is in the environment variable "
                                                     "RAGMETER_ALERT, which your program reads (for a shell line, "
                                                     "run one: --alert-command 'sh -c \"notify \\\"$RAGMETER_ALERT"
                                                     "\\\"\"')"),
    exit_on_alert: bool = typer.Option(W.exit_on_alert, "--exit-on-alert",
                                       help="exit with status 3 on the first alert"),
    once: bool = typer.Option(W.once, "--once",
                              help="score everything the log holds now, then exit (no /metrics endpoint)"),
    max_seconds: float | None = typer.Option(None, "--max-seconds", help="stop after this long"),
    progress_interval: float = typer.Option(DEFAULTS.progress_interval, "--progress-interval",
                                            help="seconds between lines while judge calls are in flight"),
) -> None:
    """Score a sample of live traffic, keep rolling windows, expose them to Prometheus, alert."""
    from ragmeter.live.loop import resolve_watch_judge, run_watch

    wanted = split_metrics(metrics)
    watch = WatchSettings(log=log, state=state, metrics=tuple(wanted) if wanted else W.metrics,
                          sample_rate=sample_rate, window=window, host=host, port=port, interval=interval,
                          alerts=tuple(alert or ()), baseline=baseline, max_drop=max_drop, alert_command=alert_command,
                          exit_on_alert=exit_on_alert, once=once, max_seconds=max_seconds, otlp=otlp,
                          statsd=statsd, to_phoenix=to_phoenix, settle=settle, quiet=quiet, max_open=max_open)
    settings = Settings(judge=AUTO_JUDGE if judge is None else judge, judge_base_url=judge_base_url, watch=watch,
                        progress_interval=progress_interval)
    status = run_watch(resolve_watch_judge(settings, notify=echo_err), say=echo_err)
    if status:
        raise typer.Exit(status)
