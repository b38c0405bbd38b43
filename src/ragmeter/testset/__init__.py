"""Test-set generation: questions written from corpus chunks through any judge, each with the
chunk ids it came from as relevance labels, a reference answer and reference claims; checked by
the judge, de-duplicated by embedding similarity, and written as an ordinary dataset."""
