"""The one way to read any evaluation result: label and judged runs (``EvaluationResult``) and
TREC runs (``TrecResult``) alike.

- ``metric_names``: the measures it holds, in order;
- ``means()``: measure name -> the mean over the queries it scored (``None`` when none was);
- ``values(name)``: per-query values in query order (``None`` where not scored);
- ``to_dataframe()``: a pandas DataFrame, one row per query, one column per measure (NaN where
  not scored), indexed by the query ids.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ResultAccess(Protocol):
    @property
    def metric_names(self) -> list[str]: ...

    def means(self) -> dict[str, float | None]: ...

    def values(self, key: Any) -> list[float | None]: ...

    def to_dataframe(self) -> Any: ...


def import_pandas() -> Any:
    """pandas, or an ImportError that says which extra to install."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("to_dataframe needs pandas: pip install 'ragmeter[dataframe]'") from None
    return pd
