"""The one place where what must not outlive webshelf is closed: at exit, or on a signal, once.

Before this module there were three signal mechanisms in one process: the surfaces' blocks
(core/surfaces/shutdown.py: ``mcp serve``, ``runtime run``) swapped in their own SIGTERM handler,
the browser service installed another one to close Chromium, and ``webshelf sync`` a third.
Whichever was installed last won, and the others' clean-ups were skipped or ran twice. Now
there is one handler, installed here, and everybody registers with it:

* **The process registry.** ``register(callback, what)`` — a browser service, anything that
  lives as long as the process — runs ``callback`` once, newest first, when the process ends:
  at a normal exit (``atexit``), or on SIGTERM/SIGHUP, with a failing callback reported on
  stderr and the rest still run. ``Registry`` is the same list for a shorter scope (the
  surfaces use one per command block, for the sandboxes it started).
* **Reactions.** A command that wants a signal to mean something particular (raise ``Stopped``
  and exit ``128 + N``, cancel a serving task, set an event) pushes a reaction with
  ``reacting(fn)``; the one handler calls the innermost reaction. After the block the old
  dispositions are back.
* **No reaction (a library user's process):** SIGTERM and SIGHUP, whose default kills Python on
  the spot (no ``finally``, no ``atexit``), are caught where they still have that default: the
  handler runs what a normal exit runs (``atexit``: this registry, the conversion pool's shut-down),
  then restores the default and re-sends the signal, so the process still dies "killed by
  SIGTERM". A handler the application installed itself is never replaced; SIGINT keeps Python's
  ``KeyboardInterrupt``, which unwinds to ``atexit`` anyway.

Signals arriving while the clean-ups run are noted, not acted on: a second SIGTERM cannot cut
the closing of a browser short. Handlers can only be set from the main thread (Python's rule);
from another thread ``register`` only records, and the handler is installed by the next call
from the main thread (every surface block makes one).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ContextManager, TypeVar

T = TypeVar("T")
#: the signals a surface block reacts to; without a block only the first two are caught (see above)
SIGNALS = tuple(s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None), signal.SIGINT) if s is not None)
FATAL = tuple(s for s in SIGNALS if s != signal.SIGINT)


class Registry:
    """Clean-ups run once each, newest first; one that fails is reported and the rest still run."""

    def __init__(self) -> None:
        self._entries: list[tuple[Callable[[], object], str]] = []
        self._lock = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it

    def add(self, callback: Callable[[], object], what: str = "") -> Callable[[], None]:
        """Run ``callback`` at ``run()``; returns a function that takes it back (closed early by its owner)."""
        entry = (callback, what or getattr(callback, "__qualname__", repr(callback)))
        with self._lock:
            self._entries.append(entry)

        def remove() -> None:
            with self._lock:
                if entry in self._entries:
                    self._entries.remove(entry)
        return remove

    def enter(self, cm: ContextManager[T], what: str = "") -> T:
        """Enter ``cm`` now and exit it at ``run()`` (a runtime: started now, stopped then)."""
        value = cm.__enter__()
        self.add(lambda: cm.__exit__(None, None, None), what or type(cm).__name__)
        return value

    def pending(self) -> bool:
        with self._lock:
            return bool(self._entries)

    def run(self) -> None:
        """Run and forget every entry, newest first (an entry added meanwhile runs too)."""
        while True:
            with self._lock:
                if not self._entries:
                    return
                callback, what = self._entries.pop()
            try:
                callback()
            except Exception as exc:  # noqa: BLE001 — one broken clean-up must not keep the others from running
                print(f"note: clean-up of {what} failed: {exc}", file=sys.stderr)


PROCESS = Registry()
_reactions: list[Callable[[int], None]] = []
_state = {"closing": False}  # set while the process's clean-ups run: a signal then is only noted


def register(callback: Callable[[], object], what: str = "") -> Callable[[], None]:
    """Run ``callback`` once when the process ends (exit or SIGTERM/SIGHUP); returns its remover."""
    remove = PROCESS.add(callback, what)
    install()
    return remove


def closing() -> bool:
    """True while the process's clean-ups run (a reaction should then only note a signal)."""
    return _state["closing"]


@atexit.register
def run_all() -> None:
    """Run the process registry now (``atexit`` does this; so does a fatal signal)."""
    _state["closing"] = True
    try:
        PROCESS.run()
    finally:
        _state["closing"] = False


def _handler(signum: int, _frame: object) -> None:
    if _reactions:
        _reactions[-1](signum)
        return
    if _state["closing"]:
        return  # the clean-ups are running: a second signal cannot cut them short
    _state["closing"] = True
    try:
        atexit._run_exitfuncs()  # what a normal exit runs (this registry included), once: it empties the list
    finally:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # the default action now: the process still dies of the signal


def handler() -> Callable[[int, Any], None]:
    """The one handler (for tests that check which disposition is in place)."""
    return _handler


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> None:
    """Catch SIGTERM and SIGHUP where they still have Python's default (die on the spot) and
    something is registered; a no-op outside the main thread or when someone else's handler is in place."""
    if not _main_thread() or not PROCESS.pending():
        return
    for signum in FATAL:
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _handler)
        except (ValueError, OSError):  # pragma: no cover — an embedded interpreter without signals
            pass


@contextmanager
def reacting(reaction: Callable[[int], None]) -> Iterator[None]:
    """While the block runs, SIGTERM, SIGHUP and SIGINT call ``reaction(signum)`` (main thread
    only; elsewhere the block runs without it). Afterwards the previous dispositions are back
    (and the process registry's handler, if something registered needs it)."""
    if not _main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in SIGNALS}
    _reactions.append(reaction)
    try:
        yield
    finally:
        _reactions.remove(reaction)
        for s, old in previous.items():
            signal.signal(s, old)
        install()


__all__ = ["FATAL", "PROCESS", "Registry", "SIGNALS", "closing", "handler", "install", "reacting", "register", "run_all"]
