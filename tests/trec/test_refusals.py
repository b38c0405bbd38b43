"""What trec_eval 10.0 cannot evaluate, refused with its exit status."""

from __future__ import annotations

import pytest

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.refusals import refuse_missing, refuse_unscorable_topics


def test_a_topic_with_no_grade_at_or_above_0():
    refuse_unscorable_topics(["a", "b"], [1, -1], "q")  # all -1 after a judged topic: evaluated (R = 0)
    with pytest.raises(TrecInputError, match="topic 'a'.*no topic before it.*exit 4") as first:
        refuse_unscorable_topics(["a", "b"], [-1, 1], "q")
    with pytest.raises(TrecInputError, match="topic 'b'.*all below -1.*crashes") as after:
        refuse_unscorable_topics(["a", "b"], [0, -2], "q")
    assert first.value.exit_code == after.value.exit_code == 4


def test_missing_topics():
    refuse_missing([], "r")
    with pytest.raises(TrecInputError, match="12 qrels topic.s. have no results in the run: '0', .* '9' ...") as exc:
        refuse_missing([str(i) for i in range(12)], "r")
    assert exc.value.exit_code == 4
