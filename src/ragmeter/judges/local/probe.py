"""The local judge's first-load guard: load the model and decode once in a child process.

A llama.cpp build that meets an instruction this CPU lacks dies with SIGILL ("Illegal
instruction") at its first decode and takes the Python process with it. The prebuilt runtime
(``runtime``) needs AVX2, FMA and F16C: ``runtime.require_cpu`` refuses a CPU without
them, from /proc/cpuinfo, before anything is started or loaded. This probe covers the rest (a
damaged or replaced wheel, a CPU or hypervisor whose flags do not tell the truth): before the
first in-process load, ``ensure_loadable`` runs ``python -m ragmeter.judges.local.probe MODEL``
with the judge's own load settings. If the child dies by a signal (or fails, or hangs), the judge
raises ``LocalJudgeCrashed``: what happened, and the command that puts back the pinned runtime.
A success is remembered in the cache directory per (runtime version, model sha256, load
settings, CPU flags), so the probe costs one model load once per machine.

``RAGMETER_LOCAL_PROBE`` replaces the probe command (split like a shell line; the model path is
appended); the tests use it to make the probe die with SIGILL.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges.local import runtime as local_runtime
from ragmeter.judges.local.model import cache_dir
from ragmeter.judges.local.runtime import RUNTIME_PIN, runtime_version

PROBE_TIMEOUT_S = 600.0
ENV_OVERRIDE = "RAGMETER_LOCAL_PROBE"


class LocalJudgeCrashed(JudgeUnavailableError):
    """llama.cpp cannot run on this CPU as installed; the message gives the reinstall command."""


def reinstall_command() -> str:
    """The pip line that puts back the pinned prebuilt runtime (bypassing pip's cache)."""
    return f"pip install --force-reinstall --no-deps --no-cache-dir {RUNTIME_PIN}"


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags the kernel reports (Linux); empty where they cannot be read."""
    return local_runtime.cpu_flags()


def probe_key(sha256: str, settings: dict) -> str:
    """What a success is remembered by: the runtime, the model, the load settings and the CPU."""
    import platform

    parts = {"runtime": runtime_version(), "model": sha256, "settings": settings,
             "cpu": sorted(cpu_flags()) or platform.processor(), "machine": platform.machine(),
             "probe": os.environ.get(ENV_OVERRIDE, "")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _stamp(key: str) -> Path:
    return cache_dir() / "probes" / f"{key}.json"


def probe_command(model: Path, settings: dict) -> list[str]:
    override = os.environ.get(ENV_OVERRIDE)
    if override:
        return [*shlex.split(override), str(model)]
    return [sys.executable, "-m", "ragmeter.judges.local.probe", str(model), json.dumps(settings)]


def ensure_loadable(model: Path, sha256: str, settings: dict, *, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise ``CpuUnsupported`` on a CPU without AVX2/FMA/F16C (no child started), and
    ``LocalJudgeCrashed`` unless a child process can load ``model`` and decode once."""
    local_runtime.require_cpu(cpu_flags())  # empty flags (not Linux): nothing to go by
    key = probe_key(sha256, settings)
    if _stamp(key).exists():
        return
    cmd = probe_command(model, settings)
    start = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LocalJudgeCrashed(f"the local judge's start-up check (load {model.name} and decode one token in a "
                                f"child process) did not finish in {timeout:.0f} s; nothing was scored with it. "
                                f"If the machine is not just overloaded, reinstall the runtime: "
                                f"{reinstall_command()}") from None
    if out.returncode < 0:
        raise LocalJudgeCrashed(_crash_message(model, -out.returncode))
    if out.returncode != 0 or "probe ok" not in out.stdout:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        raise LocalJudgeCrashed(f"the local judge's start-up check failed (exit status {out.returncode}): "
                                f"{' | '.join(tail) or 'no output'}")
    stamp = _stamp(key)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"ok": True, "seconds": round(time.perf_counter() - start, 2),
                               "runtime": runtime_version(), "settings": settings}))
    os.replace(tmp, stamp)


def _crash_message(model: Path, signum: int) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    what = (f"SIGILL, illegal instruction: the installed llama.cpp kernels use an instruction this CPU does not "
            f"execute (the pinned {RUNTIME_PIN} wheel needs AVX2, FMA and F16C)" if signum == signal.SIGILL else name)
    return (f"the local judge cannot run on this CPU: llama.cpp died with {what} while loading {model.name} and "
            f"decoding one token in a child process, so it was not loaded into this one and nothing was scored "
            f"with it. Fix: put back the pinned runtime (a replaced or damaged wheel), or use an API judge "
            f"(--judge openai:<model>):\n    {reinstall_command()}")


def _main(argv: list[str]) -> int:
    """The child: load with the given settings, decode one token, say so."""
    from ragmeter.judges.local.llm import open_runtime

    settings = json.loads(argv[1]) if len(argv) > 1 else {}
    runtime = open_runtime(Path(argv[0]), n_ctx=256, **settings)
    runtime.eval_prefix(runtime.tokenize("The claim is"))
    print("probe ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
