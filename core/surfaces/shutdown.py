"""SIGTERM, SIGHUP and SIGINT become a clean shutdown while a sandbox (or anything else that
must not outlive webshelf) is open.

Python's default for SIGTERM and SIGHUP is to die on the spot: no ``finally``, no ``stop()``,
so a docker container or a local scratch directory stays behind for ever. Inside
``stopping_on_signals()`` each of these signals raises ``Stopped`` (a ``BaseException``, so no
``except Exception`` on the way can swallow it) in the main thread; the ``with runtime:``
blocks unwind and ``stop()`` runs. Further signals during that cleanup are noted, not raised,
so a second SIGTERM cannot cut the cleanup short. The caller exits ``128 + signal``, as a
shell reports a process killed by that signal; that exit runs the process's own clean-ups
(core/shutdown.py: the browsers, the conversion pool), so every command closes them once.

The signal handler itself is core/shutdown.py's, the only one in the process: a block pushes
its reaction there (``reacting``) instead of installing a handler of its own, so nothing that
registered below (a browser service) is displaced by a surface, or the other way round.

Two more pieces make this fit every surface, not only ``runtime run``:

* **A registry of clean-up callbacks for the block.** ``stopping_on_signals()`` yields a
  ``Shutdown``; what must go when the command ends — a runtime (``shutdown.enter(cm)``), any
  ``callback`` (``shutdown.add`` or, from code that has no handle on it, the module-level
  ``register``) — is run newest first when the block ends, however it ends: normally, by an
  error, or by a signal. One failing callback never keeps the others from running. What lives
  as long as the process (a browser) registers with core/shutdown.py instead.
* **Coroutines.** A signal raised as an exception in the middle of an event loop leaves the
  loop's tasks half run and its threads (a stdin reader) blocked. ``shutdown.cancelling(coro)``
  runs ``coro`` so that a signal cancels its task instead, on the loop; once the task has
  unwound, ``Stopped`` is raised from it as above (``mcp serve`` serves this way).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, ContextManager, TypeVar

from webshelf.core import shutdown as process
from webshelf.core.shutdown import SIGNALS, Registry

T = TypeVar("T")


class Stopped(BaseException):
    """A shutdown signal arrived; ``signum`` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class Shutdown:
    """The clean-ups of one ``stopping_on_signals()`` block, and the signal that ended it (if any)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._registry = Registry()
        self._divert: Callable[[], None] | None = None
        self._closing = False  # set while the clean-ups run: a signal then is only noted

    # the registry --------------------------------------------------------------------------
    def add(self, callback: Callable[[], object], what: str = "") -> Callable[[], None]:
        """Run ``callback`` when the block ends (newest first); returns a function that takes it
        back (for something closed early by its owner)."""
        return self._registry.add(callback, what)

    def enter(self, cm: ContextManager[T], what: str = "") -> T:
        """Enter ``cm`` now and exit it when the block ends (a runtime: started now, stopped then)."""
        return self._registry.enter(cm, what)

    def run_callbacks(self) -> None:
        """Run every registered clean-up once, newest first; a failing one is reported on stderr
        and the rest still run."""
        self._registry.run()

    # signals ---------------------------------------------------------------------------------
    def _signalled(self, signum: int) -> None:
        if self.signum is not None or self._closing or process.closing():
            return  # a signal is being handled or the clean-ups run: a second cannot cut them short
        self.signum = signum
        divert = self._divert
        if divert is None:
            raise Stopped(signum)
        divert()

    async def cancelling(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` as a task that a shutdown signal cancels (on its loop); then raise
        ``Stopped``. A signal that came before the task started raises at once."""
        import asyncio  # here, not at the top: the CLI imports this module and must start fast (issue 15)

        loop = asyncio.get_running_loop()
        task = loop.create_task(coro)
        self._divert = lambda: loop.call_soon_threadsafe(task.cancel)
        try:
            if self.signum is not None:
                task.cancel()
            try:
                return await task
            except asyncio.CancelledError:
                if self.signum is None:
                    raise
                raise Stopped(self.signum) from None
        finally:
            self._divert = None


_active: list[Shutdown] = []


def register(callback: Callable[[], object], what: str = "") -> Callable[[], None]:
    """Run ``callback`` when the innermost running ``stopping_on_signals()`` block ends (a signal
    included) — for code deep inside a command that has no handle on the block. Outside any
    block nothing is registered (the caller's own ``finally`` must do; what lives as long as the
    process registers with core/shutdown.py); the function returned takes the callback back."""
    if not _active:
        return lambda: None
    return _active[-1].add(callback, what)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[Shutdown]:
    """Turn the shutdown signals into ``Stopped`` (once) for the duration of the block; run the
    registered clean-ups when it ends, with the signals still held off."""
    shutdown = Shutdown()
    _active.append(shutdown)
    try:
        with process.reacting(shutdown._signalled):  # outside the main thread: no signals, the caller's own
            try:
                yield shutdown
            finally:
                shutdown._closing = True
                shutdown.run_callbacks()
    finally:
        _active.remove(shutdown)


__all__ = ["SIGNALS", "Shutdown", "Stopped", "register", "stopping_on_signals"]
