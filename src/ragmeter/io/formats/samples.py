"""ragmeter's own objects in memory: a list of :class:`~ragmeter.core.sample.Sample`, or a
:class:`~ragmeter.io.dataset.Dataset` (read as they are: :func:`ragmeter.io.dataset.load_dataset`)."""

from __future__ import annotations

from ragmeter.io.formats.base import Format

FORMAT = Format(name="samples", accepted=("a list of ragmeter Samples", "a ragmeter Dataset"))
