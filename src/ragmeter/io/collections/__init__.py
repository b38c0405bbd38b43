"""``ragmeter import``: standard test collections (BEIR, MS MARCO, TREC) read into a
:class:`~ragmeter.io.collections.collection.Collection` and written as a ragmeter dataset and
corpus (``collection.py``); one reader module per collection layout."""
