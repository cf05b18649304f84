"""Conversion in worker processes: CPU-bound work never holds the event loop, and a page that
blows its budget costs only its own URL (issues 15 and 16).

Why processes: conversion (Lexbor, html-to-markdown, pypdf, plus Python glue) holds the GIL for
~10 ms a page; at concurrency 32 that alone exceeds the network-ideal wall time, and a thread
cannot be stopped. A worker process can: pebble's ``ProcessPool`` kills a worker whose task
passes its timeout and starts a new one, and a worker that dies (an address-space limit hit in
C or Rust code aborts it) fails only the task it was running. Each worker sets
``RLIMIT_AS`` to its idle address space plus ``web.convert_memory_mb`` at start, so peak memory
is bounded by ``convert_workers × convert_memory_mb`` whatever the pages are.

When not to use it: ``web.convert_workers`` 0 or 1 converts in this process, and so does a call
with one URL whose body is small (no pool start-up for the CLI's single page); pre-checks
(core/convert/html_precheck.py, by_type.py, pdf_text.py) still apply there. PDFs always go to a
worker when a pool is allowed: a few KB of PDF can hold minutes of work.

Hand-over: the body goes to the worker as bytes (decoded there). The Markdown comes back pickled,
except for a page over ``web.convert_huge_bytes``: its worker writes the Markdown slice by slice
to a file in this pool's private temporary directory (core/convert/html_huge.py) and sends back
only the title, so the worker never holds, pickles or sends a second whole copy; the parent reads
the file once and deletes it (docs/benchmarks.md, "Conversion worker pool": peak RSS).

One pool per process (``shared_pool``), started on first use with the ``forkserver`` method (the
parent has threads; forking it would be unsafe; core/convert/pool_context.py keeps the
caller's ``__main__`` out of the workers), its server preloading the converters so a new
worker is a cheap fork; shut down at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import resource
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from concurrent.futures import TimeoutError as FutureTimeout

from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.pool_context import worker_context
from webshelf.errors import ConversionTimeoutError, TooComplexError

#: A single page below this size converts in this process when it is the only URL of the call.
INLINE_BYTES = 256 * 1024
_PRELOAD = ["webshelf.core.convert.by_type", "webshelf.core.convert.html_markdown", "webshelf.core.convert.pdf_text"]


def default_workers() -> int:
    """The CPUs this process may run on (its affinity mask, as a container's CPU set), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _init_worker(memory_mb: int) -> None:
    """In each worker: load the converters, then cap the address space at idle + budget. The loaded
    modules are frozen out of the cyclic GC: they live as long as the worker, and every full
    collection would otherwise walk them again (~1% of a page's conversion CPU in an interleaved A/B
    of two one-worker pools, 300 WCXB pages, 3 rounds: 20.21 -> 20.02 ms median)."""
    import gc
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    gc.freeze()
    limit = _vm_bytes() + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _convert_in_worker(body: bytes, content_type: str | None, url: str, bounds: Bounds,  # noqa: ANN202
                       spool: str | None = None):
    from webshelf.core.convert.by_type import to_markdown

    try:
        return to_markdown(body, content_type, url, bounds=bounds, spool=spool)
    except MemoryError:
        raise _too_much_memory(url, bounds) from None


def _too_much_memory(url: str, bounds: Bounds) -> TooComplexError:
    return TooComplexError(f"{url}: converting the page needed more than web.convert_memory_mb "
                           f"({bounds.memory_mb:,} MB); the worker was stopped — raise web.convert_memory_mb "
                           "to read it", url=url)


def _unspooled(converted):  # noqa: ANN001, ANN202 — by_type.Converted
    """The Converted a worker spooled (a huge page's Markdown in a file, not in the pickled result)."""
    import dataclasses

    text = Path(converted.spool).read_text(encoding="utf-8")
    return dataclasses.replace(converted, markdown=text, spool=None)


class ConvertPool:
    """``await pool.convert(body, content_type, url, bounds)`` → ``Converted`` or a per-URL error."""

    def __init__(self, workers: int, memory_mb: int) -> None:
        from pebble import ProcessPool

        self.workers, self.memory_mb = workers, memory_mb
        ctx = worker_context(_PRELOAD)
        self._pool = ProcessPool(max_workers=workers, initializer=_init_worker, initargs=(memory_mb,), context=ctx)
        self._spool_dir: str | None = None

    async def convert(self, body: bytes, content_type: str | None, url: str, bounds: Bounds):  # noqa: ANN201
        from pebble import ProcessExpired

        spool = self._spool_path() if len(body) > bounds.huge_bytes else None
        future = self._pool.schedule(_convert_in_worker, args=(body, content_type, url, bounds, spool),
                                     timeout=bounds.timeout_s)
        try:
            converted = await asyncio.wrap_future(future)
            return _unspooled(converted) if converted.spool else converted
        except FutureTimeout:
            raise ConversionTimeoutError(
                f"{url}: converting the page took longer than web.convert_timeout_s ({bounds.timeout_s:g} s); the "
                "worker was stopped — raise web.convert_timeout_s to wait longer", url=url) from None
        except ProcessExpired as exc:  # killed from outside, or aborted by the address-space limit
            raise TooComplexError(
                f"{url}: the conversion worker died (exit code {exc.exitcode}) — most often the page needed more than "
                f"web.convert_memory_mb ({bounds.memory_mb:,} MB); it was replaced, the other URLs are unaffected",
                url=url) from None
        except asyncio.CancelledError:
            future.cancel()
            raise
        finally:
            if spool is not None:
                Path(spool).unlink(missing_ok=True)

    def _spool_path(self) -> str:
        """A new file name in this pool's private directory (mode 0700, removed by ``close``)."""
        if self._spool_dir is None:
            self._spool_dir = tempfile.mkdtemp(prefix="webshelf-convert-")
        return os.path.join(self._spool_dir, f"{uuid.uuid4().hex}.md")

    def close(self) -> None:
        self._pool.stop()
        self._pool.join(timeout=5)
        if self._spool_dir is not None:
            shutil.rmtree(self._spool_dir, ignore_errors=True)
            self._spool_dir = None

    def worker_pids(self) -> list[int]:
        """The pids of the live workers (tests kill one mid-conversion)."""
        return [w.pid for w in list(self._pool._pool_manager.worker_manager.workers.values()) if w.pid]


#: re-entrant: core/shutdown's handler runs ``shutdown()`` on SIGTERM in the main thread, which may
#: be inside ``shared_pool()`` at that instant (a plain lock would deadlock the dying process)
_lock = threading.RLock()
_shared: ConvertPool | None = None


def shared_pool(workers: int, memory_mb: int) -> ConvertPool:
    """This process's pool, (re)built when the size or memory budget changed."""
    global _shared
    with _lock:
        if _shared is not None and (_shared.workers, _shared.memory_mb) != (workers, memory_mb):
            _shared.close()
            _shared = None
        if _shared is None:
            _shared = ConvertPool(workers, memory_mb)
        return _shared


@atexit.register
def shutdown() -> None:
    global _shared
    with _lock:
        if _shared is not None:
            _shared.close()
            _shared = None


def use_pool(workers: int, urls_in_call: int, body: bytes, pdf: bool) -> bool:
    """Whether this page goes to a worker (see the module docstring)."""
    if workers <= 1:
        return False
    return urls_in_call > 1 or pdf or len(body) > INLINE_BYTES


def peak_rss_kb() -> int:
    """This process's peak RSS in KB (run in a worker by bench/speed_pool.py): the kernel's VmHWM of
    this address space. Not ``getrusage``'s ``ru_maxrss``, which Linux carries over fork and exec —
    a process started by a larger one reports that one's peak until it outgrows it."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:  # not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
