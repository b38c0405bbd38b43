"""The manual's "Beyond the context" section (docs/guides/records-actions.md): its two code blocks
run, and give what it says."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    from tests import manual

    return manual.section("## Beyond the context: records and actions")


def test_readme_blocks_run_and_say_what_they_print(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.DOTALL)
    assert len(blocks) == 2
    facts: dict = {}
    exec(blocks[0], facts)  # noqa: S102  (README's own example)
    assert [c.verdict for c in facts["checks"]] == ["fail", "pass"]
    assert facts["checks"][0].reason == "stated $89; the record holds 99 USD"
    assert facts["record_accuracy"](facts["checks"]) == 1 / (1 + 1)
    actions: dict = {}
    exec(blocks[1], actions)  # noqa: S102
    grades = actions["grades"]
    assert [(g.case_id, g.verdict) for g in grades] == [("a1", "fail"), ("a2", "unable_to_verify"), ("a3", "pass"),
                                                       ("a4", "unable_to_verify")]
    summary = actions["summarise"](grades)
    assert (summary.pass_rate, summary.coverage) == (1 / (1 + 1), (1 + 1) / 4)
    section = _section()
    for said in ("# ['fail', 'pass']; checks[0].reason: 'stated $89; the record holds 99 USD'",
                 "# 0.5 = 1 / (1 + 1)", "# a1 fail, a2 unable_to_verify, a3 pass, a4 unable_to_verify",
                 "# (0.5, 0.5)"):
        assert said in section


def test_example_readme_numbers(monkeypatch):
    text = (ROOT / "examples" / "warranty" / "README.md").read_text()
    assert "pass rate 1/2 over the cases with a\nverdict, coverage 2/4" in text
