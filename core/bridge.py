"""The one sync-over-async bridge: run a coroutine to completion from ordinary code.

``web_extract_sync``, ``call_tool`` and the CLI all need the same thing — an ``async`` API
called from code that is not async, possibly from inside a running event loop (a Jupyter cell,
an async agent framework calling a sync tool). Two copies of this logic had drifted apart
(one kept a loop per thread, the other built a fresh one per call), so there is one here:

* no running loop in this thread: run on a loop kept per thread between calls (``asyncio.run``
  builds and tears down a loop and its default executor every time — about 1 ms, half of a
  cache hit);
* a running loop in this thread: blocking it would deadlock, so the coroutine runs on a fresh
  loop in a worker thread and this thread waits for the result.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # imported on the first call: importing this module must not load asyncio (issue 15)
    import asyncio

T = TypeVar("T")

_thread_state = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    import asyncio

    loop = getattr(_thread_state, "loop", None)
    if loop is None or loop.is_closed():
        loop = _thread_state.loop = asyncio.new_event_loop()
    return loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The result of ``coro``, run to completion (works inside a running event loop too)."""
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run_until_complete(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="webshelf-sync") as pool:
        return pool.submit(asyncio.run, coro).result()
