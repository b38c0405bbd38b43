"""``ragmeter judge-check``: how often a judge agrees with the bundled hand-labeled claims
(``--set agreement``), or how its claim metrics rank real answers rated by people
(``--set mtrag-dev``, ``trust/mtrag_check.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ragmeter.cli.app import PROGRESS_HELP, app, format_option, friendly, progress_for
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import Settings


@app.command("judge-check")
@friendly
def judge_check_command(
    judge: str = typer.Option("local", "--judge", help=judge_specs()),
    judge_base_url: str | None = typer.Option(None, "--judge-base-url", help="the judge server's URL"),
    check_set: str = typer.Option("agreement", "--set", help="agreement (216 hand-labeled claims) or mtrag-dev "
                                  "(234 MTRAG responses rated by people)"),
    split: str = typer.Option("all", "--split", help="all, or the tune / heldout half (by context)"),
    limit: int | None = typer.Option(None, "--limit", help="mtrag-dev: a sample of N responses in the set's "
                                     "own mix of human ratings (for a slow judge)"),
    mode: str | None = typer.Option(None, "--mode", help="local judge: per_chunk (default) or joined"),
    ledger: str = typer.Option(":memory:", "--ledger", help="judgment store (default: none kept)"),
    fmt: str = format_option("table", "json"),
    progress: str = typer.Option("auto", "--progress", help=PROGRESS_HELP),
) -> None:
    """Three-way accuracy (supported / contradicted / not found), its 95% interval and the confusion
    matrix of a judge on the bundled agreement set (216 hand-labeled claims in 24 contexts). For the
    local judge, also the leave-one-context-out cross-validated accuracy of its rule (re-fitted on
    the stored probabilities, no extra model call): the number to trust for claims it never saw."""
    from ragmeter.judges.judge_factory import make_judge
    from ragmeter.judges.local.backend import LocalBackend
    from ragmeter.trust.agreement_set import LABELS, check, cross_validated, load_set

    if check_set not in ("agreement", "mtrag-dev"):
        raise typer.BadParameter("use agreement or mtrag-dev", param_hint="--set")
    if limit is not None and check_set != "mtrag-dev":
        raise typer.BadParameter("--limit is for --set mtrag-dev", param_hint="--limit")
    if split not in ("heldout", "tune", "all"):
        raise typer.BadParameter("use heldout, tune or all", param_hint="--split")
    if split != "all" and check_set == "mtrag-dev":  # it was ignored: the whole set was scored
        raise typer.BadParameter("--split is for --set agreement (mtrag-dev is scored whole; --limit draws a "
                                 "sample of it)", param_hint="--split")
    if ledger != ":memory:" and not Path(ledger).expanduser().resolve().parent.is_dir():
        raise typer.BadParameter(f"the folder of {ledger} does not exist: create it, or give a ledger file in a "
                                 f"folder that does", param_hint="--ledger")
    the_judge = make_judge(judge, Settings(judge=judge, judge_base_url=judge_base_url, ledger=ledger))
    if the_judge is None:
        raise typer.BadParameter("judge-check needs a judge", param_hint="--judge")
    if mode is not None:
        if not isinstance(the_judge.backend, LocalBackend):
            raise typer.BadParameter("--mode is for the model-only judge (judges/local.py); the offline judge "
                                     "checks each claim against each passage", param_hint="--mode")
        the_judge.backend.set_mode(mode)
    if check_set == "mtrag-dev":
        _mtrag(the_judge, limit, fmt, progress)
        return
    cases = load_set(split)
    with progress_for(progress, the_judge) as shown:
        report = check(the_judge, cases, progress=shown)
    interval = report.interval()
    if report.accuracy is None or interval is None:  # no verdict at all: 0/0 is not computed, not 0.000
        why = f"not computed: every call failed ({report.failed} failed)"
        if fmt == "json":
            typer.echo(json.dumps({"judge": the_judge.identity, "split": split, **report.as_dict(),
                                   "not_computed": why, "cross_validated": None}, indent=2))
        else:
            typer.echo(f"judge {judge} on the {split} split: accuracy {why}")
        raise typer.Exit(1)
    backend = the_judge.backend
    cv = cross_validated(report, cases, score=backend.rule.score) if isinstance(backend, LocalBackend) else None
    fitted = _offline_figures(backend)
    if fmt == "json":
        typer.echo(json.dumps({"judge": the_judge.identity, "split": split, **report.as_dict(),
                               "cross_validated": cv.as_dict() if cv else fitted}, indent=2))
        return
    lo, hi = interval
    failed = f", {report.failed} of {report.n} not answered (failed calls, left out)" if report.failed else ""
    typer.echo(f"judge {judge} on the {split} split: accuracy {report.accuracy:.3f} "
               f"({report.correct}/{report.answered}{failed}), 95% interval {lo:.2f}-{hi:.2f}")
    _confusion(report.confusion)
    if cv is not None:
        clo, chi = cv.interval()
        typer.echo(f"\ncross-validated (each context judged by a rule fitted on the others): "
                   f"accuracy {cv.accuracy:.3f} ({cv.correct}/{cv.n}), 95% interval {clo:.2f}-{chi:.2f}; "
                   f"contradicted claims called supported {cv.rate('contradicted', 'supported'):.0%}")
        _confusion({a: dict(zip(LABELS, row)) for a, row in cv.confusion().items()})
    if fitted is not None:
        typer.echo(f"\nits rule ({fitted['fitted_on']}), cross-validated:")
        for name, figures in fitted["measured"].items():
            typer.echo(f"  {name}: {json.dumps(figures)}")


def _offline_figures(backend) -> dict | None:
    """The offline judge's rule: what it was fitted on and its cross-validated figures (rule.json)."""
    from ragmeter.judges.offline.backend import OfflineBackend

    if not isinstance(backend, OfflineBackend):
        return None
    measured = {k: v for k, v in backend.rule.measured.items() if k != "in_sample"}
    return {"fitted_on": backend.rule.fitted_on, "measured": measured}


def _confusion(confusion: dict) -> None:
    from ragmeter.trust.agreement_set import LABELS

    corner = "label / judged"
    typer.echo(f"{corner:16}" + "".join(f"{p:>14}" for p in LABELS))
    for label in LABELS:
        typer.echo(f"{label:16}" + "".join(f"{confusion[label][p]:>14}" for p in LABELS))


def _mtrag(judge, limit: int | None, fmt: str, progress: str) -> None:
    from ragmeter.core.results import Failed, Score
    from ragmeter.trust import mtrag_check, mtrag_set

    items = mtrag_set.load_set()
    total = len(items)
    if limit is not None:
        items = mtrag_set.stratified(items, limit)
    drawn = (f"all {total} responses" if len(items) == total else
             f"{len(items)} of {total} responses, drawn in the set's own mix of median human faithfulness "
             f"ratings (stratified, seed 0)")
    with progress_for(progress, judge) as shown:
        outcomes = mtrag_check.score(judge, items, progress=shown)
    rows = mtrag_check.report(items, outcomes)
    cells = [o for per in outcomes.values() for o in per.values()]
    failed = sum(isinstance(o, Failed) for o in cells)
    nothing = cells and not any(isinstance(o, Score) for o in cells)  # every call failed: no figure at all
    if fmt == "json":
        typer.echo(json.dumps({"judge": judge.identity, "set": "mtrag-dev", "drawn": drawn,
                               "interval_method": "percentile bootstrap over tasks (2000 draws, seed 0)",
                               "rows": [r.as_dict() for r in rows], "failed": failed,
                               **({"not_computed": f"every call failed ({failed} failed)"} if nothing else {})},
                              indent=2))
        if nothing:
            raise typer.Exit(1)
        return
    typer.echo(f"judge {judge.identity.get('model') or judge.identity.get('backend')} on mtrag-dev "
               f"(MTRAG ClapNQ + Govt, people's ratings 1-4): {drawn}; 95% intervals: bootstrap over tasks")
    for line in mtrag_check.lines(rows):
        typer.echo(line)
    if nothing:  # the exit status says so, as for the agreement set
        typer.echo(f"not computed: every call failed ({failed} failed)")
        raise typer.Exit(1)
