"""Relevance labeling by people: a local page (``ragmeter label``), the append-only labels file,
agreement between labelers, adjudication, and export to a dataset's ``relevant`` field or qrels."""
