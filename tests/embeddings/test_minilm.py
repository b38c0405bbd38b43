"""No telemetry from the bundled embedder's runtime: an eval that uses the embedder creates or
grows no file under the user's home or cache folders (onnxruntime 1.32 wrote a ProcessInfo
event to ~/.cache/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db on import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.installed import need

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"


def _files(top: Path) -> dict[str, int]:
    return {str(p.relative_to(top)): p.stat().st_size for p in top.rglob("*") if p.is_file()}


@pytest.mark.slow  # a subprocess that loads the embedding model
def test_an_eval_with_the_embedder_leaves_home_and_caches_as_they_were(tmp_path):
    need("onnxruntime", "install the embeddings extra: pip install -e '.[embeddings]'")
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    (home / ".cache" / "kept.txt").write_text("a file that was there")  # must not grow either
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY",) and not k.startswith("XDG_")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"))
    before = _files(home)
    out = subprocess.run([sys.executable, "-m", "ragmeter", "eval", str(WARRANTY / "dataset.jsonl"), "--corpus",
                          str(WARRANTY / "corpus.jsonl"), "-m", "semantic_similarity,token_match",
                          "--judge", "none", "--runs-dir", str(tmp_path / "runs"), "--progress", "none"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "semantic_similarity: 1 scored" in out.stdout
    assert _files(home) == before
    assert not (home / ".cache" / "Microsoft").exists()


def test_telemetry_is_off_before_onnxruntime_is_imported(monkeypatch):
    """The switch is set by the embedder itself (a user's own setting is kept)."""
    need("onnxruntime", "install the embeddings extra: pip install -e '.[embeddings]'")
    from ragmeter.embeddings.minilm import MiniLM

    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    MiniLM().load()
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "0")
    MiniLM().load()
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "0"
