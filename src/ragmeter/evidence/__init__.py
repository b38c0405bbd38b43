"""Evidence: what judged metrics read, and how each part of it is obtained.

The layer between the sources of judgments and data (judges, records, actions, embeddings)
and the metrics:

- ``matrix``: one sample's evidence as data (claims, verdicts, needed sentences, questions,
  rubric scores, standalone turns, facts, action grades) and the names metrics need it by;
- ``sources``: the judge, embedder, record lookup and criteria of a run, as one value;
- ``provider``: what a provider of one kind of evidence does, and where each kind's lives
  (``claims``, ``context_sentences``, ``answer_questions``, ``rubric_scores``,
  ``standalone_turns``, ``fact_checks``, ``action_grades``);
- ``planner``: the two-stage loop over the providers a run needs.

Names are imported on first use (see :mod:`ragmeter._lazy`): a label-only run that imports
``evidence.sources`` loads none of the rest.
"""

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.evidence.matrix import Claim, Evidence, Unavailable, Verdict
