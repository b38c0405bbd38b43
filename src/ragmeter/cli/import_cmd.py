"""``ragmeter import beir|trec|msmarco``: a standard test collection as a dataset and a corpus."""

from __future__ import annotations

import typer

from ragmeter.cli.app import app, friendly

import_app = typer.Typer(add_completion=False, no_args_is_help=True,
                         help="Turn a standard test collection (BEIR, TREC, MS MARCO) into dataset.jsonl + "
                              "corpus.jsonl that `ragmeter eval` reads.")
app.add_typer(import_app, name="import")

OUT = typer.Option(..., "--out", "-o", help="folder to write dataset.jsonl and corpus.jsonl into")
COMPLETE = typer.Option(False, "--complete", help="keep judged queries the run misses, with an empty ranking "
                                                  "(trec_eval -c)")
FORCE = typer.Option(False, "--force", help="replace a dataset.jsonl / corpus.jsonl already in --out (refused "
                                            "without it)")


def _report(written) -> None:
    typer.echo(f"{written.samples} samples -> {written.dataset}")
    typer.echo(f"{written.documents} documents -> {written.corpus}")
    for note in written.notes:
        typer.echo(f"note: {note}", err=True)


@import_app.command("beir")
@friendly
def import_beir(folder: str = typer.Argument(..., help="a folder in BEIR's layout: corpus.jsonl, queries.jsonl, "
                                                       "qrels/<split>.tsv"),
                split: str = typer.Option("test", "--split", help="which qrels/<split>.tsv"),
                run: str | None = typer.Option(None, "--run", help="a TREC run file to score"),
                out: str = OUT, complete: bool = COMPLETE, force: bool = FORCE) -> None:
    """BEIR's layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."""
    from ragmeter.io.collections.beir import load_beir
    from ragmeter.io.collections.collection import write_collection

    _report(write_collection(load_beir(folder, split, run=run), out, complete=complete, force=force))


@import_app.command("trec")
@friendly
def import_trec(topics: str = typer.Option(..., "--topics", help="topics: SGML <top>, XML <topic> or qid<TAB>text"),
                qrels: str = typer.Option(..., "--qrels", help="qrels: qid iter docno rel"),
                run: str | None = typer.Option(None, "--run", help="a TREC run file to score"),
                docs: str | None = typer.Option(None, "--docs", help="documents: TREC <DOC> SGML or a "
                                                                       "{id, text} JSONL/CSV corpus"),
                field: str = typer.Option("title", "--field", help="topic text: title, desc or narr"),
                out: str = OUT, complete: bool = COMPLETE, force: bool = FORCE) -> None:
    """TREC topics + qrels (+ a run, + documents)."""
    from ragmeter.io.collections.collection import write_collection
    from ragmeter.io.collections.trec import load_trec

    _report(write_collection(load_trec(topics, qrels, run=run, docs=docs, field=field), out, complete=complete,
                             force=force))


@import_app.command("msmarco")
@friendly
def import_msmarco(collection: str = typer.Option(..., "--collection", help="collection.tsv: pid<TAB>passage"),
                   queries: str = typer.Option(..., "--queries", help="queries.<split>.tsv: qid<TAB>query"),
                   qrels: str = typer.Option(..., "--qrels", help="qrels.<split>.tsv: qid 0 pid 1"),
                   run: str | None = typer.Option(None, "--run", help="qid<TAB>pid<TAB>rank, or a TREC run"),
                   out: str = OUT, complete: bool = COMPLETE, force: bool = FORCE) -> None:
    """MS MARCO's TSV files (passage or document ranking)."""
    from ragmeter.io.collections.collection import write_collection
    from ragmeter.io.collections.msmarco import load_msmarco

    _report(write_collection(load_msmarco(collection, queries, qrels, run=run), out, complete=complete,
                             force=force))
