"""The local judge's start-up probe (``judges/local/probe.py``): a llama.cpp that dies at its first
decode (SIGILL on a CPU it was not built for) gives a clear error with the fix, not a dead process.
No model is needed: the probe command is replaced by one that kills itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from ragmeter.judges.local import probe as local_probe
from ragmeter.judges.local.probe import LocalJudgeCrashed, ensure_loadable

SIGILL_PROBE = f'{sys.executable} -c "import os, signal; os.kill(os.getpid(), signal.SIGILL)"'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"not a model")
    return path


def test_a_probe_killed_by_sigill_raises_the_fix(cache, model, monkeypatch):
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE", SIGILL_PROBE)
    monkeypatch.setattr(local_probe, "cpu_flags", lambda: frozenset({"avx2", "fma", "f16c", "amx_tile"}))
    with pytest.raises(LocalJudgeCrashed) as info:
        ensure_loadable(model, "0" * 64, {"extra_bufts": True})
    text = str(info.value)
    assert "SIGILL, illegal instruction" in text and "m.gguf" in text
    assert "nothing was scored with it" in text
    # the exact command: the pinned prebuilt wheel put back, pip's cache bypassed; nothing compiled
    assert "pip install --force-reinstall --no-deps --no-cache-dir cyllama==0.2.18" in text
    assert "CMAKE_ARGS" not in text
    assert not (cache / "probes").exists() or not list((cache / "probes").iterdir())  # a failure is not remembered


def test_without_avx2_a_clean_refusal_before_any_child_starts(cache, model, tmp_path, monkeypatch):
    """A CPU without AVX2 (or FMA, F16C) is refused from its flags: no probe process is started
    (it would die with SIGILL), and the message names what is missing and what to do instead."""
    from ragmeter.judges.local.runtime import CpuUnsupported

    counter = tmp_path / "started"
    probe = f'{sys.executable} -c "import sys; open(sys.argv[1], \'a\').write(\'x\')" {counter}'
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE", probe)
    monkeypatch.setattr(local_probe, "cpu_flags", lambda: frozenset({"sse4_2", "avx"}))
    missing = "need AVX2, FMA, F16C, and /proc/cpuinfo lists no AVX2, FMA, F16C"
    with pytest.raises(CpuUnsupported, match=missing) as info:
        ensure_loadable(model, "0" * 64, {})
    assert "--judge openai:<model>" in str(info.value)
    assert not counter.exists()


def test_other_signals_and_failures_are_named(cache, model, monkeypatch):
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE",
                       f'{sys.executable} -c "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"')
    with pytest.raises(LocalJudgeCrashed, match="died with SIGSEGV"):
        ensure_loadable(model, "0" * 64, {})
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE", f'{sys.executable} -c "raise SystemExit(3)"')
    with pytest.raises(LocalJudgeCrashed, match="exit status 3"):
        ensure_loadable(model, "0" * 64, {})
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE", f'{sys.executable} -c "import time; time.sleep(30)"')
    with pytest.raises(LocalJudgeCrashed, match="did not finish in 1 s"):
        ensure_loadable(model, "0" * 64, {}, timeout=1)


def test_a_success_is_remembered_per_build_model_settings_and_cpu(cache, model, tmp_path, monkeypatch):
    counter = tmp_path / "runs"
    probe = f'{sys.executable} -c "import sys; open(sys.argv[1], \'a\').write(\'x\'); print(\'probe ok\')" {counter}'
    monkeypatch.setenv("RAGMETER_LOCAL_PROBE", probe)
    ensure_loadable(model, "a" * 64, {"extra_bufts": True})
    ensure_loadable(model, "a" * 64, {"extra_bufts": True})
    assert counter.read_text() == "x"  # once
    ensure_loadable(model, "b" * 64, {"extra_bufts": True})  # another model
    ensure_loadable(model, "a" * 64, {"extra_bufts": False})  # other load settings
    monkeypatch.setattr(local_probe, "cpu_flags", lambda: frozenset({"avx2", "fma", "f16c", "avx512f"}))  # another CPU
    ensure_loadable(model, "a" * 64, {"extra_bufts": True})
    assert counter.read_text() == "xxxx"
    stamps = list((cache / "probes").iterdir())
    assert len(stamps) == 4 and json.loads(stamps[0].read_text())["ok"] is True


@pytest.mark.slow
def test_the_cli_exits_2_with_the_message_instead_of_dying(tmp_path, model):
    """The whole command as a user runs it: a real child process, whose own exit status is checked
    (a SIGILL in-process would end it with status 132 and no message). The answer's claim is one
    the shipped rule leaves uncertain, so the named model is asked about it."""
    from ragmeter.judges.offline.backend import OfflineBackend

    passage = "The warranty covers manufacturing defects for 24 months from the date of purchase."
    offline = OfflineBackend(None, model_stage=False)
    paraphrases = ["Defects are covered for two years after the purchase date.",
                   "The warranty covers defects for two years.", "Manufacturing defects are covered for two years.",
                   "The guarantee covers manufacturing defects for 24 months."]
    uncertain = [c for c in paraphrases if offline.rule.uncertain(offline.rows([("p1", passage)], [(1, c)]))]
    assert uncertain, "no paraphrase is left uncertain by the shipped rule: pick one that is"
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({
        "id": "q1", "question": "How long are defects covered?", "answer": uncertain[0],
        "retrieved": [{"id": "p1", "text": passage}]}) + "\n")
    env = {**os.environ, "RAGMETER_LOCAL_PROBE": SIGILL_PROBE, "RAGMETER_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "ragmeter", "eval", str(data), "--judge", f"local:{model}", "-m", "faithfulness",
           "--ledger", str(tmp_path / "l.sqlite"), "--no-save"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert out.returncode != 128 + signal.SIGILL
    assert "error: the local judge cannot run on this CPU" in out.stderr
    assert "SIGILL, illegal instruction" in out.stderr and "--no-cache-dir" in out.stderr
    assert "Traceback" not in out.stderr


def test_readme_ci_and_the_fix_command_install_the_same_prebuilt_runtime():
    """One runtime everywhere: README's two commands and .ci/run install ``[local]`` with no build
    flags, and the pin the probe's fix command reinstalls is the one pyproject's extra holds."""
    from pathlib import Path

    from ragmeter.judges.local.runtime import RUNTIME_PIN

    root = Path(__file__).resolve().parents[3]
    readme, ci = (root / "README.md").read_text(), (root / ".ci" / "run").read_text()
    installs = [line for line in readme.splitlines() if line.startswith("    python3 -m venv") and "local]" in line]
    assert len(installs) == 2, installs  # the two commands
    for line in installs:
        assert "CMAKE_ARGS" not in line and 'pip install -e ".[' in line, line
    assert "CMAKE_ARGS" not in ci and '-e ".[test,local]"' in ci
    assert f'"{RUNTIME_PIN}"' in (root / "pyproject.toml").read_text()
    assert RUNTIME_PIN in local_probe.reinstall_command()
