"""numpy <-> Arrow for fixed-width columns, straight from and into their buffers.

pyarrow's own ``pa.array(...)``, ``pa.scalar(...)`` and ``Array.to_numpy()`` import pandas
when it is installed (to check whether the object is a pandas one): 0.3 s, a fifth of a
10M-line evaluation. These two functions do the same for the types the trec path uses
(integers, floats, booleans), zero-copy where Arrow allows it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def to_numpy(values: pa.Array | pa.ChunkedArray, *, null: float | None = None) -> np.ndarray:
    """A numeric or boolean column as numpy; nulls become ``null`` (an error when not given)."""
    if isinstance(values, pa.ChunkedArray):
        parts = [to_numpy(c, null=null) for c in values.chunks]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, values.type.to_pandas_dtype())
    n, offset = len(values), values.offset
    validity, data = values.buffers()[:2]
    if pa.types.is_boolean(values.type):
        out = _bits(data, offset, n)
    else:
        dtype = np.dtype(values.type.to_pandas_dtype())
        out = np.frombuffer(data, dtype=dtype)[offset:offset + n] if data is not None else np.zeros(0, dtype)
    if values.null_count:
        if null is None:
            raise ValueError("the column has nulls")
        out = np.where(_bits(validity, offset, n), out, null)
    return out


def from_numpy(values: np.ndarray) -> pa.Array:
    """A one-dimensional numeric or boolean numpy array as an Arrow array (no nulls)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little", count=offset + n)
    return bits[offset:].astype(bool)
