"""Subprocess for the watch tests: append N requests (and a malformed line every 10th) slowly."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.live_judge import request_line  # noqa: E402

path, n, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for i in range(n):
    with open(path, "a") as f:
        f.write(request_line(i))
        if i % 10 == 9:
            f.write("{not json\n")
    time.sleep(delay)
