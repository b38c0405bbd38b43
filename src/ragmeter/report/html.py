"""A self-contained HTML report of a run: one file, no CDN, no network, works from file://.

Sections: the headline table (mean, 95% interval, coverage), a distribution plot per metric
(inline SVG), the diagnosis counts, a per-query table that sorts (click a header) and
filters (type in the box), and a drill-down per query: the ranked list with relevance
marks, what reached the prompt, the answer's claims with their verdicts and the chunks
cited, the reference claims and which are missing, and the diagnosis findings.

Every string that comes from the data is escaped with ``html.escape``; the script only
reads the DOM (no data is embedded as code). A run of more than a thousand samples is written as a
page and its table's pages beside it (:mod:`ragmeter.report.html_pages`), with the same drill-down.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any

from ragmeter.analysis.diagnosis import QueryDiagnosis, count_labels, diagnose
from ragmeter.core.errors import RagmeterError
from ragmeter.core.history import plain
from ragmeter.core.sample import Sample
from ragmeter.io.writer import write_output
from ragmeter.metrics import get_spec
from ragmeter.metrics.generation.faithfulness import claim_weight
from ragmeter.trust.judge_uncertainty import judge_agreement


def escape(value: Any) -> str:
    """Text from the data, safe in HTML text and attribute values (``None`` is empty)."""
    return html.escape("" if value is None else str(value), quote=True)


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0 0 4px;font-size:20px}
header p{margin:2px 0;color:#c9cfdb;font-size:13px}main{padding:20px 28px;max-width:1280px}
h2{font-size:16px;margin:26px 0 10px}table{border-collapse:collapse;background:#fff;width:100%;
box-shadow:0 1px 2px rgba(0,0,0,.06)}th,td{padding:6px 10px;border-bottom:1px solid #e6e8ee;text-align:left;
vertical-align:top;overflow-wrap:anywhere}th{background:#eef0f4;font-weight:600;cursor:pointer;overflow-wrap:normal}td.num{text-align:right;white-space:nowrap;
font-variant-numeric:tabular-nums}.nc{color:#8a92a6;font-style:italic}.failed{color:#b3261e;font-weight:600}
.plots{display:flex;flex-wrap:wrap;gap:14px}.plot{background:#fff;padding:8px 10px;box-shadow:0 1px 2px rgba(0,0,0,.06)}
.plot h3{margin:0 0 4px;font-size:13px}details{background:#fff;margin:8px 0;padding:8px 14px;
box-shadow:0 1px 2px rgba(0,0,0,.06)}summary{cursor:pointer;font-weight:600}.mark{display:inline-block;width:18px;
text-align:center;border-radius:3px;font-weight:700}.R{background:#d7f0dd;color:#17692d}.N{background:#eceef2;color:#6b7385}
.v-supported,.v-pass{color:#17692d;font-weight:600}.v-fail{color:#b3261e;font-weight:600}
.v-cannot_verify,.v-unable_to_verify{color:#8a5a00;font-weight:600}.v-contradicted{color:#b3261e;font-weight:600}.v-not_found{color:#8a5a00;
font-weight:600}.tag{display:inline-block;background:#fde7e4;color:#8c1d13;border-radius:10px;padding:1px 9px;
margin:2px 4px 2px 0;font-size:12px}#filter{padding:6px 10px;width:320px;margin-bottom:8px;border:1px solid #c9cfdb;
border-radius:4px}.muted{color:#6b7385}.ver{color:#6b7385;white-space:nowrap}.agree{font-size:12px;color:#3b4256;white-space:nowrap}
#queries th,#queries td.num{padding:6px 6px}#queries td.q{min-width:14em}.plot .n{font-size:12px;color:#6b7385}
main{box-sizing:border-box;max-width:1600px}.lbl{white-space:nowrap}.history{white-space:pre-wrap}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

SCRIPT = """
window.onerror=function(m){document.body.dataset.errors=(document.body.dataset.errors||'')+m+';'};
(function(){
 var table=document.getElementById('queries');
 var rows=Array.prototype.slice.call(table.tBodies[0].rows);
 Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
  th.addEventListener('click',function(){
   var asc=th.dataset.sort!=='asc';th.dataset.sort=asc?'asc':'desc';
   rows.sort(function(a,b){
    var x=a.cells[i].dataset.value,y=b.cells[i].dataset.value;
    var nx=parseFloat(x),ny=parseFloat(y);
    var c=(isNaN(nx)||isNaN(ny))?String(x).localeCompare(String(y)):(nx-ny);
    return asc?c:-c;});
   rows.forEach(function(r){table.tBodies[0].appendChild(r)});});});
 document.getElementById('filter').addEventListener('input',function(ev){
  var q=ev.target.value.toLowerCase();
  rows.forEach(function(r){r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none'});});
 document.body.dataset.ready='1';
})();
"""


def _num(v: float | None) -> str:
    return "n/c" if v is None else f"{v:.3f}"


def _histogram(values: list[float], bins: int = 10, width: int = 220, height: int = 92) -> str:
    """Counts of values in ten bins over [0, 1], each count written above its bar; one value or
    none is said in words (a histogram of one value shows nothing)."""
    if len(values) < 2:
        return histogram_svg([], len(values), values[0] if values else None)
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    return histogram_svg(counts, len(values), None, width=width, height=height)


def histogram_svg(counts: list[int], n: int, single: float | None, width: int = 220, height: int = 92) -> str:
    """The histogram of ``n`` values counted in ``counts`` (bins over [0, 1]); ``single``: the value
    when there is one."""
    if n < 2:
        said = "no value scored" if not n else f"n = 1 (value {single:.3f}): no distribution"
        return f'<p class="n">{said}</p>'
    bins = len(counts)
    top = max(counts) or 1
    bar = width / bins
    rects = "".join(
        f'<rect x="{i * bar + 1:.1f}" y="{height - 14 - c / top * (height - 30):.1f}" width="{bar - 2:.1f}" '
        f'height="{c / top * (height - 30):.1f}" fill="#4c6ef5">'
        f'<title>{i / bins:.1f}-{(i + 1) / bins:.1f}: {c}</title></rect>'
        + (f'<text x="{i * bar + bar / 2:.1f}" y="{height - 16 - c / top * (height - 30):.1f}" font-size="10" '
           f'text-anchor="middle" fill="#1d2330">{c}</text>' if c else "")
        for i, c in enumerate(counts))
    axis = (f'<text x="0" y="{height - 2}" font-size="10" fill="#6b7385">0</text>'
            f'<text x="{width - 8}" y="{height - 2}" font-size="10" fill="#6b7385">1</text>')
    return (f'<svg width="{width}" height="{height}" role="img" aria-label="distribution">{rects}{axis}</svg>'
            f'<p class="n">n = {n}</p>')


def _interval(m: dict) -> str:
    """The 95% interval, or why there is none (one scored value has no interval)."""
    ci = m.get("ci95")
    if m.get("scored", 0) == 1:
        return "n = 1: no interval"
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"


def shorten(text: str, limit: int = 90) -> str:
    """``text`` cut at a word boundary within ``limit`` characters, with an ellipsis when cut.

    >>> shorten("Is my R2 still under warranty after fourteen months?", 30)
    'Is my R2 still under…'
    """
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "\u2026"


def column_header(name: str) -> str:
    """A column header that may wrap after ``_`` and before ``@`` or ``(`` (metric names are long)."""
    text = escape(name)
    for mark in ("_", ","):
        text = text.replace(mark, mark + "<wbr>")
    return text.replace("@", "<wbr>@").replace("(", "<wbr>(")


def _cell(cell: dict | None) -> str:
    if cell is None:
        return '<td class="nc" data-value="">-</td>'
    if cell["status"] == "scored":
        return f'<td class="num" data-value="{cell["value"]!r}">{cell["value"]:.3f}</td>'
    cls = "failed" if cell["status"] == "failed" else "nc"
    why = cell.get("reason") or cell.get("error") or ""
    label = "failed" if cell["status"] == "failed" else "n/c"
    return f'<td class="{cls}" data-value="" title="{escape(why)}">{label}</td>'


def _ranked(s: Sample) -> str:
    rows = []
    for rank, c in enumerate(s.retrieved, start=1):
        rel = s.relevance.get(c.id, 0) >= 1
        prompt = "in prompt" if c.id in s.context_ids else "dropped"
        rows.append(f'<tr><td class="num">{rank}</td><td><span class="mark {"R" if rel else "N"}">'
                    f'{"R" if rel else "."}</span></td><td>{escape(c.id)}</td><td class="muted">{prompt}</td>'
                    f'<td>{escape(c.text)}</td></tr>')
    missing = [cid for cid, g in s.relevance.items() if g >= 1 and cid not in s.retrieved_ids]
    extra = f'<p class="muted">relevant but not retrieved: {escape(", ".join(missing))}</p>' if missing else ""
    return ('<table><thead><tr><th>rank</th><th>rel</th><th>chunk</th><th>prompt</th><th>text</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>{extra}')


def _claims(title: str, claims: Any, verdicts: dict[str, Any], faithfulness: Any = None) -> str:
    """The claims with each judgment's verdict and sources; where the judge weighs support (the
    offline judge), its support (and the model stage's answer) beside the verdict, and for the
    answer's claims the content words each weighs in faithfulness and whether it addresses the
    question, with the sums that reconcile both scores (:func:`_sums`)."""
    if not isinstance(claims, list):
        reason = claims.get("unavailable") if isinstance(claims, dict) else None
        return f'<p class="muted">{escape(title)}: {escape(reason or "not judged in this run")}</p>'
    if not claims:
        return f'<p class="muted">{escape(title)}: none</p>'
    heads = "".join(f"<th>{escape(name)}</th>" for name in verdicts)
    context = verdicts.get("answer@context")
    weighed = isinstance(context, list) and bool(context) and all(v.get("support") is not None for v in context)
    weights = [claim_weight(str(c["text"])) for c in claims] if weighed else []
    on_topic = any(c.get("addresses_question") is not None for c in claims)
    rows, asked = [], False
    for i, c in enumerate(claims):
        cells = []
        for v in verdicts.values():
            found = next((x for x in v if x["claim"] == c["id"]), None) if isinstance(v, list) else None
            cells.append('<td class="nc">-</td>' if found is None else _verdict_cell(found))
            asked = asked or (found is not None and found.get("model") is not None)
        weight = f'<td class="num">{weights[i]}</td>' if weighed else ""
        topic = f"<td>{_YES_NO.get(c.get('addresses_question'), '-')}</td>" if on_topic else ""
        rows.append(f'<tr><td class="num">{escape(c["id"])}</td><td>{escape(c["text"])}</td>{weight}{topic}'
                    f'{"".join(cells)}</tr>')
    weight_head = '<th title="content words: the claim\'s weight in faithfulness">words</th>' if weighed else ""
    topic_head = ('<th title="addresses the question: answer relevancy (statements) counts these">on topic</th>'
                  if on_topic else "")
    return (f'<h4>{escape(title)}</h4><table><thead><tr><th>#</th><th>claim</th>{weight_head}{topic_head}{heads}'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'{_sums(claims, context if weighed else None, weights, faithfulness, asked, on_topic)}')


_YES_NO = {True: "yes", False: "no"}


def _verdict_cell(found: dict) -> str:
    src = f' <span class="muted">({escape(", ".join(found["sources"]))})</span>' if found["sources"] else ""
    verdict = escape(found["verdict"])
    held = found.get("support")
    held_text = f' <span class="muted">support {float(held):.3f}</span>' if held is not None else ""
    if found.get("model") is not None:
        held_text += f' <span class="muted">model {float(found["model"]):+.2f}</span>'
    return f'<td><span class="v-{verdict}">{verdict}</span>{held_text}{src}</td>'


def _sums(claims: list, context: list | None, weights: list[int], faithfulness: Any, asked: bool,
          on_topic: bool) -> str:
    """The lines that reconcile the answer's scores from its claims table: faithfulness's
    weighted sum where the judge weighs support (``context``), with what support and the model's
    answer mean, and answer relevancy's count of claims that address the question."""
    lines = []
    if context is not None:
        by_id = {v["claim"]: float(v["support"]) for v in context}
        credit = sum(w * by_id.get(c["id"], 0.0) for w, c in zip(weights, claims))
        shown = f" = {faithfulness:.3f}" if isinstance(faithfulness, (int, float)) else ""
        lines.append(f'faithfulness = &Sigma; words &times; support / &Sigma; words = {credit:.3f} / {sum(weights)}'
                     f'{shown} (each claim weighed by its content words; the supports are shown rounded). Support: '
                     "how likely the passages support the claim, by the offline judge's evidence: 1 when "
                     "decisive, 0 when contradicted, its probability in between, so a claim too uncertain to call "
                     "supported (not_found) still counts in part."
                     + (" Model: the bundled model asked about an uncertain claim (--judge local:model), "
                        "log P(supported) &minus; log P(contradicted); negative leans to contradicted." if asked
                        else ""))
    marked = [c.get("addresses_question") for c in claims]
    if on_topic and None not in marked:
        lines.append(f"answer relevancy (statements) = claims on topic / claims = {sum(map(bool, marked))} / "
                     f"{len(marked)} = {sum(map(bool, marked)) / len(marked):.3f}")
    return "".join(f'<p class="muted">{line}</p>' for line in lines)


def _facts(facts) -> str:
    """The answer's facts against the system of record: verdict, the record's value, the reason."""
    if facts is None:
        return ""
    if not isinstance(facts, list):
        return f'<h4>Facts against the records</h4><p class="muted">{escape(facts.get("unavailable", ""))}</p>'
    rows = "".join(
        f'<tr><td class="num">{escape(c["fact"].get("claim_id") or "-")}</td><td>{escape(c["fact"]["entity"])}</td>'
        f'<td>{escape(c["fact"]["attribute"])}</td><td>{escape(c["fact"]["value"])}'
        f'{" " + escape(c["fact"]["unit"]) if c["fact"].get("unit") else ""}</td>'
        f'<td><span class="v-{escape(c["verdict"])}">{escape(c["verdict"])}</span></td>'
        f'<td>{escape(c["reason"])}</td></tr>'
        for c in facts)
    return ('<h4>Facts against the records</h4><table><thead><tr><th>claim</th><th>entity</th><th>attribute</th>'
            f'<th>stated</th><th>verdict</th><th>evidence</th></tr></thead><tbody>{rows or ""}</tbody></table>')


def _actions(grade) -> str:
    """Each action criterion with its verdict and evidence."""
    if grade is None:
        return ""
    if "criteria" not in grade:
        return f'<h4>Action criteria</h4><p class="muted">{escape(grade.get("unavailable", ""))}</p>'
    rows = "".join(
        f'<tr><td>{escape(c["id"])}</td><td>{escape(c["criterion"])}</td>'
        f'<td><span class="v-{escape(c["verdict"])}">{escape(c["verdict"])}</span></td>'
        f'<td>{escape(c["evidence"])}</td></tr>'
        for c in grade["criteria"])
    return (f'<h4>Action criteria: {escape(grade.get("verdict", ""))}</h4>'
            f'<table><thead><tr><th>id</th><th>criterion</th>'
            f'<th>verdict</th><th>evidence</th></tr></thead><tbody>{rows}</tbody></table>')


def headline_rows(run, metrics: list[str]) -> str:
    rows = []
    for name in metrics:
        m = run.summary[name]
        prov = run.setup.get("metrics", {}).get(name, {})
        measured = judge_agreement(prov)
        agree = (f'<br><span class="agree" title="{escape(measured.labeled_set)}; {escape(measured.method)}">'
                 f'{escape(measured.text())}</span>') if measured else ""
        try:
            definition = get_spec(prov.get("metric_name", name.split("(")[0].split("@")[0])).definition
        except RagmeterError:
            definition = ""
        rows.append(
            f'<tr><td>{escape(name)}{agree}</td><td class="num">{_num(m["mean"])}</td>'
            f'<td class="num">{_interval(m)}</td><td class="num">{m["scored"]}</td>'
            f'<td class="num">{m["not_computed"]}</td><td class="num">{m["failed"]}</td>'
            f'<td class="ver">v{escape(prov.get("metric_version", "?"))}</td>'
            f'<td class="muted">{escape(definition)}</td></tr>')
    return "".join(rows)


def query_row(r: dict, s: Sample | None, d: QueryDiagnosis | None, metrics: list[str]) -> str:
    labels = " ".join(d.labels) if d is not None else ""
    shown = " ".join(f'<span class="lbl">{escape(x)}</span>' for x in (d.labels if d is not None else []))
    return (f'<tr><td data-value="{escape(r["id"])}"><a href="#q-{escape(r["id"])}">{escape(r["id"])}</a></td>'
            f'<td class="q" data-value="{escape(s.question if s else "")}" title="{escape(s.question if s else "")}">'
            f'{escape(shorten(s.question or "") if s else "")}</td>'
            + "".join(_cell(r["metrics"].get(name)) for name in metrics)
            + f'<td data-value="{escape(labels)}">{shown}</td></tr>')


def _conversation(s: Sample) -> str:
    """A conversation turn's history and the question's answerability (MTRAG tasks carry both):
    nothing for a single-turn, answerable sample with no answerability label."""
    out = ""
    history = plain(s.metadata.get("history"))  # a conversation's turn: its TurnHistory, read as the string
    if isinstance(history, str) and history.strip() not in ("", "(none)"):  # MTRAG's first turns say "(none)"
        turn = s.metadata.get("turn")
        out += (f'<h4>Conversation before this question{f" (turn {escape(turn)})" if turn is not None else ""}'
                f'</h4><p class="history">{escape(history)}</p>')
    label = s.metadata.get("answerability")
    shown = ", ".join(map(str, label)) if isinstance(label, list) else label
    if shown or not s.answerable:
        scored = "answerable" if s.answerable else "unanswerable"
        out += (f"<p><b>Answerability:</b> {escape(shown or scored)}"
                + (f' <span class="muted">(scored as {scored})</span>' if shown else "") + "</p>")
    return out


def _request(s: Sample) -> str:
    """For one retrieval of a request that retrieved several times (read from a trace): which, and
    its siblings, linked."""
    n, i, rid = s.metadata.get("retrievals"), s.metadata.get("retrieval"), s.metadata.get("request")
    if not isinstance(n, int) or n < 2 or rid is None:
        return ""
    links = ", ".join(f'<a href="#q-{escape(f"{rid}#{j}")}">#{j}</a>' for j in range(1, n + 1))
    query = f"; its query: {escape(str(s.metadata['query']))}" if s.metadata.get("query") else ""
    return (f"<p><b>Request</b> {escape(str(rid))}: retrieval {i} of {n} ({links}){query}; the answer is scored "
            f"once, on #{n}, against every retrieval's chunks</p>")


def drill_down(r: dict, s: Sample, d: QueryDiagnosis | None) -> str:
    ev = r.get("evidence") or {}
    verdicts = ev.get("verdicts") or {}
    findings = "".join(f'<li><span class="tag">{escape(f.label)}</span> {escape(f.evidence)}'
                       + (f'<br><span class="muted">lever: {escape(f.lever)}</span>' if f.lever else "") + "</li>"
                       for f in d.findings) if d else ""
    findings += "".join(f'<li><span class="tag">{escape(f.label)}</span> unable to verify: {escape(f.evidence)}</li>'
                        for f in d.unverified) if d else ""
    answer = f"<p><b>Answer:</b> {escape(s.answer)}</p>" if s.answer else ""
    reference = f"<p><b>Reference:</b> {escape(s.reference)}</p>" if s.reference else ""
    claims = ""
    if ev:
        faithfulness = ((r.get("metrics") or {}).get("faithfulness") or {}).get("value")
        claims = (_claims("Answer claims", ev.get("answer_claims"),
                          {k: v for k, v in verdicts.items() if k.startswith("answer@")}, faithfulness)
                  + _claims("Reference claims", ev.get("reference_claims"),
                            {k: v for k, v in verdicts.items() if k.startswith("reference@")})
                  + _facts(ev.get("facts")) + _actions(ev.get("actions")))
    return (f'<details id="q-{escape(s.id)}"><summary>{escape(s.id)}: {escape(s.question)}</summary>'
            f'{_request(s)}{_conversation(s)}<h4>Ranked list</h4>{_ranked(s)}'
            f'<p><b>Reached the prompt:</b> {escape(", ".join(s.context_ids)) or "nothing"}</p>'
            f'{answer}{reference}{claims}'
            f'<h4>Diagnosis</h4><ul>{findings or "<li>no failure point found</li>"}</ul></details>')


def render_html(run) -> str:
    """The whole report as one HTML document."""
    samples = {s.id: s for s in run.samples()}
    found = diagnose(list(samples.values()), run.results)
    by_id = {d.id: d for d in found}
    metrics = list(run.summary)
    setup = run.setup
    started = datetime.fromtimestamp(setup.get("started", 0), timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    judge = setup.get("options", {}).get("judge") or "none"
    head_rows = [headline_rows(run, metrics)]
    plots = "".join(f'<div class="plot"><h3>{escape(name)}</h3>'
                    f'{_histogram([v for v in run.values(name).values() if v is not None])}</div>' for name in metrics)
    counts = count_labels(found)
    diag = ("".join(f'<span class="tag">{escape(k)}: {v}</span>' for k, v in counts.items() if v)
            or "no failure point found")
    q_rows = [query_row(r, samples.get(r["id"]), by_id.get(r["id"]), metrics) for r in run.results]
    q_head = "".join(f"<th>{column_header(name)}</th>" for name in ["query", "question", *metrics, "failure points"])
    drill = [drill_down(r, samples[r["id"]], by_id.get(r["id"])) for r in run.results if r["id"] in samples]

    dataset, version = setup.get("dataset", {}), setup.get("ragmeter_version")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>ragmeter report: {escape(run.name)}</title><style>{CSS}</style></head>
<body><header><h1>ragmeter report: {escape(run.name)}</h1>
<p>dataset {escape(dataset.get("path"))} &middot; fingerprint {escape(dataset.get("fingerprint"))}
&middot; {len(run.results)} samples &middot; judge {escape(judge)} &middot; ragmeter {escape(version)}
&middot; {escape(run.status)} &middot; started {escape(started)}</p></header>
<main><h2>Headline</h2><table><thead><tr><th>metric</th><th>mean</th><th>95% CI</th><th>scored</th>
<th>not computed</th><th>failed</th><th>version</th><th>definition</th></tr></thead>
<tbody>{"".join(head_rows)}</tbody></table>
<h2>Distributions</h2><div class="plots">{plots}</div>
<h2>Diagnosis</h2><p>{diag}</p>
<h2>Queries</h2><input id="filter" placeholder="filter queries" aria-label="filter queries">
<table id="queries"><thead><tr>{q_head}</tr></thead><tbody>{"".join(q_rows)}</tbody></table>
<h2>Drill-down</h2>{"".join(drill)}</main>
<script>{SCRIPT}</script></body></html>
"""


def write_html(run, path: str) -> None:
    """Write the report as one file, atomically; a missing or read-only folder is a ``StorageError``
    (:func:`ragmeter.report.html_pages.write_report` writes a large run as a page and its pages)."""
    write_output(path, render_html(run), what="report", option="--html")

