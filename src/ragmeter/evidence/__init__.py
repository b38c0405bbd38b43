"""Evidence: what judged metrics read, and how each part of it is obtained.

The layer between the sources of judgments and data (judges, records, actions, embeddings)
and the metrics: ``matrix`` holds one sample's evidence as data (claims, verdicts, needed
sentences, questions, rubric scores, standalone turns, facts, action grades).
"""

from ragmeter.evidence.matrix import Claim, Evidence, Unavailable, Verdict

__all__ = ["Claim", "Evidence", "Unavailable", "Verdict"]
