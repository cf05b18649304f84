"""Cyclic garbage collection paused while a page converts, and its young generations collected
right after.

Why: a conversion allocates tens of thousands of short-lived container objects (node lists,
feature vectors, tokens), none of them in a reference cycle — on all 1,488 WCXB dev and
readability pages the collector found nothing to collect. Yet their allocation triggered ~1.7
young collections a page, each scanning the page's live temporaries and promoting the ones alive
at that moment; the promotions then triggered a full collection every ~70 pages, which walks
every long-lived object of the process (the converters' memos included: 30-75 ms each). Paused,
the temporaries die by reference counting before any collection sees them (docs/benchmarks.md
"Session 14" has the A/B).

What still runs: when the conversion leaves more new container objects alive than the
generation-0 threshold, the young generations (0, and 1 when its count is due) are collected on
the way out, so cycles made during a conversion are still freed even by a loop that converts
page after page. Serving the corpora once, that was 111 collections of generation 0 (median
0.5 ms) and 10 of generation 1 (~4 ms) in 1,488 pages: ~0.08 ms a page. Full collections are
left to the interpreter's own schedule outside conversions.

Threads: the pause is counted — the collector is re-enabled when the last conversion running
in the process leaves, and only if it was enabled when the first came in (a program that
disabled the collector keeps it disabled, and nothing is collected for it). Each conversion
still collects the young generations on its way out, and one that leaves while others still
run also the old generation when its count is due, so conversions overlapping on several
threads never keep cycles uncollected for long.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

_lock = threading.Lock()
_inside = 0  # conversions running now, all threads
_restore = False  # the collector was enabled when the first of them came in


def _collect_due(overlapping: bool) -> None:
    """Collect what the interpreter would at its next allocation: generation 0, and 1 when its
    count is due. While other conversions still run (``overlapping``: the collector stays
    paused, so the interpreter cannot run a full collection of its own) generation 2 too when its
    count is due — about once in 1,500 pages — so conversions that overlap without a gap never
    leave old cycles uncollected. Otherwise full collections are the interpreter's, on its own
    schedule (its rule skips them while few objects have reached the old generation)."""
    (count0, count1, count2), (threshold0, threshold1, threshold2) = gc.get_count(), gc.get_threshold()
    if threshold0 and count0 > threshold0:
        gc.collect(2 if overlapping and count2 > threshold2 else 1 if count1 > threshold1 else 0)


def gc_paused(fn: F) -> F:
    """``fn`` with the cyclic collector paused while it runs (see the module doc)."""

    @functools.wraps(fn)
    def paused(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        global _inside, _restore
        with _lock:
            if _inside == 0:
                _restore = gc.isenabled()
                gc.disable()
            _inside += 1
        try:
            return fn(*args, **kwargs)
        finally:
            with _lock:
                _inside -= 1
                restore, overlapping = _restore, _inside > 0
                if not overlapping and restore:
                    gc.enable()
            if restore:
                _collect_due(overlapping)

    return paused  # type: ignore[return-value]
