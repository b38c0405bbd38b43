"""``ragmeter testset generate``: questions written from a corpus through a judge, as a dataset."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ragmeter.cli.app import app, friendly
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.settings import DEFAULTS, Settings, default_runs_dir

#: A generation call writes a question, an answer and its claims: it gets twice a verdict's time.
GENERATION_TIMEOUT = 2 * DEFAULTS.timeout

testset_app = typer.Typer(add_completion=False, no_args_is_help=True,
                          help="Build an evaluation set: questions generated from your corpus.")
app.add_typer(testset_app, name="testset")


@testset_app.command("generate")
@friendly
def generate_command(
    corpus: str = typer.Option(..., "--corpus", help="chunk id -> text file (.jsonl or .csv) to write questions from"),
    judge: str = typer.Option(..., "--judge", help=judge_specs()),
    n: int = typer.Option(..., "-n", help="how many test items"),
    kinds: str = typer.Option("single=0.5,multi=0.2,unanswerable=0.2,conversational=0.1", "--kinds",
                              help="shares of single-chunk, multi-chunk, unanswerable and conversational items"),
    out: str = typer.Option("testset.jsonl", "--out", "-o", help="the dataset to write (a report goes next to it)"),
    seed: int = typer.Option(0, "--seed", help="chooses the source chunks (same seed: same requests, free rerun)"),
    dedupe: float = typer.Option(0.9, "--dedupe", help="questions with cosine >= this are near-duplicates"),
    check_k: int = typer.Option(5, "--check-k", help="unanswerable questions are checked against this many of the "
                                                     "corpus' most similar chunks"),
    max_rounds: int = typer.Option(4, "--max-rounds", help="rounds of drafting to fill shortfalls"),
    embedder: str = typer.Option(DEFAULTS.embedder, "--embedder", help="for pairing chunks, de-duplication and the "
                                                             "unanswerable check: minilm (bundled), "
                                                             "sentence-transformers:<model> or openai:<model>"),
    judge_base_url: str | None = typer.Option(None, "--judge-base-url", help="the judge server's URL"),
    ledger: str | None = typer.Option(None, "--ledger", help="judgment store (default: <runs-dir>/ledger.sqlite)"),
    runs_dir: str = typer.Option(default_runs_dir(), "--runs-dir", help="where the default ledger lives"),
    progress_interval: float = typer.Option(DEFAULTS.progress_interval, "--progress-interval",
                                            help="seconds between lines while judge calls are in flight"),
    concurrency: int = typer.Option(DEFAULTS.concurrency, "--concurrency", help="judge requests in flight at most"),
    timeout: float = typer.Option(GENERATION_TIMEOUT, "--timeout", help="seconds per judge call"),
    max_reasks: int = typer.Option(DEFAULTS.max_reasks, "--max-reasks",
                                   help="re-asks for a reply that does not validate"),
) -> None:
    """Write N questions from the corpus: each with its source chunks as `relevant`, a reference
    answer and reference claims, checked by the judge; near-duplicates removed; rejects counted."""
    from ragmeter.embeddings import make_embedder
    from ragmeter.io import load_corpus
    from ragmeter.io.writer import write_jsonl, write_text_atomic, writing
    from ragmeter.judges.judge_factory import make_judge
    from ragmeter.report.heartbeat import judge_heartbeat
    from ragmeter.testset.generate import generate_testset

    if n < 1:
        raise typer.BadParameter("give at least 1", param_hint="-n")
    if not 0 < dedupe <= 1:
        raise typer.BadParameter("a cosine in (0, 1]", param_hint="--dedupe")
    out_path = Path(out)
    with writing(out_path.parent, what="output folder", option="--out"):  # before any judge call is paid for
        out_path.parent.mkdir(parents=True, exist_ok=True)
    texts = load_corpus(corpus)
    settings = Settings(judge=judge, judge_base_url=judge_base_url, concurrency=concurrency, timeout=timeout,
                        max_reasks=max_reasks, ledger=ledger, runs_dir=runs_dir)
    the_judge = make_judge(settings.judge_spec, settings)
    if the_judge is None:
        raise typer.BadParameter("generating questions needs a judge", param_hint="--judge")
    with judge_heartbeat(the_judge, "generating questions", write=lambda m: typer.echo(m, err=True),
                         interval=progress_interval):
        result = generate_testset(texts, the_judge, n, kinds=kinds, embedder=make_embedder(embedder), seed=seed,
                                  dedupe=dedupe, check_k=check_k, max_rounds=max_rounds,
                                  on_progress=lambda m: typer.echo(m, err=True))
    with writing(out_path, what="test set", option="--out"):
        write_jsonl(out_path, result.rows)
    report_path = out_path.with_name(out_path.stem + ".report.json")
    with writing(report_path, what="test set report", option="--out"):
        write_text_atomic(report_path, json.dumps(result.report, indent=2, ensure_ascii=False) + "\n")
    typer.echo(summary(result.report))
    typer.echo(f"{len(result.rows)} items -> {out_path}; report -> {report_path}")


def summary(r: dict) -> str:
    made = ", ".join(f"{k} {r['produced'][k]}/{r['requested'][k]}" for k in r["requested"])
    lines = [f"produced: {made}",
             (f"drafts: {r['drafts']} in {r['rounds']} round(s); near-duplicates removed: {r['duplicates_removed']}; "
              f"rejected by the checks: {r['rejected']}; surplus: {r['surplus']}")]
    if r["rejected_by_reason"]:
        lines.append("rejected: " + ", ".join(f"{k} {v}" for k, v in r["rejected_by_reason"].items()))
    if r["shortfall"]:
        lines.append("SHORT: " + ", ".join(f"{k} {v}" for k, v in r["shortfall"].items())
                     + " (not padded: raise --max-rounds, or use a stronger judge)")
    j = r["judge"]
    lines.append(f"judge {j['backend']}:{j['model']}: {j['calls']} calls, {j['cached']} from the ledger, "
                 f"{j['failed']} failed, {j['input_tokens']} input + {j['output_tokens']} output tokens")
    return "\n".join(lines)
