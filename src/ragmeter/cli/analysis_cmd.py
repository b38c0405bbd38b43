"""Commands that read runs together: compare, gate, correlate, pairwise, agreement, turns."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import typer

from ragmeter.cli.app import (
    PROGRESS_HELP,
    RUN_HELP,
    app,
    echo_err,
    echo_text,
    format_option,
    friendly,
    progress_for,
    runs_dir_option,
    split_metrics,
)
from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import InvalidSettingError, Settings

if TYPE_CHECKING:
    from ragmeter.analysis.gate import GateResult


@app.command("compare")
@friendly
def compare_command(
    run_a: str = typer.Argument(..., help="the baseline: " + RUN_HELP),
    run_b: str = typer.Argument(..., help="the new run: " + RUN_HELP),
    metrics: list[str] | None = typer.Option(None, "--metric", "-m", help="compare only these metrics"),
    allow_setup_change: bool = typer.Option(False, "--allow-setup-change", help="compare runs whose setups differ"),
    fmt: str = format_option("table", "json"),
    runs_dir: str | None = runs_dir_option(),
) -> None:
    """Compare two runs per metric: paired difference, 95% interval, p-value (Holm), movers."""
    from ragmeter.analysis.compare import compare_runs
    from ragmeter.report.terminal import comparison_text
    from ragmeter.runs import load_run

    cmp = compare_runs(load_run(run_a, runs_dir), load_run(run_b, runs_dir), metrics=split_metrics(metrics),
                       allow_setup_change=allow_setup_change)
    typer.echo(json.dumps(cmp.as_dict(), indent=2) if fmt == "json" else comparison_text(cmp))


GATE_FLAGS = {"max_drop": "--max-drop", "alpha": "--alpha", "floors": "--min", "ceilings": "--max"}


@app.command("gate")
def gate_command(
    run: str = typer.Argument(..., help="the new run: " + RUN_HELP),
    baseline: str | None = typer.Option(None, "--baseline", help="the baseline run (a directory or a name) to "
                                                                "compare with (without one, only --min/--max "
                                                                "are checked)"),
    max_drop: float = typer.Option(0.02, "--max-drop", help="the largest allowed drop of a metric's mean (a rise, "
                                                            "for a lower-is-better metric); each verdict shows "
                                                            "its p-value and 95% interval"),
    significant_only: bool = typer.Option(False, "--significant-only",
                                          help="fail on a drop past --max-drop only when it is significant at "
                                               "--alpha after Holm's correction"),
    metrics: list[str] | None = typer.Option(None, "--metric", "-m", help="gate only these metrics"),
    floors: list[str] | None = typer.Option(None, "--min", help="METRIC=VALUE: a floor the run's mean must reach "
                                                                   "(higher-is-better metrics)"),
    ceilings: list[str] | None = typer.Option(None, "--max", help="METRIC=VALUE: a ceiling the run's mean must "
                                                                     "stay under (lower-is-better metrics, e.g. "
                                                                     "contradiction_rate)"),
    alpha: float = typer.Option(0.05, "--alpha", help="significance level after Holm's correction"),
    allow_setup_change: bool = typer.Option(False, "--allow-setup-change",
                                            help="gate runs whose setups differ (the differences are listed)"),
    fmt: str = format_option("text", "json", "markdown"),
    junit: str | None = typer.Option(None, "--junit", help="also write JUnit XML to this file: one test case per "
                                                             "bar and per metric compared"),
    runs_dir: str | None = runs_dir_option(),
) -> None:
    """Exit 0 when the run meets its bars (--min, --max) and holds up against the baseline, 1 when it
    does not, 2 on a setup mismatch or a usage error (with --junit, a report of one test case in
    error then says why the gate could not decide)."""
    from ragmeter.analysis.gate import markdown, text

    try:
        result = _gate_result(run, baseline, max_drop=max_drop, significant_only=significant_only, metrics=metrics,
                              floors=floors, ceilings=ceilings, alpha=alpha, allow_setup_change=allow_setup_change,
                              runs_dir=runs_dir)
    except (RagmeterError, typer.BadParameter, ValueError) as exc:
        if junit is not None:  # exit 2 still leaves a report for the CI step that reads it
            _write_junit_error(exc, junit, run=run, baseline=baseline)
        if isinstance(exc, typer.BadParameter) and exc.param_hint in _USAGE_HINTS:
            raise  # the bars and thresholds are usage errors, printed with the usage line
        echo_err(f"error: {exc}")
        raise typer.Exit(2) from None
    if junit is not None:
        from ragmeter.report.junit import write_junit

        try:
            write_junit(result, junit, run=run, baseline=baseline, max_drop=max_drop, alpha=alpha,
                        text=text(result, max_drop=max_drop, alpha=alpha))
        except RagmeterError as exc:
            echo_err(f"error: {exc}")
            raise typer.Exit(2) from None
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2))
    elif fmt == "markdown":
        echo_text(markdown(result, alpha=alpha))
    else:
        echo_text(text(result, max_drop=max_drop, alpha=alpha))
    raise typer.Exit(0 if result.passed else 1)


_USAGE_HINTS = frozenset(GATE_FLAGS.values())


def _gate_result(run: str, baseline: str | None, *, max_drop: float, significant_only: bool,
                 metrics: list[str] | None, floors: list[str] | None, ceilings: list[str] | None, alpha: float,
                 allow_setup_change: bool, runs_dir: str | None) -> GateResult:
    """The gate's verdict; a usage error is a ``BadParameter`` naming its option, a run that
    cannot be read or compared a ``RagmeterError``."""
    from ragmeter.analysis.gate import check_thresholds, gate
    from ragmeter.runs import load_run

    bars: dict[str, dict[str, float]] = {"--min": {}, "--max": {}}
    for option, items in (("--min", floors), ("--max", ceilings)):
        for item in items or []:  # usage errors (exit 2, with the usage line), before any run is read
            name, sep, value = item.rpartition("=")
            try:
                bars[option][name] = float(value)
            except ValueError:
                sep = ""
            if not sep or not name:
                raise typer.BadParameter(f"write METRIC=VALUE with a number, got {item!r}", param_hint=option)
    try:
        check_thresholds(max_drop=max_drop, alpha=alpha, floors=bars["--min"], ceilings=bars["--max"])
    except InvalidSettingError as exc:
        raise typer.BadParameter(exc.message, param_hint=GATE_FLAGS[exc.setting]) from None
    return gate(load_run(run, runs_dir), load_run(baseline, runs_dir) if baseline is not None else None,
                max_drop=max_drop, metrics=split_metrics(metrics), floors=bars["--min"], ceilings=bars["--max"],
                alpha=alpha, allow_setup_change=allow_setup_change, significant_only=significant_only)


def _write_junit_error(exc: BaseException, junit: str, *, run: str, baseline: str | None) -> None:
    """Leave the JUnit report of a gate that could not decide (exit 2); a file that cannot be
    written is said on stderr beside the error itself."""
    from ragmeter.report.junit import write_junit_error

    reason = exc.format_message() if isinstance(exc, typer.BadParameter) else str(exc)
    try:
        write_junit_error(reason, junit, kind=type(exc).__name__, run=run, baseline=baseline)
    except RagmeterError as unwritable:
        echo_err(f"error: {unwritable}")


@app.command("correlate")
@friendly
def correlate_command(run: str = typer.Argument(..., help=RUN_HELP),
                      fmt: str = format_option("table", "json"), runs_dir: str | None = runs_dir_option()) -> None:
    """Spearman correlation between metrics across queries; expected pairs that diverge are flagged."""
    from ragmeter.analysis.correlate import MIN_INTERVAL_N, MIN_RHO_N, correlate, too_few
    from ragmeter.runs import load_run

    pairs = correlate(load_run(run, runs_dir))
    if fmt == "json":
        typer.echo(json.dumps([{"a": p.a, "b": p.b, "rho": p.rho, "n": p.n, "ci95": list(p.ci95) if p.ci95 else None,
                                "expected": p.expected, "diverges": p.diverges, "undecided": p.undecided}
                               for p in pairs], indent=2))
        return
    few, others = too_few(pairs)
    for p in pairs:
        if p.n < MIN_RHO_N:
            continue  # said once, below
        rho = "n/a" if p.rho is None else f"{p.rho:+.2f}"
        ci = f" [{p.ci95[0]:+.2f}, {p.ci95[1]:+.2f}]" if p.ci95 else ""
        if p.diverges:
            flag = f"  DIVERGES (expected > {p.expected}: {p.meaning})"
        elif p.undecided:
            reach = "its 95% interval reaches it" if p.ci95 else f"no interval below {MIN_INTERVAL_N} queries"
            flag = f"  (expected > {p.expected}; below it here, but {reach}: too few queries to tell)"
        else:
            flag = f"  (expected > {p.expected})" if p.expected is not None else ""
        echo_text(f"{p.a} ~ {p.b}: rho {rho}{ci} over {p.n} quer{'y' if p.n == 1 else 'ies'}{flag}")
    thin = [p for p in pairs if p.n < MIN_RHO_N]
    if thin:
        parts = []
        if few:
            most = max(few.values())
            parts.append(f"every pair of {', '.join(few)} (each scored with another metric on at most {most} "
                         f"quer{'y' if most == 1 else 'ies'})")
        parts.extend(f"{p.a} ~ {p.b} ({p.n} quer{'y' if p.n == 1 else 'ies'})" for p in others)
        echo_text(f"no rho for {len(thin)} pair{'s' if len(thin) != 1 else ''} (rho needs {MIN_RHO_N} queries "
                  f"that both metrics scored): {'; '.join(parts)}")


def _samples(path: str, runs_dir: str | None = None):
    from pathlib import Path

    from ragmeter.io import load_dataset
    from ragmeter.runs import load_run
    from ragmeter.runs.store import resolve_run_path

    is_run = Path(path).is_dir() or resolve_run_path(path, runs_dir).is_dir()  # a directory, or a name `runs` lists
    return load_run(path, runs_dir).samples() if is_run else load_dataset(path).samples


@app.command("pairwise")
@friendly
def pairwise_command(
    a: str = typer.Argument(..., help="a run (directory or name) or a dataset with system A's answers"),
    b: str | None = typer.Argument(None, help="a run (directory or name) or a dataset with system B's answers"),
    b_field: str | None = typer.Option(None, "--b-field", help="compare `answer` with metadata[B_FIELD] of A"),
    judge: str = typer.Option(..., "--judge", help=judge_specs(remote=True)),
    judge_base_url: str | None = typer.Option(None, "--judge-base-url", help="the judge server's URL"),
    ledger: str = typer.Option(Settings().ledger_path, "--ledger", help="judgment store"),
    examples: str | None = typer.Option(None, "--examples",
                                        help="pairs people judged, shown to the judge as calibration examples: JSON "
                                             "or YAML, {\"examples\": [{\"question\", \"answer_1\", "
                                             "\"answer_2\", \"winner\": \"1\"|\"2\"|\"tie\", \"reason\"}]}"),
    fmt: str = format_option("text", "json"),
    progress: str = typer.Option("auto", "--progress", help=PROGRESS_HELP),
    runs_dir: str | None = runs_dir_option(),
) -> None:
    """Which answer is better, per question, asked in both orders: wins, ties, position and length bias."""
    import dataclasses

    from ragmeter.analysis.pair_examples import load_pair_examples
    from ragmeter.analysis.pairwise import pairwise
    from ragmeter.judges.judge_factory import make_judge

    shots = load_pair_examples(examples) if examples else []
    samples_a = _samples(a, runs_dir)
    if b_field:
        samples_b = [dataclasses.replace(s, answer=s.metadata.get(b_field)) for s in samples_a]
    elif b:
        samples_b = _samples(b, runs_dir)
    else:
        raise typer.BadParameter("give system B (a run or dataset) or --b-field", param_hint="B")
    the_judge = make_judge(judge, Settings(judge=judge, judge_base_url=judge_base_url, ledger=ledger))
    if the_judge is None:
        raise typer.BadParameter("pairwise judging needs a judge", param_hint="--judge")
    with progress_for(progress, the_judge) as shown:
        result = pairwise(samples_a, samples_b, the_judge, examples=shots, progress=shown)
    if fmt == "json":
        typer.echo(json.dumps(result.as_dict(), indent=2))
        return
    d = result.as_dict()
    ci = d["win_rate_ci95"]
    echo_text(f"B vs A: {d['wins']} wins, {d['ties']} ties, {d['losses']} losses ({d['failed']} failed)")
    if shots:
        echo_text(f"the judge was shown {len(shots)} pair{'s' if len(shots) != 1 else ''} people judged")
    if d["win_rate"] is not None:
        echo_text(f"B's win rate {d['win_rate']:.3f} (ties count 1/2), 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]")
        echo_text(f"position bias: {d['position_bias_rate']:.3f} of pairs flipped with the order (recorded as ties)")
        lb = d["length_bias"]
        echo_text(f"length bias: the longer answer won {lb['longer_won']} of {lb['decisive_with_length_difference']} "
                   f"decisive pairs (binomial p={lb['p']:.4f})")


@app.command("agreement")
@friendly
def agreement_command(
    run: str = typer.Argument(..., help=RUN_HELP),
    labels: str = typer.Option(..., "--labels", help="human labels: JSONL or CSV with id and one column per metric"),
    fmt: str = format_option("text", "json"),
    runs_dir: str | None = runs_dir_option(),
) -> None:
    """Judge vs human labels per metric: kappa, Spearman, Kendall, confusion, and the PPI-corrected mean."""
    from ragmeter.io.labels import load_labels
    from ragmeter.runs import load_run
    from ragmeter.trust.judge_agreement import MIN_PAIRS, agreement

    r = load_run(run, runs_dir)
    human = load_labels(labels)
    known = {str(row["id"]) for row in r.results}
    unknown = sorted({sid for values in human.values() for sid in values} - known)
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise InvalidInputError(f"{len(unknown)} labeled id(s) are not samples of the run: {shown}", file=labels,
                                field="id", fix=f"label the run's sample ids (it has {len(known)})")
    found = [agreement(r.values(metric), values, metric) for metric, values in human.items() if metric in r.summary]
    if not found:
        raise typer.BadParameter(f"no label column matches a metric of the run ({', '.join(r.summary)})",
                                 param_hint="--labels")
    if fmt == "json":
        typer.echo(json.dumps([a.as_dict() for a in found], indent=2))
        return
    for a in found:
        fmt3 = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
        ppi = f"{fmt3(a.ppi)} [{a.ppi_ci95[0]:.3f}, {a.ppi_ci95[1]:.3f}]" if a.ppi_ci95 else "n/a"
        few = f" (n/a: agreement needs at least {MIN_PAIRS} labeled samples)" if a.n < MIN_PAIRS else ""
        echo_text(f"{a.metric}: {a.n} labeled; judge mean {fmt3(a.judge_mean)}, PPI-corrected {ppi}; "
                   f"kappa {fmt3(a.kappa)}, Spearman {fmt3(a.spearman)}, Kendall {fmt3(a.kendall)}{few}")
        if a.confusion:
            echo_text("    confusion: " + ", ".join(f"{confusion_cell(k)} {v}" for k, v in a.confusion.items()))


def confusion_cell(key: str) -> str:
    """A confusion key with its values to at most 3 decimals (the JSON keeps them whole).

    >>> confusion_cell("judge=0.6666666666666666|human=1.0")
    'judge=0.667|human=1'
    """
    def short(match: re.Match[str]) -> str:
        return f"{float(match.group()):.3f}".rstrip("0").rstrip(".")

    return re.sub(r"-?\d+\.\d+(?:e[-+]?\d+)?", short, key)


@app.command("turns")
@friendly
def turns_command(run: str = typer.Argument(..., help="a conversation dataset's run: " + RUN_HELP),
                  svg: str | None = typer.Option(None, "--svg", help="also write a plot of the means by turn"),
                  fmt: str = format_option("text", "json"), runs_dir: str | None = runs_dir_option()) -> None:
    """Scores by turn index (1, 2, 3+) and standalone vs non-standalone turns."""
    from ragmeter.analysis.turns import by_turn, svg_plot
    from ragmeter.runs import load_run

    r = load_run(run, runs_dir)
    samples = r.samples()
    table = by_turn(samples, r.results)
    if not table["turns"]:
        turns = sum("turn" in s.metadata for s in samples)
        if not turns:
            raise typer.BadParameter("the run has no conversation turns", param_hint="RUN")
        why = "; ".join(f"{m}: {', '.join(f'{reason} ({n})' for reason, n in v.get('reasons', {}).items())}"
                        for m, v in r.summary.items() if m != "standalone_question") or "no metric was scored"
        raise typer.BadParameter(f"the run has {turns} conversation turn(s) but nothing scored on them ({why})",
                                 param_hint="RUN")
    if svg:
        from ragmeter.io.writer import write_output

        write_output(svg, svg_plot(table), what="plot", option="--svg")
    if fmt == "json":
        typer.echo(json.dumps(table, indent=2))
        return
    for title, groups in (("by turn", table["turns"]), ("by question kind", table["standalone"])):
        echo_text(title + ":")
        for group, metrics in groups.items():
            cells = ", ".join(f"{m} {v['mean']:.3f} (n={v['n']})" for m, v in metrics.items())
            echo_text(f"  {group:<15} {cells}")
