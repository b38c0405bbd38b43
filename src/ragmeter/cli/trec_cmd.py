"""``ragmeter trec``: trec_eval's numbers for TREC qrels and runs."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from ragmeter.cli.app import app, friendly


@app.command("trec")
@friendly
def trec_command(
    qrels: str = typer.Argument(..., help="qrels file: qid iter docno rel"),
    run: str = typer.Argument(..., help="run file: qid Q0 docno rank score runid"),
    measures: Optional[List[str]] = typer.Option(None, "-m", "--measure",
                                                 help="trec_eval measure (P.5,10 / ndcg_cut.10 / official / all_trec) "
                                                      "or a ragmeter measure (mrr@10); repeatable"),
    per_query: bool = typer.Option(False, "-q", help="print every topic's values before the summary"),
    complete: bool = typer.Option(False, "-c", help="average over all qrels topics; missing ones score 0"),
    level: int = typer.Option(1, "-l", help="relevance level: grades >= level are relevant (not used by ndcg)"),
    max_docs: Optional[int] = typer.Option(None, "-M", help="evaluate only the top DEPTH documents per topic"),
    judged_only: bool = typer.Option(False, "-J", help="drop unjudged documents before evaluating"),
    iprec_rule: str = typer.Option("v10", "--iprec-rule", help="v10 (lround) or v9 (+0.9 truncation) recall cut-offs"),
    fmt: str = typer.Option("trec", "--format", "-f", help="trec (trec_eval's text) or json"),
    memory_limit: Optional[float] = typer.Option(None, "--memory-limit",
                                                 help="MB: evaluate a larger run in topic partitions (same numbers)"),
) -> None:
    """trec_eval's numbers, exactly, for a TREC run against qrels."""
    from ragmeter.trec import evaluate_trec
    from ragmeter.trec.measures import UNSUPPORTED
    from ragmeter.trec.output import lines

    wanted = measures or ["official"]
    result = evaluate_trec(qrels, run, wanted, level=level, complete=complete, max_docs=max_docs,
                           judged_only=judged_only, iprec_rule=iprec_rule, memory_limit_mb=memory_limit)
    if result.missing and not complete:
        typer.echo(f"note: {len(result.missing)} qrels topic(s) have no results and are left out of the "
                   f"averages (use -c to count them as 0): {', '.join(result.missing[:10])}"
                   + (" ..." if len(result.missing) > 10 else ""), err=True)
    if "all_trec" in wanted:
        typer.echo(f"note: not computed by ragmeter: {', '.join(sorted(UNSUPPORTED))}", err=True)
    if any(n.startswith("ragmeter:") for n in result.names):
        typer.echo("note: lines named ragmeter:* are ragmeter measures, not trec_eval measures", err=True)
    if fmt == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo("\n".join(lines(result, per_query=per_query)))
