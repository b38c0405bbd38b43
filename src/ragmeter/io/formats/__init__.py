"""Input formats: one module per format a dataset arrives in (ragmeter's own rows, Ragas,
DeepEval, RAGChecker, ragmeter's conversations, MTRAG, OpenInference spans, ragmeter's objects),
each saying what it reads (``base.Format``); ``registry`` registers them and dispatches records
to them; ``conversations`` reads a record that holds several samples into one per sample."""
