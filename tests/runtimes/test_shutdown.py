"""core/surfaces/shutdown.py: the registry of clean-up callbacks every long-running command
shares (``runtime run``, ``mcp serve``; a browser can register its own), and signals that cancel
a coroutine instead of raising in the middle of its event loop. Real signals, sent to this
process by pid; the end-to-end tests are test_lifecycle.py and test_mcp_lifecycle.py."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from webshelf.core.surfaces import shutdown as sd


def test_clean_ups_run_newest_first_and_a_failing_one_does_not_stop_the_rest(capsys):
    ran = []
    with sd.stopping_on_signals() as shutdown:
        shutdown.add(lambda: ran.append("first"))
        shutdown.add(lambda: 1 / 0, "the broken one")
        taken_back = shutdown.add(lambda: ran.append("taken back"))
        sd.register(lambda: ran.append("registered from deep inside"))
        taken_back()
    assert ran == ["registered from deep inside", "first"]
    assert capsys.readouterr().err == "note: clean-up of the broken one failed: division by zero\n"


def test_register_outside_a_block_registers_nothing():
    ran = []
    sd.register(lambda: ran.append("x"))()  # returns a no-op remover
    with sd.stopping_on_signals():
        pass
    assert ran == []


def test_a_signal_raises_stopped_once_and_the_clean_ups_run_with_signals_held_off():
    ran = []
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or a handler an earlier test's code left (the browser service's)

    def cleanup() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal during the cleanup is only noted
        ran.append("cleaned")

    with pytest.raises(sd.Stopped) as stopped:
        with sd.stopping_on_signals() as shutdown:
            shutdown.add(cleanup)
            os.kill(os.getpid(), signal.SIGHUP)
            signal.pause()  # pragma: no cover — the handler raises before this returns
    assert (stopped.value.signum, stopped.value.exit_code, ran) == (signal.SIGHUP, 128 + signal.SIGHUP, ["cleaned"])
    assert signal.getsignal(signal.SIGTERM) is before  # the old handlers are back


def test_enter_exits_the_context_manager_when_the_block_ends():
    events = []

    class Box:
        def __enter__(self):
            events.append("start")
            return self

        def __exit__(self, *exc):
            events.append("stop")

    with sd.stopping_on_signals() as shutdown:
        box = shutdown.enter(Box())
        assert isinstance(box, Box) and events == ["start"]
    assert events == ["start", "stop"]


def test_a_signal_cancels_the_coroutine_on_its_loop_then_raises_stopped():
    """The coroutine's own ``finally`` runs (the task unwinds on its loop) before Stopped leaves."""
    unwound = []

    async def serve() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(3600)
        finally:
            unwound.append(True)

    with pytest.raises(sd.Stopped) as stopped:
        with sd.stopping_on_signals() as shutdown:
            asyncio.run(shutdown.cancelling(serve()))
    assert stopped.value.signum == signal.SIGTERM and unwound == [True]


def test_a_coroutine_that_ends_returns_its_value():
    async def answer() -> int:
        return 42

    with sd.stopping_on_signals() as shutdown:
        assert asyncio.run(shutdown.cancelling(answer())) == 42
