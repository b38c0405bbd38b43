"""Running ragmeter's async core from synchronous code, also where an event loop is already
running (a Jupyter notebook, an async web app).

``asyncio.run`` refuses to start inside a running loop, and ragmeter does not patch the loop
(no ``nest_asyncio``): there, the coroutine runs to completion on a new loop in one worker
thread while the caller waits. Objects bound to a loop (HTTP clients, conditions) are made
inside the coroutine, so they belong to the loop that runs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def loop_running() -> bool:
    """Whether this thread is inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to completion and return its result (or raise its error).

    >>> async def two() -> int:
    ...     return 2
    >>> run_sync(two)
    2
    """
    if not loop_running():
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragmeter-sync") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
