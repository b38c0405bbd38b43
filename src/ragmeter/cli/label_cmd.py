"""``ragmeter label``: a local page for people to label relevance (placeholder while building)."""
