"""``io/formats/samples.py``: ragmeter's own objects are read as they are."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.errors import UnsupportedInputError
from ragmeter.core.sample import Sample


def test_samples_and_a_dataset_are_read_as_they_are():
    samples = [Sample(id="a", question="q"), Sample(id="b", question="r")]
    data = ragmeter.load_dataset(samples)
    assert data.samples == tuple(samples) and ragmeter.load_dataset(data) is data


def test_data_of_no_kind_lists_what_is_read():
    with pytest.raises(UnsupportedInputError) as caught:
        ragmeter.load_dataset(3)
    assert "a list of ragmeter Samples" in str(caught.value) and "a ragmeter Dataset" in str(caught.value)
