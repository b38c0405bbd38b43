"""A ``python:`` record source runs where it can be abandoned: a function that blocks forever
in sync code costs one lookup its time limit, and whatever it raises (``SystemExit``,
``KeyboardInterrupt``, any ``BaseException``) fails that lookup only; the user's Ctrl-C
still stops the run. Each case runs in a child process, so that a hang fails the test (its
``timeout``) instead of hanging the suite, and an escaping ``KeyboardInterrupt`` cannot stop
pytest."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ragmeter.core.abandonable import Abandonable, Raised, TooManyAbandoned
from ragmeter.records import CallableSource, Fact, RecordLookup, check_facts_sync

CHILD = textwrap.dedent("""
    import json, sys, time
    from ragmeter.records import CallableSource, Fact, RecordLookup, check_facts_sync

    def blocks(entity, attribute):
        time.sleep(1e6)

    def exits(entity, attribute):
        raise SystemExit(3)

    def interrupts(entity, attribute):
        raise KeyboardInterrupt

    class Odd(BaseException):
        pass

    def odd(entity, attribute):
        raise Odd()

    async def async_exits(entity, attribute):
        raise SystemExit(4)

    async def async_blocks(entity, attribute):
        time.sleep(1e6)  # sync code in an async function: its loop is blocked, not the run's

    def good(entity, attribute):
        return "shipped"

    fn = globals()[sys.argv[1]]
    facts = [Fact("ORD-1", "status", "shipped"), Fact("ORD-2", "status", "shipped")]
    checks = check_facts_sync(facts, RecordLookup(CallableSource(fn), timeout_s=float(sys.argv[2])))
    again = check_facts_sync(facts[:1], RecordLookup(CallableSource(good), timeout_s=5))  # the run goes on
    print(json.dumps([[c.verdict, c.reason] for c in checks + again]))
""")


def child(name: str, timeout_s: float = 0.5) -> list[list[str]]:
    done = subprocess.run([sys.executable, "-c", CHILD, name, str(timeout_s)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name, said", [
    ("blocks", "within 0.5 s"),
    ("async_blocks", "within 0.5 s"),
    ("exits", "raised SystemExit"),
    ("async_exits", "raised SystemExit"),
    ("interrupts", "raised KeyboardInterrupt"),
    ("odd", "raised Odd"),
])
def test_a_blocking_or_exiting_function_fails_its_lookups_not_the_run(name, said):
    out = child(name)
    assert [v for v, _ in out] == ["cannot_verify", "cannot_verify", "pass"], out
    assert all(said in reason for _, reason in out[:2]), out


@pytest.mark.slow
def test_ctrl_c_still_stops_a_run_waiting_on_a_blocked_function():
    script = CHILD.replace("fn = globals()[sys.argv[1]]", "fn = blocks; print('ready', flush=True)")
    proc = subprocess.Popen([sys.executable, "-c", script, "blocks", "600"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # inside the lookup, waiting on the blocked thread
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err


def test_abandoned_calls_are_bounded():
    import asyncio
    import threading

    release = threading.Event()

    def stuck(entity, attribute):
        release.wait(60)
        return "late"

    runner = Abandonable(max_abandoned=2)

    async def main():
        outs = []
        for _ in range(3):
            try:
                outs.append(await asyncio.wait_for(runner.call(stuck, "e", "a"), 0.05))
            except asyncio.TimeoutError:
                outs.append("timeout")
            except TooManyAbandoned:
                outs.append("refused")
        return outs

    outs = asyncio.run(main())
    assert outs == ["timeout", "timeout", "refused"] and runner.abandoned == 2
    source = CallableSource(stuck)
    source._runner = runner
    checks = check_facts_sync([Fact("e", "a", "late")], RecordLookup(source, timeout_s=0.05))
    assert checks[0].verdict == "cannot_verify" and "still running past their time limit" in checks[0].reason
    release.set()
    for _ in range(200):
        if runner.abandoned == 0:
            break
        time.sleep(0.05)
    assert runner.abandoned == 0  # an abandoned call that ends frees its place


def test_raised_values_are_returned_not_raised():
    import asyncio

    def boom():
        raise SystemExit(2)

    out = asyncio.run(Abandonable().call(boom))
    assert isinstance(out, Raised) and isinstance(out.error, SystemExit)


def test_nan_and_inf_returns_are_cannot_verify_not_a_failed_fact():
    for value in (math.nan, math.inf, -math.inf, (math.inf, "USD"), {"value": math.nan, "unit": "USD"}):
        check = check_facts_sync([Fact("R2", "price", "$89")],
                                 RecordLookup(CallableSource(lambda e, a, v=value: v)))[0]
        assert check.verdict == "cannot_verify" and "not a finite number" in check.reason, (value, check)
