"""The HTML report of a large run: one page that stays a page at any n, and its table's pages in a
folder beside it, loaded when shown.

A run of more than :data:`INLINE_LIMIT` samples is written as ``REPORT.html`` plus
``REPORT.html.pages/`` (``0000.js``, ``0001.js``, ...: :data:`PAGE_ROWS` samples each). The page
holds what a reader looks at first: the headline table, a distribution per metric and the
diagnosis counts (over every sample), and the worst samples (per metric the :data:`WORST`
lowest, the highest for a lower-is-better one, and the failed ones) with their drill-downs, as
:mod:`ragmeter.report.html` renders them. The per-sample table shows one page of samples at a
time (previous, next, or a page number), sorts and filters that page, and opens any sample's
drill-down below it: the ranked list with relevance marks, what reached the prompt, the answer
and the reference, the claims with their verdicts, and the diagnosis findings.

Safety: each page file is a call ``ragmeterPage(i, [...])`` with the samples as JSON data
(ASCII, every ``<`` written ``\\u003c``); the script puts the data into the page as text
(``textContent``), never as markup, except a drill-down that :func:`ragmeter.report.html.drill_down`
rendered in Python for a sample with judged evidence (claims, facts, actions), which is that
function's escaped HTML, as in the one-file report. The page's policy allows scripts from its own
folder (``'self'``: the pages) and inline ones, and nothing from anywhere else.

Memory follows one page of rows (the rows are read from ``results.jsonl`` a page at a time);
time is one pass over the samples (their diagnosis and their data). A label-only run's pages are
put together as JSON from its columns (:mod:`ragmeter.report.label_page_json`: the same bytes
its records encode to), with the garbage collector paused (nothing they make forms a cycle).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ragmeter.analysis.diagnosis import LABELS, QueryDiagnosis, diagnose_sample
from ragmeter.core.errors import RagmeterError, StorageError
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.result_columns import columns_of
from ragmeter.core.sample import Sample
from ragmeter.io.writer import write_output
from ragmeter.metrics import get_spec
from ragmeter.report.html import (
    CSS,
    column_header,
    drill_down,
    escape,
    headline_rows,
    histogram_svg,
    query_row,
    shorten,
    write_html,
)
from ragmeter.report.label_page_json import PageJson, page_json
from ragmeter.report.label_pages import label_pages

INLINE_LIMIT = 1_000  # samples: a run up to this size is one file (report.html as it was)
PAGE_ROWS = 1_000  # samples per page file
WORST = 10  # samples shown in the page per metric, worst first
FAILED_SHOWN = 20  # failed samples shown in the page, at most
BINS = 10
PAGED_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline' 'self'; img-src data:"

PAGED_CSS = """
.pager{margin:6px 0 8px;display:flex;gap:8px;align-items:center}.pager button{padding:4px 10px}
#page-no{width:70px;padding:4px}#drill-here:empty{display:none}
"""

PAGED_SCRIPT = """
window.onerror=function(m){document.body.dataset.errors=(document.body.dataset.errors||'')+m+';'};
(function(){
 var table=document.getElementById('queries'),body=table.tBodies[0];
 var pages=+table.dataset.pages,base=table.dataset.base,metrics=+table.dataset.metrics;
 var cache={},want=0,shown=[];
 function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
 function pad(i){var s=String(i);while(s.length<4)s='0'+s;return s;}
 function cell(c){
  if(typeof c==='number'){var td=el('td','num',c.toFixed(3));td.dataset.value=String(c);return td;}
  var f=c[0]==='failed',td2=el('td',f?'failed':'nc',f?'failed':'n/c');td2.dataset.value='';
  if(c[1])td2.title=c[1];return td2;}
 function row(r){
  var tr=el('tr'),a=el('a',null,r[0]);a.href='#';
  a.addEventListener('click',function(ev){ev.preventDefault();open(r);});
  var id=el('td');id.dataset.value=r[0];id.appendChild(a);tr.appendChild(id);
  var q=el('td','q',r[2]);q.dataset.value=r[1]||'';q.title=r[1]||'';tr.appendChild(q);
  for(var i=0;i<metrics;i++)tr.appendChild(cell(r[3][i]));
  var labels=el('td');labels.dataset.value=r[4].join(' ');
  r[4].forEach(function(x,i){if(i)labels.appendChild(document.createTextNode(' '));
   labels.appendChild(el('span','lbl',x));});
  tr.appendChild(labels);return tr;}
 function table2(heads,rows){
  var t=el('table'),th=el('thead'),h=el('tr');heads.forEach(function(x){h.appendChild(el('th',null,x));});
  th.appendChild(h);t.appendChild(th);var b=el('tbody');rows.forEach(function(r){b.appendChild(r);});
  t.appendChild(b);return t;}
 function open(r){
  var here=document.getElementById('drill-here');here.textContent='';
  var d=r[5];
  if(d.html!==undefined){var t=document.createElement('template');t.innerHTML=d.html;here.appendChild(t.content);}
  else{
   var det=el('details');det.open=true;det.id='q-'+r[0];
   det.appendChild(el('summary',null,r[0]+': '+(r[1]===null?'':r[1])));
   det.appendChild(el('h4',null,'Ranked list'));
   var ids=d[0],ctx=d[4]===null?ids:d[4];
   det.appendChild(table2(['rank','rel','chunk','prompt','text'],ids.map(function(c,i){
    var tr=el('tr'),mk=d[1].charCodeAt(i)-48;tr.appendChild(el('td','num',i+1));var m=el('td'),rel=mk&1;
    m.appendChild(el('span','mark '+(rel?'R':'N'),rel?'R':'.'));tr.appendChild(m);
    tr.appendChild(el('td',null,c));tr.appendChild(el('td','muted',mk&2?'in prompt':'dropped'));
    tr.appendChild(el('td',null,d[2]&&d[2][i]!==null?d[2][i]:''));return tr;})));
   if(d[3].length)det.appendChild(el('p','muted','relevant but not retrieved: '+d[3].join(', ')));
   var p=el('p');p.appendChild(el('b',null,'Reached the prompt:'));
   p.appendChild(document.createTextNode(' '+(ctx.join(', ')||'nothing')));det.appendChild(p);
   [['Answer:',d[5]],['Reference:',d[6]]].forEach(function(x){if(x[1]){var q=el('p');q.appendChild(el('b',null,x[0]));
    q.appendChild(document.createTextNode(' '+x[1]));det.appendChild(q);}});
   det.appendChild(el('h4',null,'Diagnosis'));var ul=el('ul');
   d[7].forEach(function(f){var li=el('li');li.appendChild(el('span','tag',f[0]));
    li.appendChild(document.createTextNode(' '+f[1]));
    if(f[2]){li.appendChild(el('br'));li.appendChild(el('span','muted','lever: '+f[2]));}ul.appendChild(li);});
   if(!d[7].length)ul.appendChild(el('li',null,'no failure point found'));
   det.appendChild(ul);here.appendChild(det);}
  here.scrollIntoView();}
 function show(i){
  shown=cache[i].map(row);body.textContent='';shown.forEach(function(tr){body.appendChild(tr);});
  document.getElementById('page-no').value=i+1;filter();document.body.dataset.page=String(i+1);
  document.body.dataset.ready='1';}
 function load(i){
  i=Math.max(0,Math.min(pages-1,i));want=i;if(cache[i])return show(i);
  var s=document.createElement('script');s.src=base+pad(i)+'.js';
  s.onerror=function(){document.getElementById('page-note').textContent='page '+(i+1)+' could not be read from '+base;};
  document.head.appendChild(s);}
 window.ragmeterPage=function(i,rows){cache[i]=rows;if(i===want)show(i);};
 function filter(){var q=document.getElementById('filter').value.toLowerCase();
  shown.forEach(function(r){r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none'});}
 Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
  th.addEventListener('click',function(){
   var asc=th.dataset.sort!=='asc';th.dataset.sort=asc?'asc':'desc';
   shown.sort(function(a,b){
    var x=a.cells[i].dataset.value,y=b.cells[i].dataset.value;var nx=parseFloat(x),ny=parseFloat(y);
    var c=(isNaN(nx)||isNaN(ny))?String(x).localeCompare(String(y)):(nx-ny);return asc?c:-c;});
   shown.forEach(function(r){body.appendChild(r)});});});
 document.getElementById('filter').addEventListener('input',filter);
 document.getElementById('prev').addEventListener('click',function(){load(want-1)});
 document.getElementById('next').addEventListener('click',function(){load(want+1)});
 document.getElementById('page-no').addEventListener('change',function(ev){load((+ev.target.value||1)-1)});
 load(0);
})();
"""


def write_report(run, path: str) -> None:
    """The report of ``run`` at ``path``: one file up to ``INLINE_LIMIT`` samples
    (:func:`ragmeter.report.html.write_html`), else the page and its table's pages."""
    if len(run.results) > INLINE_LIMIT:
        write_paged(run, path)
    else:
        write_html(run, path)


def pages_folder(path: str | Path) -> Path:
    """Where the table's pages of the report at ``path`` go: ``REPORT.html.pages`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".pages")


def write_paged(run, path: str, *, from_columns: bool = True) -> None:
    """Write the page and its table's pages (see the module); the folder is replaced whole, so a
    report written again never mixes pages of two runs. A label-only run's pages are built from
    its columns (:mod:`ragmeter.report.label_pages`) unless ``from_columns`` is False."""
    metrics = list(run.summary)
    cols = columns_of(run)
    folder = pages_folder(path)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
    except OSError as exc:
        raise StorageError(f"cannot write the report ({exc.strerror or exc})", file=str(path),
                           fix="give --html a file in a folder that exists and can be written") from None
    try:
        page_html = _write_pages(run, metrics, cols, tmp, folder, from_columns)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
    except OSError as exc:
        raise StorageError(f"cannot write the report's pages ({exc.strerror or exc})", file=str(folder),
                           fix="give --html a file in a folder that exists and can be written") from None
    write_output(path, page_html, what="report", option="--html")


def _write_pages(run, metrics: list[str], cols, tmp: Path, folder: Path, from_columns: bool) -> str:
    """The table's pages written into ``tmp``; returns the page."""
    shown = _worst(run, cols, metrics)
    fast = label_pages(run, metrics, cols) if from_columns else None
    inline: dict[int, str] = {}
    inline_rows: dict[int, str] = {}
    if fast is not None:
        counts = fast.counts
        for i in sorted(shown):
            r, s = run.results[i], fast.sample(i)
            d = diagnose_sample(s, r)
            inline_rows[i], inline[i] = query_row(r, s, d, metrics), drill_down(r, s, d)
        state, n = PageJson(fast), len(cols.ids)
        with gc_paused():  # many small objects, no cycles: a collection would walk them again and again
            for number, start in enumerate(range(0, max(n, 1), PAGE_ROWS)):
                stop = min(n, start + PAGE_ROWS)
                data = page_json(state, start, stop)
                _write_data(tmp, number, _encoded(fast.records(start, stop)) if data is None else data)
    else:
        counts = dict.fromkeys(LABELS, 0)
        with gc_paused():  # (a sample's diagnosis and record form no cycle either)
            for number, page in enumerate(_pages(run, metrics, shown, counts, inline, inline_rows)):
                _write_data(tmp, number, _encoded(page))
    return _page(run, metrics, cols, counts, [inline_rows[i] for i in sorted(inline_rows)],
                 [inline[i] for i in sorted(inline)], folder.name + "/", max(1, math.ceil(len(cols.ids) / PAGE_ROWS)))


def _pages(run, metrics: list[str], shown: set[int], counts: dict[str, int], inline: dict[int, str],
           inline_rows: dict[int, str]) -> Iterator[list[list[Any]]]:
    """The records, a page at a time, sample by sample: each diagnosed (``counts`` counted), the
    ``shown`` ones rendered into ``inline`` and ``inline_rows``."""
    samples = run.samples()
    at = {s_id: i for i, s_id in enumerate(_sample_ids(samples))}
    page: list[list[Any]] = []
    n = 0
    for i, r in enumerate(run.results):
        n += 1
        s = samples[at[r["id"]]] if r["id"] in at else None
        d = diagnose_sample(s, r) if s is not None else None
        for label in d.labels if d is not None else []:
            counts[label] += 1
        if i in shown:
            inline_rows[i] = query_row(r, s, d, metrics)
            if s is not None:
                inline[i] = drill_down(r, s, d)
        page.append(_record(r, s, d, metrics))
        if len(page) == PAGE_ROWS:
            yield page
            page = []
    if page or not n:
        yield page


def _sample_ids(samples) -> list[str]:
    """The samples' ids, from the columns when the samples were read in columns (none built)."""
    file = getattr(samples, "label_file", None)
    return list(file.columns.ids) if file is not None else [s.id for s in samples]


def _worst(run, cols, metrics: list[str]) -> set[int]:
    """The rows shown in the page: per metric the ``WORST`` worst scored values (lowest, or
    highest for a lower-is-better metric; ties in file order), and up to ``FAILED_SHOWN`` failed."""
    out: set[int] = set()
    failed: list[int] = []
    for name in metrics:
        col = cols.column(name)
        scored = np.flatnonzero(col.status == 0)
        prov = run.setup.get("metrics", {}).get(name, {})
        try:
            lower_better = not get_spec(prov.get("metric_name", name.split("(")[0].split("@")[0])).higher_is_better
        except RagmeterError:  # a metric this version does not know: higher is better
            lower_better = False
        key = -col.values[scored] if lower_better else col.values[scored]
        out.update(scored[np.argsort(key, kind="stable")[:WORST]].tolist())
        failed += np.flatnonzero(col.status == 2).tolist()
    out.update(sorted(set(failed))[:FAILED_SHOWN])
    return out


def _cell(cell: dict | None) -> Any:
    """A table cell as data: the value, or why there is none (as the one-file report shows it)."""
    if cell is None:
        return ["-", ""]
    if cell["status"] == "scored":
        return cell["value"]
    why = cell.get("reason") or cell.get("error") or ""
    return ["failed" if cell["status"] == "failed" else "n/c", why]


def _record(r: dict, s: Sample | None, d: QueryDiagnosis | None, metrics: list[str]) -> list[Any]:
    """One sample as its page holds it: [id, question, short question, cells, labels, drill-down]."""
    question = s.question if s is not None else None
    cells = [_cell(r["metrics"].get(name)) for name in metrics]
    labels = d.labels if d is not None else []
    return [r["id"], question, shorten(question or ""), cells, labels, _drill(r, s, d)]


def _drill(r: dict, s: Sample | None, d: QueryDiagnosis | None) -> Any:
    """The drill-down as data: [ranked chunk ids, their marks (a digit each: 1 relevant, +2 in the
    prompt), their texts (None when no chunk has one), relevant not retrieved, what reached the
    prompt (None: the ranked list), answer, reference, findings as [label, evidence, lever]]; a
    sample with judged evidence, metadata (a conversation's history) or an answerability label
    as the one-file report's HTML."""
    if s is None:
        return [[], "", None, [], [], None, None, []]
    if r.get("evidence") or s.metadata or not s.answerable:  # claims, a conversation, answerability: as rendered
        return {"html": drill_down(r, s, d)}
    ids = [c.id for c in s.retrieved]
    prompt, rel = set(ids if s.context is None else s.context), s.relevance
    marks = "".join("0123"[(rel.get(cid, 0) >= 1) + 2 * (cid in prompt)] for cid in ids)
    texts = [c.text for c in s.retrieved] if any(c.text is not None for c in s.retrieved) else None
    retrieved = set(ids)
    missing = [cid for cid, g in rel.items() if g >= 1 and cid not in retrieved]
    findings = [[f.label, f.evidence, f.lever] for f in d.findings] if d is not None else []
    findings += [[f.label, "unable to verify: " + f.evidence, ""] for f in d.unverified] if d is not None else []
    return [ids, marks, texts, missing, None if s.context is None else list(s.context), s.answer, s.reference,
            findings]


def _encoded(rows: list[list[Any]]) -> bytes:
    """The rows as JSON (UTF-8; a page with a lone surrogate as ASCII, as the json module escapes it)."""
    try:
        return msgspec.json.encode(rows)
    except (UnicodeEncodeError, TypeError, ValueError):
        return json.dumps(rows, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _write_data(folder: Path, i: int, data: bytes) -> None:
    """``ragmeterPage(i, DATA);`` with each ``<`` of the JSON ``data`` written ``\\u003c``."""
    with open(folder / f"{i:04d}.js", "wb") as f:  # (three writes: no copy of the page to join them)
        f.write(b"ragmeterPage(%d," % i)
        f.write(data.replace(b"<", b"\\u003c"))
        f.write(b");\n")


def _histograms(cols, metrics: list[str]) -> str:
    out = []
    for name in metrics:
        col = cols.column(name)
        values = col.values[col.status == 0]
        counts = np.bincount(np.clip((values * BINS).astype(np.int64), 0, BINS - 1), minlength=BINS).tolist() \
            if len(values) >= 2 else []
        single = float(values[0]) if len(values) == 1 else None
        out.append(f'<div class="plot"><h3>{escape(name)}</h3>{histogram_svg(counts, len(values), single)}</div>')
    return "".join(out)


def _page(run, metrics: list[str], cols, counts: dict[str, int], rows: list[str], drills: list[str], base: str,
          pages: int) -> str:
    setup = run.setup
    started = datetime.fromtimestamp(setup.get("started", 0), timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    judge = setup.get("options", {}).get("judge") or "none"
    dataset, version = setup.get("dataset", {}), setup.get("ragmeter_version")
    diag = "".join(f'<span class="tag">{escape(k)}: {v}</span>' for k, v in counts.items() if v) \
        or "no failure point found"
    heads = "".join(f"<th>{column_header(name)}</th>" for name in ["query", "question", *metrics, "failure points"])
    n = len(cols.ids)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{PAGED_CSP}">
<title>ragmeter report: {escape(run.name)}</title><style>{CSS}{PAGED_CSS}</style></head>
<body><header><h1>ragmeter report: {escape(run.name)}</h1>
<p>dataset {escape(dataset.get("path"))} &middot; fingerprint {escape(dataset.get("fingerprint"))}
&middot; {n} samples &middot; judge {escape(judge)} &middot; ragmeter {escape(version)}
&middot; {escape(run.status)} &middot; started {escape(started)}</p></header>
<main><h2>Headline</h2><table><thead><tr><th>metric</th><th>mean</th><th>95% CI</th><th>scored</th>
<th>not computed</th><th>failed</th><th>version</th><th>definition</th></tr></thead>
<tbody>{headline_rows(run, metrics)}</tbody></table>
<h2>Distributions</h2><div class="plots">{_histograms(cols, metrics)}</div>
<h2>Diagnosis</h2><p>{diag}</p>
<h2>Worst samples</h2><p class="muted">per metric the {WORST} worst scored samples, and failed ones
({len(rows)} samples); every sample is in the table below</p>
<table id="worst"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>
{"".join(drills)}
<h2>Queries</h2><p class="muted">{n} samples in {pages} page(s) of {PAGE_ROWS}, read from
{escape(base)} beside this file; click a query for its drill-down</p>
<div class="pager"><button id="prev">previous</button><input id="page-no" type="number" min="1" max="{pages}"
 value="1" aria-label="page"> <span>of {pages}</span><button id="next">next</button><span id="page-note"
 class="muted"></span></div>
<input id="filter" placeholder="filter this page" aria-label="filter this page">
<table id="queries" data-pages="{pages}" data-base="{escape(base)}" data-metrics="{len(metrics)}">
<thead><tr>{heads}</tr></thead><tbody></tbody></table>
<div id="drill-here"></div></main>
<script>{PAGED_SCRIPT}</script></body></html>
"""
