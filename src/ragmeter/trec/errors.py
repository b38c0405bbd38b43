"""The trec mode's refusals, each with the exit status trec_eval 10.0 gives for the same input.

trec_eval exits 1 for a measure it does not know, 2 for a file it cannot read (a malformed
line: ``trec_eval.c`` "Quit in file"), 4 when a topic cannot be evaluated (a qrels topic the
run does not answer without ``-c``, a document listed twice, a topic whose judgments are all
negative), 7 when no topic has both results and judgments. ``ragmeter trec`` exits with the
same status (``exit_code``); the message still names the file, line and field, and the fix.
"""

from __future__ import annotations

from ragmeter.core.errors import InvalidInputError, InvalidParameterError

EXIT_MEASURE = 1  # trec_eval: illegal measure
EXIT_FILE = 2  # trec_eval: Quit in file / Cannot initialize measure
EXIT_TOPIC = 4  # trec_eval: Can't calculate measure / result qid not found
EXIT_NO_TOPIC = 7  # trec_eval: No queries with both results and relevance info


class TrecInputError(InvalidInputError):
    """A qrels or run file (or its content) that trec_eval refuses too."""

    def __init__(self, message: str, *, exit_code: int = EXIT_FILE, **where: object) -> None:
        super().__init__(message, **where)  # type: ignore[arg-type]
        self.exit_code = exit_code


class TrecMeasureError(InvalidParameterError):
    """A measure request trec_eval refuses (unknown name: 1; bad cut-offs: 2)."""

    def __init__(self, message: str, *, exit_code: int = EXIT_MEASURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code
