"""``ragmeter watch``: score a sample of live traffic and keep rolling windows.

Each poll reads the complete lines appended since the last offset, keeps a deterministic
sample of them (a request is kept when sha256(request id) maps below the rate, so a restart
keeps the same ones), scores the reference-free metrics (by default faithfulness and answer
relevancy) through the judge and its ledger, and appends the results to ``scored.jsonl``
in the state directory *before* it moves the stored offset. A crash between the two makes
the restart re-read those lines; their requests are already in ``scored.jsonl`` and are
skipped (and their judgments are in the ledger), so nothing is scored twice or lost.

The log may rotate: truncated in place (``copytruncate``) or renamed and recreated. The
reader (:mod:`ragmeter.live.tail`) notices both (a size below the offset or changed bytes; another
inode), reads the old file's unread rest (kept open, or found next to the log as ``LOG.1`` by
inode or by content) and then the new file from its start, and says so in :attr:`Watcher.notes`.
The offset state is keyed by inode, so a watcher restarted after a rotation resumes exactly.

A line that is not a request (invalid JSON, a torn line, a wrong type in a field, a chunk
without text) never stops the watcher: it is appended to ``quarantine.jsonl`` in the state
directory (its file, byte offset, line number, the reason and the line itself, its first
:data:`QUARANTINE_TEXT` bytes with its length when longer), counted as ``malformed``, and the
offset moves past it. A line longer than ``tail.MAX_LINE`` (16 MB) is never held whole: it is
quarantined as such and passed over. A request that parses but that the scorer refuses
is quarantined the same way, the rest of its batch scored. A restart that re-reads a
quarantined line (killed before the offset was saved) does not quarantine it twice. The state
files are read the same way (:mod:`ragmeter.live.state_files`): a torn last line of ``scored.jsonl``
(a kill mid-write) is trimmed off, a damaged ``offset.json`` restarts from the top of the log (every request already in
``scored.jsonl`` is skipped).

With ``intake`` (``watch --otlp``) the watcher reads the OTLP receiver's spool instead of a log
(:mod:`ragmeter.live.trace_intake`): items come parsed, one request per trace, and leave the spool
only when the results are written (the same contract). A request that retrieved several times is
scored as one sample per retrieval; its record holds the request's cells (:func:`request_cells`)
and each retrieval's. Every request read feeds the operational gauges (:mod:`ragmeter.live.gauges`),
and feedback lines are joined to their requests in ``feedback.jsonl``. Feedback read before its
request was scored (the trace still open, the line logged first) is written at once with
``"joined": false`` and waits (:mod:`ragmeter.live.pending_feedback`, bounded); when the request is
scored, the same feedback (same file and offset) is written again with ``"joined": true, "late": true``.

Metric names (``--metrics``, ``--alert``) resolve through the parser as everywhere
(``groundedness`` is ``faithfulness``); the records, windows and gauges use canonical names.

Rolling windows: the last N scored requests and the last hour. Exposed for Prometheus on
an HTTP endpoint bound to 127.0.0.1 by default. Alerts (:mod:`ragmeter.live.alerts`) fire once per crossing: a rolling
mean past its threshold, or a significant drop from a baseline run's mean. Both follow the
metric's direction: a higher-is-better metric alerts below a floor (``faithfulness<0.8``) and
on a fall; a lower-is-better one (``contradiction_rate``) above a ceiling
(``contradiction_rate>0.1``) and on a rise. A bar on the wrong side is refused with the fix.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.analysis.thresholds import checked_threshold
from ragmeter.core.errors import (
    InvalidInputError,
    InvalidParameterError,
    LowCoverageWarning,
    NothingRetrievedWarning,
)
from ragmeter.core.measure import resolve_measure
from ragmeter.core.settings import DEFAULTS, InvalidSettingError
from ragmeter.engine.call_plan import needs_judge
from ragmeter.engine.evaluate import evaluate_with, resolve_measures
from ragmeter.evidence.sources import Sources, build_sources
from ragmeter.io.dataset import Dataset
from ragmeter.live import prometheus
from ragmeter.live.alerts import Alert, newly_fired, run_alert_command
from ragmeter.live.gauges import Gauges, request_values
from ragmeter.live.pending_feedback import PendingFeedback, key_of
from ragmeter.live.source import Feedback, LoggedRequest, Rejected, Skipped, parse
from ragmeter.live.state_files import append_records, read_records
from ragmeter.live.tail import MAX_LINE, Line, LogTail

DEFAULT_METRICS = DEFAULTS.watch.metrics
HOUR = 3600.0
BATCH = 16  # requests scored per poll, through a judge
UNJUDGED_BATCH = 4096  # requests scored per poll when no judge is called (--judge none, label metrics)
QUARANTINE_TEXT = 4096  # bytes of a malformed line copied into the quarantine file (with its length)


def kept(request_id: str, rate: float) -> bool:
    if rate >= 1:  # every request, unhashed (h / 2**64 rounds up to 1.0, and drops, for 1 id in 2**53)
        return True
    h = int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:8], "big")
    return h / 2 ** 64 < rate


@dataclass
class Watcher:
    log: str
    judge: Any
    state_dir: Path
    metrics: Sequence[str] = DEFAULT_METRICS
    sample_rate: float = DEFAULTS.watch.sample_rate
    window: int = DEFAULTS.watch.window
    alerts: list[Alert] = field(default_factory=list)
    alert_command: str | None = None
    registry: Any = None
    batch: int = BATCH  # requests scored per poll at most: bounded work, and progress saved often
    k: int | None = DEFAULTS.k  # the retrieved list's cut-off for measures without their own @k
    sources: Sources | None = None  # what the metrics are scored through; None: the judge alone
    intake: Any = None  # the OTLP receiver's spool (live.trace_intake.TraceIntake); None: the log file
    statsd: Any = None  # a statsd client for the operational gauges (live.gauges)

    def __post_init__(self) -> None:
        self._sources = self.sources if self.sources is not None else build_sources(judge=self.judge)
        # Names resolve once, through the parser: records, windows and alerts use canonical names.
        self.measures = resolve_measures(list(self.metrics), k=self.k)
        self.names = [str(m) for m in self.measures]
        if self.batch == BATCH and (self._sources.judge is None or not needs_judge(self.measures)):
            self.batch = UNJUDGED_BATCH  # no request waits on a judge: a larger batch costs no latency
        for a in self.alerts:
            measure = resolve_measure(a.metric, self.measures, holder="the watched metrics")
            a.metric, a.higher_is_better = str(measure), measure.spec.higher_is_better
            for asked, bar in (("floor", a.below), ("ceiling", a.above)):
                if bar is not None:
                    try:
                        checked_threshold(a.metric, bar, higher=a.higher_is_better, asked=asked,
                                          floor="--alert '{metric}<{value}'", ceiling="--alert '{metric}>{value}'")
                    except InvalidParameterError as exc:
                        raise InvalidSettingError("alerts", str(exc)) from None
        self.state_dir = Path(self.state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.offset_file = self.state_dir / "offset.json"
        self.scored_file = self.state_dir / "scored.jsonl"
        self.quarantine_file = self.state_dir / "quarantine.jsonl"
        self.notes: list[str] = []  # what the state files needed on start, rotations seen, alert-command failures
        self.feedback_file = self.state_dir / "feedback.jsonl"
        self.tail: Any = self.intake if self.intake is not None else LogTail(self.log, self.offset_file, self.notes)
        self.seen: set[str] = set()
        self.recent: deque = deque(maxlen=self.window)
        self.hour: deque = deque()
        self.counts = {"lines": 0, "malformed": 0, "sampled_out": 0, "scored": 0, "duplicates": 0, "feedback": 0,
                       "not_rag": 0}
        self.fired: list[str] = []  # messages of this poll's new alerts
        self.quarantined: list[str] = []  # reasons of this poll's quarantined lines
        self.alerts_total = 0
        self.pending = False  # complete lines remain after the last poll
        for rec in read_records(self.scored_file, self.notes, is_scored):
            self.seen.add(rec["id"])
            self._remember(rec)
        here = self.tail.current.key if self.tail.current else ""  # records from before file keys: the log's file
        self.in_quarantine = {(str(rec.get("file", here)), rec["offset"])
                              for rec in read_records(self.quarantine_file, self.notes,
                                                  lambda r: isinstance(r.get("offset"), int))}
        self.gauges = prometheus.Gauges(self.registry) if self.registry is not None else None
        self.ops = Gauges(self.window, registry=self.registry, statsd=self.statsd)
        self.feedback_keys: set[tuple[str, int]] = set()
        self.waiting = PendingFeedback()  # feedback read before its request was scored (bounded)
        for rec in read_records(self.feedback_file, self.notes, lambda r: isinstance(r.get("id"), str)):
            self.feedback_keys.add(key_of(rec))
            self._join_feedback(rec)
            if rec.get("joined"):
                self.waiting.discard(key_of(rec))  # its later line: joined
            elif kept(rec["id"], self.sample_rate):
                self.waiting.add(rec)
        # a request scored before a kill let its waiting feedback be written joined: joined now
        late = [f | {"joined": True, "late": True} for rid in self.waiting.ids() if rid in self.seen
                for f in self.waiting.take(rid)]
        if late:
            append_records(self.feedback_file, late)
        self._said_dropped = False
        self._note_dropped()

    def _remember(self, rec: dict) -> None:
        self.recent.append(rec)
        self.hour.append(rec)

    @property
    def offset(self) -> int:
        """Bytes of the log's current file consumed."""
        return self.tail.current.offset if self.tail.current else 0

    def close(self) -> None:
        """Close the log files held open (a renamed log is read on through its open handle)."""
        self.tail.close()

    def poll(self) -> int:
        """Read, sample, score and record up to ``batch`` requests; returns how many were scored.
        A line that is not a request goes to the quarantine file; none stops the watcher, nor a
        request the scorer refuses (quarantined with the reason). The log may rotate between
        polls (:mod:`ragmeter.live.tail`): every line is read once, from whichever file holds it."""
        self.fired = []
        self.quarantined = []
        lines = self.tail.read()
        self.pending = False
        consumed: list[Line] = []
        requests: list[tuple[Line, LoggedRequest]] = []
        bad: list[dict] = []
        said: list[dict] = []  # feedback joined to its request
        for ln in lines:
            if len(requests) >= self.batch:
                self.pending = True  # the rest waits for the next poll
                break
            consumed.append(ln)
            if ln.kind == "rest":  # more of a line too long to hold, already quarantined
                continue
            self.counts["lines"] += 1
            if ln.kind == "long":
                self._quarantine(bad, ln, f"a line longer than {MAX_LINE // 2 ** 20} MB: not a request (its first "
                                          f"{QUARANTINE_TEXT} bytes are kept here)")
                continue
            req = getattr(ln, "parsed", None)  # the spool's items come parsed
            if req is None:
                raw = ln.raw.lstrip(b"\x00")  # a copytruncate under a writer without O_APPEND leaves NULs
                if not raw.strip():
                    continue
                req = parse(raw)
            if isinstance(req, Rejected):
                self._quarantine(bad, ln, ("unfinished last line of a rotated log: " if ln.torn else "") + req.reason)
            elif isinstance(req, Skipped):
                self.counts["not_rag"] += 1
            elif isinstance(req, Feedback):
                self._feedback(said, ln, req)
            elif req.id in self.seen:
                self.counts["duplicates"] += 1
            elif not kept(req.id, self.sample_rate):
                self.ops.observe(request_values(req.all_samples))  # every request read, scored or not
                self.counts["sampled_out"] += 1
            else:
                self.ops.observe(request_values(req.all_samples))
                self.seen.add(req.id)
                requests.append((ln, req))
        self.pending = self.pending or self.tail.more
        records = self._score(requests, bad)
        if bad:
            append_records(self.quarantine_file, bad)
        if records:
            append_records(self.scored_file, records)
            for rec in records:
                self._remember(rec)
            self.counts["scored"] += len(records)
        said = self._settle_feedback(said, records)
        if said:
            append_records(self.feedback_file, said)
            for rec in said:
                self._join_feedback(rec)
        if consumed:
            for ln in consumed:
                self.tail.advance(ln)
        if isinstance(self.tail, LogTail):  # only after the results above are on disk
            self.tail.save(caught_up=not self.pending)
        else:
            self.tail.save()
        cutoff = time.time() - HOUR
        while self.hour and self.hour[0]["ts"] < cutoff:
            self.hour.popleft()
        self._check_alerts()
        if self.gauges:
            self.gauges.update(self)
        return len(records)

    def _quarantine(self, bad: list[dict], ln: Line, reason: str) -> None:
        self.counts["malformed"] += 1
        self.quarantined.append(reason)
        if (ln.file, ln.start) not in self.in_quarantine:
            raw = ln.raw
            text = raw[:QUARANTINE_TEXT].decode("utf-8", "replace")  # a bad line is not copied whole
            entry = {"offset": ln.start, "line": ln.number, "reason": reason, "text": text, "file": ln.file,
                     "log": ln.name}
            size = max(ln.end - ln.start, len(raw))  # a log line's bytes with its newline; a spool item's JSON
            if size > QUARANTINE_TEXT:
                entry["bytes"] = size  # what "text" is the start of
            bad.append(entry)
            self.in_quarantine.add((ln.file, ln.start))

    def _score(self, requests: list[tuple[Line, LoggedRequest]], bad: list[dict]) -> list[dict]:
        """The scored records of ``requests``. A batch the scorer refuses (a request it cannot take,
        such as a chunk without text) is scored one request at a time: each refused one is
        quarantined with the reason, the others scored."""
        if not requests:
            return []
        try:
            return self._records_of([r for _, r in requests])
        except InvalidInputError:
            pass  # refused before any judge call: find which request, one at a time
        records = []
        for ln, req in requests:
            try:
                records += self._records_of([req])
            except InvalidInputError as exc:
                self.seen.discard(req.id)
                self.waiting.take(req.id)  # never scored: its feedback stays unjoined
                self._quarantine(bad, ln, f"request {req.id!r} cannot be scored: {exc.problem}")
        return records

    def _records_of(self, requests: list[LoggedRequest]) -> list[dict]:
        with warnings.catch_warnings():  # a poll's batch is not the traffic: the windows say coverage
            warnings.simplefilter("ignore", LowCoverageWarning)
            warnings.simplefilter("ignore", NothingRetrievedWarning)
            # the traffic is not fingerprinted: the records keep no provenance, and a fingerprint costs a sixth
            samples = tuple(s for r in requests for s in r.all_samples)
            result = evaluate_with(Dataset(samples, None, fingerprint=""), self.measures, self._sources)
        columns = [(str(m), result.outcomes[m]) for m in result.measures]
        out, i = [], 0
        for r in requests:
            n = len(r.all_samples)
            cells = [{name: _cell(col[j]) for name, col in columns} for j in range(i, i + n)]
            i += n
            rec: dict[str, Any] = {"id": r.id, "ts": r.ts or time.time(),
                                   "metrics": cells[0] if n == 1 else request_cells(cells)}
            if n > 1:  # several retrievals: each one's cells, and the request's above
                rec["retrievals"] = [{"id": s.id, "metrics": c} for s, c in zip(r.all_samples, cells)]
            if r.root_span_id is not None:
                rec["root_span_id"] = r.root_span_id
            out.append(rec)
        return out

    def _feedback(self, said: list[dict], ln: Line, fb: Feedback) -> None:
        """Feedback on request ``fb.id``: sent to the gauges and kept in ``feedback.jsonl`` (once:
        a line read again after a restart is known by where it was)."""
        self.counts["feedback"] += 1
        key = (ln.file, ln.start)
        if key in self.feedback_keys:
            return
        self.feedback_keys.add(key)
        self.ops.observe({"user_feedback": fb.value})
        said.append({"id": fb.id, "ts": fb.ts or time.time(), "value": fb.value, "joined": False,  # settled below
                     "file": ln.file, "offset": ln.start})

    def _settle_feedback(self, said: list[dict], records: list[dict]) -> list[dict]:
        """The feedback lines to write after this poll's ``records``: the waiting feedback their
        requests join (again, ``"late": true``), then ``said``, joined when its request has been
        scored (in this poll or before); the rest waits when its request may still come."""
        late = [f | {"joined": True, "late": True} for rec in records for f in self.waiting.take(rec["id"])]
        for f in said:
            f["joined"] = f["id"] in self.seen
            if not f["joined"] and kept(f["id"], self.sample_rate):
                self.waiting.add(f)
        self._note_dropped()
        return late + said

    def _note_dropped(self) -> None:
        """Say once that feedback stopped waiting for its request past the bound."""
        if self.waiting.dropped and not self._said_dropped:
            self._said_dropped = True
            self.notes.append(f"more than {self.waiting.limit} feedback records waited for requests not scored "
                              "yet; the oldest no longer wait (they stay in feedback.jsonl with \"joined\": false)")

    def _join_feedback(self, rec: dict) -> None:
        """The feedback on the scored request it names, in the rolling window."""
        for scored in reversed(self.recent):
            if scored["id"] == rec["id"]:
                scored["feedback"] = rec.get("value")
                break

    def window_summary(self, which: str = "last_n") -> dict[str, dict]:
        """Per metric: the mean of the scored values, the counts by status, and ``reasons``
        (why a value is missing -> how many, most frequent first)."""
        records = self.recent if which == "last_n" else self.hour
        out = {}
        for m in self.names:
            cells = [r["metrics"].get(m) for r in records if m in r["metrics"]]
            values = [c["value"] for c in cells if c["status"] == "scored"]
            reasons = Counter(str(c["reason"]) for c in cells if c["status"] != "scored" and c.get("reason"))
            out[m] = {"mean": float(np.mean(values)) if values else None, "scored": len(values),
                      "not_computed": sum(c["status"] == "not_computed" for c in cells),
                      "failed": sum(c["status"] == "failed" for c in cells), "reasons": dict(reasons.most_common())}
        return out

    def _check_alerts(self) -> None:
        for message in newly_fired(self.alerts, self.window_summary(), self.recent):
            self.fired.append(message)
            self.alerts_total += 1
            if self.alert_command:
                note = run_alert_command(self.alert_command, message)
                if note:
                    self.notes.append(note)


def request_cells(cells: Sequence[dict[str, dict]]) -> dict[str, dict]:
    """A request's cell per metric from its retrievals' cells: the mean of the scored values (an
    answer metric is scored on one retrieval only: its value); else the first failure; else why
    none was computed.

    >>> request_cells([{"m": {"status": "scored", "value": 0.5}, "f": {"status": "not_computed", "value": None}},
    ...                {"m": {"status": "scored", "value": 1.0}, "f": {"status": "scored", "value": 0.8}}])
    {'m': {'status': 'scored', 'value': 0.75}, 'f': {'status': 'scored', 'value': 0.8}}
    """
    out: dict[str, dict] = {}
    for m in cells[0]:
        column = [c[m] for c in cells if m in c]
        values = [c["value"] for c in column if c["status"] == "scored"]
        if values:
            out[m] = {"status": "scored", "value": sum(values) / len(values)}
        else:
            out[m] = next((c for c in column if c["status"] == "failed"), column[0])
    return out


def _cell(outcome: Any) -> dict[str, Any]:
    """A scored record's cell: status and value, and why there is no value (NotComputed's
    reason, Failed's error)."""
    cell = {"status": outcome.status, "value": outcome.value}
    why = getattr(outcome, "reason", None) or getattr(outcome, "error", None)
    if outcome.status != "scored" and why:
        cell["reason"] = why
    return cell


def is_scored(rec: dict) -> bool:
    """A record of ``scored.jsonl`` as the watcher writes it (what a restart reads back)."""
    ts = rec.get("ts")
    return (isinstance(rec.get("id"), str) and isinstance(rec.get("metrics"), dict)
            and isinstance(ts, (int, float)) and not isinstance(ts, bool)
            and all(isinstance(c, dict) and "status" in c for c in rec["metrics"].values()))
