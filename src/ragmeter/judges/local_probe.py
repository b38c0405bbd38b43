"""The local judge's first-load guard: load the model and decode once in a child process.

llama.cpp compiled for another CPU dies with SIGILL ("Illegal instruction") at its first decode,
and takes the Python process with it: a wheel built with ``-march=native`` on one machine and
reused from pip's cache on another, llama.cpp's AMX path on recent Xeons (``tilezero`` in
``ggml_backend_amx_mul_mat``), or a portable AVX2 build on a CPU without AVX2. So before the
first in-process load, ``ensure_loadable`` runs ``python -m ragmeter.judges.local_probe MODEL``
with the judge's own load settings. If the child dies by a signal (or fails, or hangs), the
judge raises ``LocalJudgeCrashed``: what happened, and the exact command that fixes it. A
success is remembered in the cache directory per (llama-cpp-python version, model sha256,
load settings, CPU flags), so the probe costs one model load once per machine.

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
from ragmeter.judges.local_model import cache_dir

LLAMA_CPP_PIN = "llama-cpp-python==0.3.36"
# The portable build README and .ci/run install: AVX2/FMA/F16C code paths only (every x86-64 CPU
# since 2013-2015), no -march=native and so no AMX or AVX-512 kernels.
PORTABLE_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "
                       "-DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
                       "-DLLAMA_BUILD_SERVER=OFF")
# For a CPU without AVX2: compile for this CPU only.
NATIVE_CMAKE_ARGS = "-DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
PROBE_TIMEOUT_S = 600.0
ENV_OVERRIDE = "RAGMETER_LOCAL_PROBE"


class LocalJudgeCrashed(JudgeUnavailableError):
    """llama.cpp cannot run on this CPU as installed; the message gives the reinstall command."""


def reinstall_command(flags: frozenset[str] | None = None) -> str:
    """The pip line that rebuilds llama-cpp-python for this CPU, bypassing pip's wheel cache."""
    flags = cpu_flags() if flags is None else flags
    args = PORTABLE_CMAKE_ARGS if "avx2" in flags or not flags else NATIVE_CMAKE_ARGS
    return (f'CMAKE_ARGS="{args}" pip install --force-reinstall --no-cache-dir --no-binary llama-cpp-python '
            f'--no-deps {LLAMA_CPP_PIN}')


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags the kernel reports (Linux); empty where they cannot be read."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def _llama_cpp_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return "not installed"


def probe_key(sha256: str, settings: dict) -> str:
    """What a success is remembered by: the build, the model, the load settings and the CPU."""
    import platform

    parts = {"llama_cpp": _llama_cpp_version(), "model": sha256, "settings": settings,
             "cpu": sorted(cpu_flags()) or platform.processor(), "machine": platform.machine(),
             "probe": os.environ.get(ENV_OVERRIDE, "")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _stamp(key: str) -> Path:
    return cache_dir() / "probes" / f"{key}.json"


def probe_command(model: Path, settings: dict) -> list[str]:
    override = os.environ.get(ENV_OVERRIDE)
    if override:
        return [*shlex.split(override), str(model)]
    return [sys.executable, "-m", "ragmeter.judges.local_probe", str(model), json.dumps(settings)]


def ensure_loadable(model: Path, sha256: str, settings: dict, *, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise ``LocalJudgeCrashed`` unless a child process can load ``model`` and decode once."""
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
                                f"If the machine is not just overloaded, rebuild llama.cpp for this CPU: "
                                f"{reinstall_command()}") from None
    if out.returncode < 0:
        raise LocalJudgeCrashed(_crash_message(model, -out.returncode, out.stderr))
    if out.returncode != 0 or "probe ok" not in out.stdout:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        raise LocalJudgeCrashed(f"the local judge's start-up check failed (exit status {out.returncode}): "
                                f"{' | '.join(tail) or 'no output'}")
    stamp = _stamp(key)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"ok": True, "seconds": round(time.perf_counter() - start, 2),
                               "llama_cpp": _llama_cpp_version(), "settings": settings}))
    os.replace(tmp, stamp)


def _crash_message(model: Path, signum: int, stderr: str) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    flags = cpu_flags()
    if signum == signal.SIGILL:
        what = ("SIGILL, illegal instruction: the installed llama-cpp-python was compiled for another CPU (a "
                "-march=native wheel reused from pip's cache, or llama.cpp's AMX path on a recent Xeon")
        what += ", and this CPU has no AVX2)" if flags and "avx2" not in flags else ")"
    else:
        what = f"{name}"
    return (f"the local judge cannot run on this CPU: llama.cpp died with {what} while loading {model.name} and "
            f"decoding one token in a child process, so it was not loaded into this one and nothing was scored "
            f"with it. Fix: rebuild llama-cpp-python for this CPU, bypassing pip's wheel cache:\n    "
            f"{reinstall_command(flags)}")


def _main(argv: list[str]) -> int:
    """The child: load with the given settings, decode one token, say so."""
    from ragmeter.judges.local_llm import open_llama

    settings = json.loads(argv[1]) if len(argv) > 1 else {}
    llm = open_llama(Path(argv[0]), n_ctx=256, **settings)
    llm.eval(llm.tokenize(b"The claim is", add_bos=True))
    print("probe ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
