"""``ragmeter.label.tasks``: What a labeler sees: one task per question, with the candidate chunks to grade."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Chunk, Sample
from ragmeter.label.tasks import build_tasks


def test_candidates_from_the_corpus_by_embedding_when_no_list_is_given():
    corpus = {"a": "apples are red", "b": "the warranty lasts two years", "c": "bananas are yellow"}
    letters = "abcdefghijklmnopqrstuvwxyz"

    def embed(texts):
        return [[t.count(ch) + 0.01 for ch in letters] for t in texts]

    from ragmeter.embeddings import CallableEmbedder

    tasks = build_tasks([Sample("q", "how long is the warranty", ())], corpus=corpus, k=2,
                        embedder=CallableEmbedder(embed))
    vecs = np.array(embed(list(corpus.values())))
    q = np.array(embed(["how long is the warranty"]))[0]
    cos = vecs @ q / np.linalg.norm(vecs, axis=1) / np.linalg.norm(q)
    assert [c.id for c in tasks[0].candidates] == [list(corpus)[i] for i in np.argsort(-cos)[:2]]
    assert tasks[0].candidates[0].source == "embedder"
    with pytest.raises(InvalidInputError, match="give --corpus"):
        build_tasks([Sample("q", "x", ())])
    with pytest.raises(InvalidInputError, match="no text to show"):
        build_tasks([Sample("q", "x", (Chunk("zz"),))])


def test_a_conversation_turn_shows_the_conversation_so_far():
    s = Sample("c1#2", "And for the other one?", (Chunk("a", text="x"),),
               metadata={"history": "User: Which router has 24 months?\nAssistant: The R2."})
    (task,) = build_tasks([s])
    assert task.history.startswith("User: Which router") and task.as_dict()["history"] == task.history
    (first,) = build_tasks([Sample("c1#1", "Which?", (Chunk("a", text="x"),), metadata={"history": "(none)"})])
    assert first.history == ""
