"""``ragmeter label``: a local page where people grade relevance; agreement; export to labels."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ragmeter.cli.app import app, format_option, friendly


def default_labels_path(dataset: str) -> Path:
    p = Path(dataset)
    return p.with_name(p.stem + ".labels.jsonl")


ONLY_LABELER = typer.Option(None, "--only-labeler", help="export only these labelers' labels (repeatable)")


@app.command("label")
@friendly
def label_command(
    dataset: str = typer.Argument(..., help="dataset file (.jsonl or .csv): the questions, and their retrieved lists"),
    corpus: str | None = typer.Option(None, "--corpus", help="chunk id -> text; without retrieved lists, candidates "
                                                            "are its top k by embedding similarity"),
    k: int = typer.Option(10, "--k", "-k", help="candidates shown per question"),
    labeler: str | None = typer.Option(None, "--labeler", help="your name (several labelers keep separate labels)"),
    labels: str | None = typer.Option(None, "--labels", help="the labels file (default: <dataset>.labels.jsonl)"),
    port: int = typer.Option(8765, "--port", help="port on 127.0.0.1 (0: any free port)"),
    embedder: str = typer.Option("minilm", "--embedder", help="for candidates from the corpus: minilm (bundled), "
                                                             "sentence-transformers:<model> or openai:<model>"),
    rel: int = typer.Option(1, "--rel", help="grades >= rel count as relevant (binary agreement)"),
    agreement: bool = typer.Option(False, "--agreement", help="print agreement and disagreements, serve nothing"),
    export: str | None = typer.Option(None, "--export", help="write a new dataset with the labels as `relevant`"),
    qrels: str | None = typer.Option(None, "--qrels", help="write the labels as TREC qrels"),
    resolve: str = typer.Option("median", "--resolve", help="for disagreements nobody adjudicated: median (lower), "
                                                           "min, max, or adjudicated (refuse to export)"),
    only: list[str] | None = ONLY_LABELER,
    labeled_only: bool = typer.Option(False, "--labeled-only", help="export only the samples someone labeled"),
    mark_unanswerable: bool = typer.Option(False, "--mark-unanswerable",
                                           help="export answerable=false where every labeler said the candidates "
                                                "cannot answer and none graded >= 1"),
    fmt: str = format_option("table", "json", what="agreement output"),
) -> None:
    """Serve a labeling page on 127.0.0.1 (one question at a time, grades 0-3 by keyboard or mouse,
    every click saved at once); or, with --agreement / --export / --qrels, read the labels file."""
    from ragmeter.io import load_dataset
    from ragmeter.label.store import graded_chunks, load_state

    labels_path = Path(labels) if labels else default_labels_path(dataset)
    if agreement or export or qrels:
        from ragmeter.label.agreement import agreement_report
        from ragmeter.label.tasks import tasks_from_labels

        state = load_state(labels_path)
        if not state.events:
            raise typer.BadParameter(f"no labels in {labels_path}", param_hint="--labels")
        data = load_dataset(dataset)
        tasks = tasks_from_labels(data.samples, graded_chunks(state), k=k)
        if agreement:
            report = agreement_report(tasks, state, rel=rel)
            typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if fmt == "json" else agreement_text(report))
        if export or qrels:
            from ragmeter.label.export import export_dataset, export_qrels, final_labels

            final = final_labels(tasks, state, labelers=only, resolve=resolve)
            how = ", ".join(f"{n} {k_}" for k_, n in sorted(final.how.items()))
            typer.echo(f"labels from {', '.join(final.labelers)}: {how or 'none'}")
            if export:
                counts = export_dataset(dataset, export, final, labeled_only=labeled_only,
                                        mark_unanswerable=mark_unanswerable)
                typer.echo(f"{counts['samples']} samples ({counts['labeled']} labeled) -> {export}")
                for line in change_lines(counts["changes"]):
                    typer.echo(line)
            if qrels:
                typer.echo(f"{export_qrels(qrels, final)} qrels lines -> {qrels}")
        return
    serve(dataset, corpus=corpus, k=k, labeler=labeler, labels_path=labels_path, port=port, embedder=embedder, rel=rel)


SHOWN_CHANGES = 20  # samples whose label changes are printed one by one


def change_lines(changes: list) -> list[str]:
    """What the export did to the labels the dataset had: totals, then a line per sample (the
    first :data:`SHOWN_CHANGES`)."""
    if not changes:
        return []
    n_changed, n_added, n_kept = (sum(len(getattr(c, part)) for c in changes) for part in ("changed", "added", "kept"))
    lines = [f"labels: {n_changed} changed, {n_added} added, {n_kept} kept from the dataset (not graded on the "
             f"page), in {len(changes)} samples"]
    lines += ["  " + c.text() for c in changes[:SHOWN_CHANGES]]
    if len(changes) > SHOWN_CHANGES:
        lines.append(f"  ... and {len(changes) - SHOWN_CHANGES} more samples")
    return lines


def serve(dataset: str, *, corpus: str | None, k: int, labeler: str | None, labels_path: Path, port: int,
          embedder: str, rel: int) -> None:
    from urllib.parse import quote

    from ragmeter.io import load_corpus, load_dataset
    from ragmeter.label.server import LabelApp, LabelServer
    from ragmeter.label.store import NAME, NAME_RULE, LabelStore
    from ragmeter.label.tasks import build_tasks

    if labeler is not None and not NAME.match(labeler):
        raise typer.BadParameter(f"use {NAME_RULE}, got {labeler[:70]!r}", param_hint="--labeler")
    data = load_dataset(dataset, corpus=corpus)
    texts = load_corpus(corpus) if corpus else None
    the_embedder = None
    if any(not s.retrieved for s in data.samples) and embedder != "minilm":
        from ragmeter.embeddings import make_embedder

        the_embedder = make_embedder(embedder)
    tasks = build_tasks(data.samples, corpus=texts, k=k, embedder=the_embedder)
    store = LabelStore(labels_path)
    if store.trimmed:
        typer.echo(f"note: cut a torn last line ({store.trimmed} bytes) off {labels_path}: an interrupted write",
                   err=True)
    try:
        server = LabelServer(LabelApp(tasks, store, title=Path(dataset).name, rel=rel), port=port)
    except OSError as exc:
        store.close()
        raise typer.BadParameter(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another port, "
                                 f"or 0 for any free one", param_hint="--port") from None
    url = server.url + (f"?labeler={quote(labeler)}" if labeler else "")
    typer.echo(f"labeling {len(tasks)} questions; labels are saved to {labels_path} at every click")
    typer.echo(f"open {url}  (Ctrl-C stops the server; nothing is lost)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.httpd.server_close()
        store.close()


def agreement_text(report: dict) -> str:
    def f(x: float | None) -> str:
        return "undefined" if x is None else f"{x:.3f}"

    lines = [f"labelers: {', '.join(report['labelers']) or '(none)'}; relevant means grade >= {report['rel']}"]
    lines.append(f"{'labelers':<24} {'pairs':>6} {'same':>7} {'kappa':>9} {'w.kappa':>9} {'binary':>9}")
    for p in report["pairs"]:
        lines.append(f"{' / '.join(p['labelers']):<24} {p['items']:>6} {f(p['exact_agreement']):>7} "
                     f"{f(p['cohen_kappa']):>9} {f(p['weighted_kappa_quadratic']):>9} {f(p['binary_kappa']):>9}")
    if report["fleiss"]:
        fl = report["fleiss"]
        lines.append(f"Fleiss' kappa ({len(fl['labelers'])} labelers, {fl['items']} pairs graded by all): "
                     f"{f(fl['fleiss_kappa'])} (binary {f(fl['binary_fleiss_kappa'])})")
    lines.append(f"disagreements: {len(report['disagreements'])} questions")
    for d in report["disagreements"]:
        lines.append(f"  {d['sample']}: {d['question'][:70]}")
        for c in d["chunks"]:
            grades = ", ".join(f"{w} {g}" for w, g in c["grades"].items())
            final = f" -> final {c['final']['grade']} ({c['final']['by']})" if c["final"] else " -> open"
            lines.append(f"    {c['chunk']}: {grades}{final}")
        if d["unanswerable"]:
            lines.append("    cannot be answered: " + ", ".join(f"{w} {'yes' if v else 'no'}"
                                                             for w, v in d["unanswerable"].items()))
    return "\n".join(lines)
