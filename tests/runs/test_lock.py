"""``ragmeter.runs.lock``: one process at a time on a run directory."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ragmeter.runs.lock import LOCK_NAME, RunLocked, acquire, holding


def test_a_held_run_is_refused_with_its_holder_and_free_once_released(tmp_path):
    held = acquire(tmp_path)
    with pytest.raises(RunLocked, match=r"is being written by pid \d+ on .*: wait for it to end"):
        acquire(tmp_path)
    held.close()
    with holding(tmp_path):
        with pytest.raises(RunLocked):
            acquire(tmp_path)
    acquire(tmp_path).close()
    with holding(None):  # no run directory: nothing to lock
        pass


@pytest.mark.slow
def test_the_lock_of_a_killed_process_is_gone_with_it(tmp_path):
    code = (f"import sys, time; sys.path.insert(0, {str(tmp_path)!r}); from ragmeter.runs.lock import acquire; "
            f"f = acquire(__import__('pathlib').Path({str(tmp_path)!r})); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    with pytest.raises(RunLocked, match=f"pid {proc.pid}"):
        acquire(tmp_path)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel drops a dead process's lock: nothing stale to remove
        try:
            acquire(tmp_path).close()
            break
        except RunLocked:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert (tmp_path / LOCK_NAME).exists()
