"""Optional packages a test needs: skipped with the install command where they are missing,
except under ``RAGMETER_CI=1`` (set by ``.ci/run``, which installs them all), where a missing
one fails the test instead of hiding behind a skip."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

TEST_EXTRA = "install the test extra: pip install -e '.[test]'"
#: Ragas and DeepEval, test-only, installed without their dependency trees (the file says why).
FOREIGN = "pip install --no-deps -r tests/requirements-foreign.txt"


def need(module: str, install: str = TEST_EXTRA) -> ModuleType:
    """``module`` imported, or the test skipped saying ``install`` (never skipped in CI)."""
    if os.environ.get("RAGMETER_CI") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=install)
