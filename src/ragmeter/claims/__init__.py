"""The claim matrix: each sample's claims and their verdicts against each source, as data.

Nothing here calls a judge: ``ragmeter.engine.planner`` builds the requests and fills an
``Evidence`` per sample; the claim metrics read it.
"""
