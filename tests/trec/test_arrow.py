"""The buffer-level numpy <-> Arrow helpers agree with pyarrow's own conversions, and the
file-to-numbers trec path never imports pandas (pyarrow's conversions do: 0.3 s)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.trec.arrow import from_numpy, to_numpy
from tests.conftest import TREC_REF

values = st.lists(st.one_of(st.none(), st.integers(-2**40, 2**40)), max_size=40)


@settings(deadline=None)  # no timing assertion: a busy machine is not a failure
@given(values, st.integers(0, 5), st.sampled_from([pa.int64(), pa.int32(), pa.float64(), pa.bool_()]))
def test_to_numpy_matches_pyarrow_including_offsets_and_nulls(items, cut, kind):
    if kind == pa.int32():
        items = [None if v is None else v % 2**31 for v in items]
    if kind == pa.bool_():
        items = [None if v is None else bool(v % 2) for v in items]
    array = pa.array(items, kind).slice(min(cut, len(items)))
    got = to_numpy(array, null=0)
    expected = [0 if v is None else v for v in array.to_pylist()]
    assert got.tolist() == expected
    if array.null_count:
        with pytest.raises(ValueError):
            to_numpy(array)


@settings(deadline=None)  # no timing assertion: a busy machine is not a failure
@given(st.lists(st.lists(st.floats(allow_nan=False), max_size=5), max_size=4))
def test_to_numpy_of_chunks(chunks):
    column = pa.chunked_array([pa.array(c, pa.float64()) for c in chunks], pa.float64())
    assert to_numpy(column).tolist() == column.to_pylist()


@settings(deadline=None)  # no timing assertion: a busy machine is not a failure
@given(st.lists(st.booleans(), max_size=70))
def test_from_numpy_round_trips_booleans_and_numbers(bits):
    mask = np.array(bits, dtype=bool)
    assert from_numpy(mask).to_pylist() == bits
    numbers = np.arange(len(bits), dtype=np.int64) * 3 - 7
    assert from_numpy(numbers).to_pylist() == numbers.tolist()
    assert from_numpy(numbers[::2]).to_pylist() == numbers[::2].tolist()  # not contiguous


@pytest.mark.parametrize("parts", [None, 300])  # in memory, and in topic partitions
def test_the_trec_path_does_not_import_pandas(parts):
    call = "evaluate_trec" if parts is None else "evaluate_trec_streaming"
    code = ("import sys; from ragmeter.trec import evaluate_trec; "
            "from ragmeter.trec.partitioned import evaluate_trec_streaming; "
            f"r = {call}({str(TREC_REF / 'qrels.test')!r}, {str(TREC_REF / 'results.test')!r}, "
            f"['all_trec', 'ndcg_cut.10']{'' if parts is None else f', max_part_rows={parts}'}); "
            "print('pandas' in sys.modules, r.mean('map') > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
