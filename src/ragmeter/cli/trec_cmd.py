"""``ragmeter trec``: trec_eval's numbers for TREC qrels and runs."""

from __future__ import annotations

import json

import typer

from ragmeter.cli.app import app, format_option, friendly


def _positive_mb(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter("must be a number of megabytes above 0")
    return value


def _depth(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise typer.BadParameter("must be 0 or more (trec_eval crashes on a negative -M)")
    return value


@app.command("trec")
@friendly
def trec_command(
    qrels: str = typer.Argument(..., help="qrels file: qid iter docno rel (or the -R format)"),
    run: str = typer.Argument(..., help="run file: qid Q0 docno rank score runid"),
    measures: list[str] | None = typer.Option(None, "-m", "--measure",
                                                 help="trec_eval measure (P.5,10 / ndcg_cut.10 / relstring.20 / "
                                                      "official / all_trec / all_prefs / qrels_jg) or a ragmeter "
                                                      "measure (mrr@10); repeatable"),
    per_query: bool = typer.Option(False, "-q", help="print every topic's values before the summary"),
    complete: bool = typer.Option(False, "-c", help="evaluate every qrels topic; one the run misses is ranked as "
                                                    "trec_eval ranks it (scores 0)"),
    level: int = typer.Option(1, "-l", help="relevance level: grades >= level are relevant (not used by ndcg)"),
    no_summary: bool = typer.Option(False, "-n", help="no summary (all) lines"),
    max_docs: int | None = typer.Option(None, "-M", callback=_depth,
                                           help="evaluate only the top DEPTH documents per topic"),
    judged_only: bool = typer.Option(False, "-J", help="drop unjudged documents before evaluating"),
    num_docs: int = typer.Option(0, "-N", help="documents in the collection (utility's fourth coefficient counts "
                                               "on it)"),
    rel_format: str = typer.Option("qrels", "-R", "--rel-format",
                                   help="judgments format: qrels, prefs (qid jg jsg docno level), qrels_prefs (a qrels "
                                        "file read as preferences) or qrels_jg (column 2 names the judgment group)"),
    results_format: str = typer.Option("trec_results", "-T", "--results-format",
                                       help="run format: trec_results (the only one trec_eval has)"),
    zscores: str | None = typer.Option(None, "-Z", "--zscores",
                                       help="file of 'qid measure mean stddev': print every value as a z-score"),
    skip_missing: bool = typer.Option(False, "--skip-missing", help="leave qrels topics the run misses out of the "
                                                                    "averages (trec_eval 9; 10.0 refuses them)"),
    iprec_rule: str = typer.Option("v10", "--iprec-rule", help="v10 (lround) or v9 (+0.9 truncation) recall cut-offs"),
    fmt: str = format_option("trec", "json", what="trec (trec_eval's text)"),
    memory_limit: float | None = typer.Option(None, "--memory-limit", callback=_positive_mb,
                                                 help="MB: peak memory limit; a larger run is evaluated in topic "
                                                      "partitions (same numbers)"),
    engine: str = typer.Option("auto", "--engine",
                               help="python (plain Python, topic by topic), arrow (Arrow and numpy; [trec]) or auto "
                                    "(python for files up to 2 MB or without pyarrow); the same numbers"),
) -> None:
    """trec_eval's numbers, exactly, for a TREC run against qrels (and its exit status when it refuses)."""
    from ragmeter.core.errors import RagmeterError
    from ragmeter.trec.evaluate import evaluate
    from ragmeter.trec.output import json_ready, lines

    wanted = measures or ["official"]
    try:
        if results_format != "trec_results":
            from ragmeter.trec.errors import EXIT_FILE, TrecMeasureError

            raise TrecMeasureError(f"unknown results format {results_format!r}: trec_results is the only one "
                                   "(trec_eval: Illegal retrieval results format)", exit_code=EXIT_FILE)
        result = evaluate(qrels, run, wanted, level=level, complete=complete, max_docs=max_docs,
                          judged_only=judged_only, iprec_rule=iprec_rule, memory_limit_mb=memory_limit,
                          skip_missing=skip_missing, rel_format=rel_format, zscores=zscores, num_docs=num_docs,
                          engine=engine)
    except RagmeterError as exc:
        if not hasattr(exc, "exit_code"):
            raise
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    if result.missing and skip_missing:
        typer.echo(f"note: {len(result.missing)} qrels topic(s) have no results and are left out of the "
                   f"averages: {', '.join(result.missing[:10])}" + (" ..." if len(result.missing) > 10 else ""),
                   err=True)
    if any(n.startswith("ragmeter:") for n in result.names):
        typer.echo("note: lines named ragmeter:* are ragmeter measures, not trec_eval measures", err=True)
    if fmt == "json":
        typer.echo(json.dumps(json_ready({**result.to_dict(), "not_computed": []}), indent=2, allow_nan=False))
    else:
        text = "".join(line + "\n" for line in lines(result, per_query=per_query, summary=not no_summary))
        typer.echo(text, nl=False)
