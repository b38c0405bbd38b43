"""Shared fixtures: the bundled warranty sample and a helper to run the CLI in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
WARRANTY = ROOT / "examples" / "warranty"
SHARED = ROOT.parent / "shared"
TREC_REF = SHARED / "reference" / "trec_eval"


@pytest.fixture
def warranty() -> Path:
    return WARRANTY


@pytest.fixture
def cli():
    from ragmeter.cli.main import app

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke
