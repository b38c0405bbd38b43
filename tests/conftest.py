"""Shared fixtures: the bundled warranty sample and a helper to run the CLI in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from typer.testing import CliRunner

pytest_plugins = ["pytester"]
# Selenium Manager reports each run it makes; the browser tests give both paths so it never runs,
# and this keeps it quiet if one ever does (README, "Private")
os.environ.setdefault("SE_AVOID_STATS", "true")
# Tests import onnxruntime, Ray and MLflow directly too (tests.installed.need imports what a test
# needs), before ragmeter's own code would turn their telemetry off: off for the whole process,
# as ragmeter does for a user's (onnxruntime wrote to ~/.cache/Microsoft/... during a test run)
from ragmeter.core.privacy import OFF, telemetry_off  # noqa: E402

for _library in OFF:
    telemetry_off(_library)

# Hypothesis's default 200 ms deadline per example is a timed assertion: on a loaded 2-core machine
# a trec fingerprint example took 294 ms once and 21 ms on the retry, and the run failed as
# "flaky". Speed is measured by bench/, never by the tests; a test that sets its own deadline keeps it.
settings.register_profile("ragmeter", deadline=None)
settings.load_profile("ragmeter")

ROOT = Path(__file__).resolve().parent.parent
WARRANTY = ROOT / "examples" / "warranty"
SHARED = ROOT.parent / "shared"
TREC_REF = ROOT / "tests" / "data" / "trec_eval"  # vendored from SHARED / "reference" / "trec_eval" (SUBSET.md)


@pytest.fixture
def warranty() -> Path:
    return WARRANTY


@pytest.fixture
def runs_dir(tmp_path):
    return tmp_path / "runs"


@pytest.fixture
def cli(runs_dir):
    """Invoke the CLI in-process; run directories go to a temporary folder."""
    from ragmeter.cli.main import app

    runner = CliRunner()

    def invoke(*args: str):
        args = [str(a) for a in args]
        if args and args[0] == "eval" and "--runs-dir" not in args:
            args += ["--runs-dir", str(runs_dir)]
        return runner.invoke(app, args, catch_exceptions=False)

    return invoke


@pytest.fixture
def seed_server():
    """The HTTP test judge answering like the seed article's q1."""
    from . import judge_server, seed_judge

    srv, state = judge_server.start(seed_judge.over_http)
    yield state
    srv.shutdown()


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path whose parent is a regular file: no folder can ever be created there."""
    (tmp_path / "a-file").write_text("x")
    return tmp_path / "a-file" / "sub"


def one_error_line(r, path: Path, option: str) -> None:
    """A refused output path: exit 2, one ``error:`` line naming the path and the option to change."""
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert str(path) in lines[0] and f"choose another with {option}" in lines[0], r.output
    assert "Traceback" not in r.output


@pytest.fixture
def judged_env(seed_server, tmp_path, monkeypatch):
    """``openai:<model>`` pointed at the HTTP test judge (the seed's q1 verdicts); the ledger
    goes to a temporary runs directory."""
    monkeypatch.setenv("OPENAI_BASE_URL", seed_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    return seed_server
