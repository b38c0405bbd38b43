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
    qrels: str = typer.Argument(..., help="qrels file: qid iter docno rel"),
    run: str = typer.Argument(..., help="run file: qid Q0 docno rank score runid"),
    measures: list[str] | None = typer.Option(None, "-m", "--measure",
                                                 help="trec_eval measure (P.5,10 / ndcg_cut.10 / official / all_trec) "
                                                      "or a ragmeter measure (mrr@10); repeatable"),
    per_query: bool = typer.Option(False, "-q", help="print every topic's values before the summary"),
    complete: bool = typer.Option(False, "-c", help="evaluate every qrels topic; one the run misses is ranked as "
                                                    "trec_eval ranks it (scores 0)"),
    level: int = typer.Option(1, "-l", help="relevance level: grades >= level are relevant (not used by ndcg)"),
    no_summary: bool = typer.Option(False, "-n", help="no summary (all) lines"),
    max_docs: int | None = typer.Option(None, "-M", callback=_depth,
                                           help="evaluate only the top DEPTH documents per topic"),
    judged_only: bool = typer.Option(False, "-J", help="drop unjudged documents before evaluating"),
    num_docs: int | None = typer.Option(None, "-N", help="documents in the collection (accepted, as trec_eval "
                                                            "does; only its utility measure reads it)"),
    skip_missing: bool = typer.Option(False, "--skip-missing", help="leave qrels topics the run misses out of the "
                                                                    "averages (trec_eval 9; 10.0 refuses them)"),
    iprec_rule: str = typer.Option("v10", "--iprec-rule", help="v10 (lround) or v9 (+0.9 truncation) recall cut-offs"),
    fmt: str = format_option("trec", "json", what="trec (trec_eval's text)"),
    memory_limit: float | None = typer.Option(None, "--memory-limit", callback=_positive_mb,
                                                 help="MB: peak memory limit; a larger run is evaluated in topic "
                                                      "partitions (same numbers)"),
) -> None:
    """trec_eval's numbers, exactly, for a TREC run against qrels (and its exit status when it refuses)."""
    from ragmeter.core.errors import RagmeterError
    from ragmeter.trec import evaluate_trec
    from ragmeter.trec.measures import unsupported
    from ragmeter.trec.output import json_ready, lines

    wanted = measures or ["official"]
    try:
        result = evaluate_trec(qrels, run, wanted, level=level, complete=complete, max_docs=max_docs,
                               judged_only=judged_only, iprec_rule=iprec_rule, memory_limit_mb=memory_limit,
                               skip_missing=skip_missing)
    except RagmeterError as exc:
        if not hasattr(exc, "exit_code"):
            raise
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    if result.missing and skip_missing:
        typer.echo(f"note: {len(result.missing)} qrels topic(s) have no results and are left out of the "
                   f"averages: {', '.join(result.missing[:10])}" + (" ..." if len(result.missing) > 10 else ""),
                   err=True)
    left_out = unsupported(wanted)
    if left_out:
        asked = " ".join(f"-m {w}" for w in wanted)
        typer.echo(f"note: {asked} asks for {len(left_out)} trec_eval measure(s) that ragmeter does not compute, "
                   f"left out of the output: {', '.join(left_out)}", err=True)
    if any(n.startswith("ragmeter:") for n in result.names):
        typer.echo("note: lines named ragmeter:* are ragmeter measures, not trec_eval measures", err=True)
    if fmt == "json":
        typer.echo(json.dumps(json_ready({**result.to_dict(), "not_computed": left_out}), indent=2, allow_nan=False))
    else:
        text = "".join(line + "\n" for line in lines(result, per_query=per_query, summary=not no_summary))
        typer.echo(text, nl=False)
