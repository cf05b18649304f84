"""Long-lived threads for the page writer (``cache/store.py: write_bytes_hashed``).

Why: a page's write, fsync, rename and directory fsync run in a second thread while the caller
hashes the bytes and renders the agent's window (the disk's waits overlapped with the CPU). A new
``threading.Thread`` per page costs ~0.1–0.2 ms of CPU to start, bootstrap and join on the 2-core
machine (docs/benchmarks.md, "CPU per page outside conversion") — about a tenth of the parent's
whole clean + store + window of a typical 14 KB page. Idle threads of one pool take the next
page instead.

Why it cannot deadlock: a writer task blocks only on its own decision event, which the caller
sets before it waits for the task (``_Writer.join``), so a queued task never waits for a running
one, whatever the pool size. A forked child gets a pool of its own (the parent's threads do not
exist there), and at interpreter shutdown, when a pool refuses new work, a page gets a thread of
its own as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

#: writer threads kept per process; more pages written at once than this queue (they never wait on each other)
MAX_THREADS = 16
_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid that made it, executor)


def _after_fork_in_child() -> None:
    """A child starts with no writer threads and a free lock (a parent's thread may have held it)."""
    global _lock, _pool
    _lock, _pool = threading.Lock(), None


os.register_at_fork(after_in_child=_after_fork_in_child)  # POSIX, as every runtime webshelf supports


def _executor() -> ThreadPoolExecutor:
    global _pool
    pid = os.getpid()
    with _lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="webshelf-page-write"))
        return _pool[1]


def submit(fn: Callable[[], None]) -> Future:
    """Run ``fn()`` in a writer thread; the future gives its exception, if any."""
    try:
        return _executor().submit(fn)
    except RuntimeError:  # the interpreter is shutting down: a thread of its own, as before the pool
        future: Future = Future()

        def run() -> None:
            try:
                fn()
                future.set_result(None)
            except BaseException as exc:  # noqa: BLE001 — handed to the waiting thread
                future.set_exception(exc)

        threading.Thread(target=run, name="webshelf-page-write", daemon=True).start()
        return future
