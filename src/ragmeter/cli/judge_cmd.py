"""``ragmeter judge-check``: how often a judge agrees with the bundled hand-labeled claims."""

from __future__ import annotations

import json
from typing import Optional

import typer

from ragmeter.cli.app import app, friendly
from ragmeter.core.settings import Settings


@app.command("judge-check")
@friendly
def judge_check_command(
    judge: str = typer.Option("local", "--judge", help="openai:<model>, anthropic:<model>, local or local:<file.gguf>"),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url"),
    split: str = typer.Option("heldout", "--split", help="heldout (not used to fit the local rule), tune, or all"),
    mode: Optional[str] = typer.Option(None, "--mode", help="local judge: per_chunk (default) or joined"),
    ledger: str = typer.Option(":memory:", "--ledger", help="judgment store (default: none kept)"),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json"),
) -> None:
    """Three-way accuracy (supported / contradicted / not found) and the confusion matrix of a
    judge on the bundled agreement set (72 hand-labeled claims in 12 domains)."""
    from ragmeter.judges.agreement_set import LABELS, check, load_set
    from ragmeter.judges.judge_factory import make_judge
    from ragmeter.judges.local import LocalBackend

    if split not in ("heldout", "tune", "all"):
        raise typer.BadParameter("use heldout, tune or all", param_hint="--split")
    the_judge = make_judge(judge, Settings(judge=judge, judge_base_url=judge_base_url, ledger=ledger))
    if the_judge is None:
        raise typer.BadParameter("judge-check needs a judge", param_hint="--judge")
    if mode is not None:
        if not isinstance(the_judge.backend, LocalBackend):
            raise typer.BadParameter("--mode is for the local judge", param_hint="--mode")
        the_judge.backend.set_mode(mode)
    report = check(the_judge, load_set(split))
    if fmt == "json":
        typer.echo(json.dumps({"judge": the_judge.identity, "split": split, **report.as_dict()}, indent=2))
        return
    typer.echo(f"judge {judge} on the {split} split: accuracy {report.accuracy:.3f} "
               f"({report.correct}/{report.n}{f', {report.failed} failed' if report.failed else ''})")
    corner = "label / judged"
    typer.echo(f"{corner:16}" + "".join(f"{p:>14}" for p in LABELS))
    for label in LABELS:
        typer.echo(f"{label:16}" + "".join(f"{report.confusion[label][p]:>14}" for p in LABELS))
