"""``ragmeter watch``: score a sample of live traffic."""

from __future__ import annotations

from typing import List, Optional

import typer

from ragmeter.cli.main import _make_judge, app, friendly, split_metrics


@app.command("watch")
@friendly
def watch_command(
    log: str = typer.Argument(..., help="the JSONL request log your app appends to (or exported OTel spans)"),
    judge: str = typer.Option(..., "--judge", help="openai:<model> or anthropic:<model>"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url"),
    metrics: Optional[List[str]] = typer.Option(None, "--metrics", "-m", help="default: faithfulness,answer_relevancy"),
    sample_rate: float = typer.Option(1.0, "--sample-rate", help="share of requests scored (deterministic by id)"),
    window: int = typer.Option(100, "--window", help="the rolling window: last N scored requests"),
    state: str = typer.Option("ragmeter-watch", "--state", help="offset, scored results and ledger live here"),
    host: str = typer.Option("127.0.0.1", "--host", help="where /metrics listens (loopback by default)"),
    port: int = typer.Option(9464, "--port", help="the Prometheus port; 0 = no endpoint"),
    interval: float = typer.Option(2.0, "--interval", help="seconds between polls"),
    alert: Optional[List[str]] = typer.Option(None, "--alert", help="METRIC<VALUE: alert when the rolling mean falls below"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="a run whose means the traffic is checked against"),
    max_drop: float = typer.Option(0.05, "--max-drop", help="a significant drop from the baseline larger than this alerts"),
    alert_command: Optional[str] = typer.Option(None, "--alert-command", help="run on an alert, with $RAGMETER_ALERT set"),
    exit_on_alert: bool = typer.Option(False, "--exit-on-alert", help="exit with status 3 on the first alert"),
    once: bool = typer.Option(False, "--once", help="score everything the log holds now, then exit"),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="stop after this long"),
) -> None:
    """Score a sample of live traffic, keep rolling windows, expose them to Prometheus, alert."""
    import time
    from pathlib import Path

    from ragmeter.live.watch import Alert, Watcher, serve
    from ragmeter.runs import load_run

    wanted = split_metrics(metrics) or ["faithfulness", "answer_relevancy"]
    alerts = []
    for item in alert or []:
        name, sep, value = item.partition("<")
        if not sep:
            raise typer.BadParameter(f"write METRIC<VALUE, got {item!r}", param_hint="--alert")
        alerts.append(Alert(name.strip(), below=float(value)))
    if baseline:
        base = load_run(baseline)
        for m in wanted:
            values = [v for v in base.values(m).values() if v is not None]
            if values:
                alerts.append(Alert(m, baseline=values, max_drop=max_drop))
    registry = None
    if port:
        try:
            from prometheus_client import CollectorRegistry
        except ImportError:
            raise typer.BadParameter("the /metrics endpoint needs prometheus_client: pip install 'ragmeter[live]' "
                                     "(or --port 0)", param_hint="--port") from None
        registry = CollectorRegistry()
    options = {"judge": judge, "judge_base_url": judge_base_url, "ledger": str(Path(state) / "ledger.sqlite")}
    watcher = Watcher(log, _make_judge(options, None), Path(state), metrics=wanted, sample_rate=sample_rate,
                      window=window, alerts=alerts, alert_command=alert_command, registry=registry)
    if registry is not None:
        serve(registry, host, port)
        typer.echo(f"metrics on http://{host}:{port}/metrics", err=True)
    start = time.monotonic()
    while True:
        scored = watcher.poll()
        if scored:
            summary = watcher.window_summary()
            typer.echo(f"scored {scored} new; last {window}: " + ", ".join(
                f"{m} {s['mean']:.3f}" for m, s in summary.items() if s["mean"] is not None), err=True)
        for message in watcher.fired:
            typer.echo(f"ALERT: {message}", err=True)
        if watcher.fired and exit_on_alert:
            raise typer.Exit(3)
        if watcher.pending:
            continue  # more complete lines wait: no sleep
        if once or (max_seconds is not None and time.monotonic() - start > max_seconds):
            break
        time.sleep(interval)
