"""Who wants to know when stored pages disappear: the eviction subscription API.

``cache/`` cannot import ``mounts/`` (it sits below it), so eviction announces removed paths
here and whoever mirrors ``cache/web/`` elsewhere — the mounts layer's sync engine for SSH and
Modal sandboxes — subscribes::

    from webshelf.cache.hooks import on_evict
    unsubscribe = on_evict(lambda paths: engine.retract(paths))

Callbacks run in the evicting thread, after the files are gone, with the absolute paths
removed by one pass (eviction, ``cache clear``, ``cache verify --repair``). A failing
callback is logged and never stops eviction or the other callbacks. Subscriptions are
per process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

EvictCallback = Callable[[Sequence[Path]], None]

log = logging.getLogger("webshelf.cache")
_subscribers: list[EvictCallback] = []
_lock = threading.Lock()


def on_evict(callback: EvictCallback) -> Callable[[], None]:
    """Call ``callback(paths)`` after every pass that removes pages; returns an unsubscribe function."""
    with _lock:
        _subscribers.append(callback)

    def unsubscribe() -> None:
        with _lock:
            if callback in _subscribers:
                _subscribers.remove(callback)

    return unsubscribe


def notify_evicted(paths: Sequence[Path]) -> None:
    """Tell every subscriber which page files were removed (no call when nothing was)."""
    if not paths:
        return
    with _lock:
        callbacks = list(_subscribers)
    for callback in callbacks:
        try:
            callback(list(paths))
        except Exception:  # noqa: BLE001 — a subscriber's bug must not break eviction
            log.exception("eviction subscriber %r failed", callback)
