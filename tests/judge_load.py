"""A load trial of the judge transport: ``ragmeter eval`` of many samples against the faulty
server (``tests/faulty_server.py``) in another process, then ``--retry-failed`` passes over the
same ledger (the faults go on), with the server's own counts of what it was asked and what it
answered well.

:func:`trial` returns a :class:`Trial` with what a test or the bench checks: every failed
sample has its reason, no identity answered good twice, no pass asked an identity that had a
good answer already, the passes complete the run, the client's memory over time, and the
longest time the server heard nothing while the client ran (a wedged client shows up there).
``kill_at``: the server is killed (SIGKILL) that many seconds after the faulty run's first
request and started again on the same port ``down_s`` later.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Phase:
    rc: int
    wall_s: float
    failed: Counter  # reason -> samples failed with it
    failed_without_reason: int
    samples: int
    rss_mb: list  # (seconds, MB) as the client ran
    quiet_s: float  # the longest the server received no request while the client ran
    close_wait: int  # the most CLOSE-WAIT sockets the client held at once
    stderr_tail: str
    run: str | None


@dataclass
class Trial:
    phases: list = field(default_factory=list)  # the faulty run, then each --retry-failed pass
    asked_again_with_good: int = 0  # identities phase 2 asked that had a good answer in phase 1
    good_twice: int = 0  # identities answered good more than once, over both phases
    requests: int = 0
    answered_good: int = 0
    identities: int = 0

    @property
    def complete(self) -> bool:
        last = self.phases[-1] if self.phases else None
        return last is not None and last.samples > 0 and not sum(last.failed.values())


def dataset(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"s{i}", "question": f"question {i}?", "answer": f"answer number {i}.",
                                "retrieved": [{"id": "c1", "text": "Some evidence."}]}) + "\n")


class ServerProcess:
    def __init__(self, work: Path, seed: int, fault_rate: float, stall: float) -> None:
        self.work, self.args = work, ["--seed", str(seed), "--fault-rate", str(fault_rate), "--stall", str(stall),
                                      "--log", str(work / "server.log")]
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        port_file = self.work / "port"
        port_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.faulty_server", "--port-file", str(port_file),
                                      "--port", str(self.port), *self.args], cwd=ROOT)
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the faulty server did not start")
            time.sleep(0.05)
        self.url = port_file.read_text()
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def requests(self) -> int | None:
        try:
            with urllib.request.urlopen(self.url + "/stats", timeout=2) as r:
                return int(json.loads(r.read())["requests"])
        except OSError:
            return None


def rss_mb(pid: int) -> float | None:
    """The resident memory of a process (Linux /proc), or None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def close_wait_sockets(pid: int) -> int:
    """How many of a process's TCP sockets are in CLOSE-WAIT (the peer closed, the process did not)."""
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        n = 0
        for table in ("tcp", "tcp6"):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                parts = line.split()
                n += parts[3] == "08" and parts[9] in inodes
        return n
    except OSError:
        return 0


def counts(log: Path) -> tuple[Counter, Counter]:
    """(requests, good answers) per identity in the server's log."""
    asked: Counter = Counter()
    good: Counter = Counter()
    if log.exists():
        for line in log.read_text(encoding="ascii").splitlines():
            what, _, key = line.partition(" ")
            (good if what == "g" else asked)[key] += 1
    return asked, good


def run_phase(server: ServerProcess, work: Path, data: Path, *, concurrency: int, timeout: float,
              extra: list[str], kill_at: float | None = None, down_s: float = 5.0,
              limit_s: float = 1800.0) -> Phase:
    runs = work / "runs"
    before = set(runs.iterdir()) if runs.exists() else set()
    cmd = [sys.executable, "-m", "ragmeter", "eval", str(data), "-m", "faithfulness", "--judge", "openai:fake",
           "--judge-base-url", server.url + "/v1", "--concurrency", str(concurrency), "--timeout", str(timeout),
           "--ledger", str(work / "ledger.sqlite"), "--runs-dir", str(runs), "--progress", "none",
           "--format", "json", *extra]
    env = {**os.environ, "OPENAI_API_KEY": "sk-load-trial"}
    err_path = work / "stderr.txt"
    with (work / "stdout.json").open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=work)
        start = time.monotonic()
        rss: list = []
        last_count, last_change, quiet, close_wait, killed = server.requests(), None, 0.0, 0, False
        first: float | None = None  # when the server heard the first request
        while proc.poll() is None:
            now = time.monotonic() - start
            mb = rss_mb(proc.pid)
            if mb is not None:
                rss.append((round(now, 1), mb))
            close_wait = max(close_wait, close_wait_sockets(proc.pid))
            if kill_at is not None and not killed and first is not None and time.monotonic() - first >= kill_at:
                server.kill()
                time.sleep(down_s)
                server.start()
                killed, last_change = True, time.monotonic()
            count = server.requests()
            if count != last_count or count is None:  # the silence is measured from the first request on
                last_count, last_change = count, time.monotonic()
                first = first or last_change
            if last_change is not None:
                quiet = max(quiet, time.monotonic() - last_change)
            if now > limit_s:
                proc.kill()
                break
            time.sleep(0.5)
        proc.wait()
    wall = time.monotonic() - start
    new = sorted(set(runs.iterdir()) - before) if runs.exists() else []
    run = new[-1] if new else None
    failed: Counter = Counter()
    without, samples = 0, 0
    if run is not None and (run / "results.jsonl").exists():
        with (run / "results.jsonl").open(encoding="utf-8") as f:
            for line in f:
                samples += 1
                m = json.loads(line)["metrics"]["faithfulness"]
                if m["status"] == "failed":
                    reason = m.get("error") or ""
                    if not reason.strip():
                        without += 1
                    failed[_reason(reason)] += 1
    return Phase(proc.returncode, wall, failed, without, samples, rss, quiet, close_wait,
                 err_path.read_text(errors="replace")[-3000:], str(run) if run else None)


def _reason(error: str) -> str:
    """The kind of a failure, for counting: the error class and its first clause."""
    head = error.split(";")[0]
    for word in ("timed out", "connection", "HTTP", "not a valid JSON", "could not connect", "could not send",
                 "throttled", "larger than"):
        if word in head:
            return f"{head.split(':')[0]}: {word}"
    return head[:80]


def trial(work: Path, *, samples: int, concurrency: int, fault_rate: float, timeout: float, stall: float,
          seed: int = 1, kill_at: float | None = None, down_s: float = 5.0, limit_s: float = 1800.0,
          retries: int = 3) -> Trial:
    """The faulty run, then ``--retry-failed`` over the same ledger until nothing fails (at most
    ``retries`` passes; the server's faults go on: each pass asks again only what has no good
    answer yet)."""
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data.jsonl"
    dataset(data, samples)
    server = ServerProcess(work, seed, fault_rate, stall)
    server.start()
    out = Trial()
    good_before: set = set()
    try:
        out.phases.append(run_phase(server, work, data, concurrency=concurrency, timeout=timeout, extra=[],
                                    kill_at=kill_at, down_s=down_s, limit_s=limit_s))
        for _ in range(retries):
            asked_before, good = counts(work / "server.log")
            good_before = {k for k, n in good.items() if n}
            if not sum(out.phases[-1].failed.values()) and out.phases[-1].samples == samples:
                break
            out.phases.append(run_phase(server, work, data, concurrency=concurrency, timeout=timeout,
                                        extra=["--retry-failed"], limit_s=limit_s))
            asked_after, _ = counts(work / "server.log")
            out.asked_again_with_good += sum(1 for k in asked_after - asked_before if k in good_before)
    finally:
        server.kill()
    asked, good = counts(work / "server.log")
    out.good_twice = sum(1 for n in good.values() if n > 1)
    out.requests, out.answered_good, out.identities = sum(asked.values()), len(good), len(asked)
    return out


def rss_profile(p: Phase) -> str:
    """The client's memory at a quarter, half, three quarters and the end of the phase."""
    if not p.rss_mb:
        return "-"
    marks = []
    for q in (0.25, 0.5, 0.75, 1.0):
        t = p.wall_s * q
        marks.append(min(p.rss_mb, key=lambda x: abs(x[0] - t))[1])
    return "/".join(f"{m:.0f}" for m in marks) + " MB"


def summary(t: Trial) -> str:
    lines = []
    for i, p in enumerate(t.phases, start=1):
        peak = max((m for _, m in p.rss_mb), default=0.0)
        what = "faulty run" if i == 1 else f"--retry-failed pass {i - 1}"
        lines.append(f"{what}: exit {p.rc}, {p.wall_s:.0f} s, {p.samples} samples, {sum(p.failed.values())} "
                     f"failed ({p.failed_without_reason} without a reason), RSS peak {peak:.0f} MB (at 1/4, 1/2, "
                     f"3/4, end: {rss_profile(p)}), server quiet at most {p.quiet_s:.1f} s after the first request, "
                     f"CLOSE-WAIT at most {p.close_wait}")
        for reason, n in p.failed.most_common():
            lines.append(f"    {n:6d}  {reason}")
    lines.append(f"server: {t.requests} requests for {t.identities} identities, {t.answered_good} answered good, "
                 f"{t.good_twice} answered good twice, {t.asked_again_with_good} asked again by --retry-failed "
                 f"after a good answer; {'complete' if t.complete else 'NOT complete'} after "
                 f"{len(t.phases) - 1} --retry-failed pass(es)")
    return "\n".join(lines)
