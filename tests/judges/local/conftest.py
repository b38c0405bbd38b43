"""The bundled model loaded once per test module, for the slow tests that run it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def llm():
    from tests.installed import need

    need("cyllama", "the local judge needs: pip install 'ragmeter[local]'")
    from ragmeter.judges.local.llm import LocalLLM
    from ragmeter.judges.local.model import bundled_model

    return LocalLLM(bundled_model(), n_ctx=2048, threads=None, parallel=4)
