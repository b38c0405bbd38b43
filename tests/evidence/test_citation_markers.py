"""``ragmeter.evidence.citation_markers``: the markers an answer writes and the chunks they name."""

from __future__ import annotations

from ragmeter.evidence.citation_markers import markers, resolve


def test_a_marker_names_a_chunk_by_id_or_by_its_place_in_the_prompt():
    ctx = ("warranty-r1", "warranty-r2", "claim-steps")
    assert [resolve(m, ctx) for m in ("1", "[3]", " claim-steps ", "4", "0", "doa-exchange")] == \
        ["warranty-r1", "claim-steps", "claim-steps", None, None, None]


def test_markers_are_read_in_order_and_never_across_lines_or_nested_brackets():
    assert markers("24 months [2]. Five days [claim-steps][4].") == ("2", "claim-steps", "4")
    assert markers("no citation here") == ()
    assert markers("[a\nb] [[x]]") == ("x",)
