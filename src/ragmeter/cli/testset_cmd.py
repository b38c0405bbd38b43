"""``ragmeter testset generate`` (placeholder while building)."""
