"""SIGTERM, SIGHUP and SIGINT become a clean shutdown while a sandbox is open.

Python's default for SIGTERM and SIGHUP is to die on the spot: no ``finally``, no ``stop()``,
so a docker container or a local scratch directory stays behind for ever. Inside
``stopping_on_signals()`` each of these signals raises ``Stopped`` (a ``BaseException``, so no
``except Exception`` on the way can swallow it) in the main thread; the ``with runtime:``
blocks unwind and ``stop()`` runs. Further signals during that cleanup are noted, not raised,
so a second SIGTERM cannot cut the cleanup short. The caller exits ``128 + signal``, as a
shell reports a process killed by that signal.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = tuple(s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None), signal.SIGINT) if s is not None)


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


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Turn the shutdown signals into ``Stopped`` (once) for the duration of the block."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be installed from the main thread; the caller's own apply
        return
    raised = False

    def handler(signum, _frame) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Stopped(signum)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
