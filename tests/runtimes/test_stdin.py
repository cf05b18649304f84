"""runtimes/stdin.py: the pump that streams a command's standard input stops reading when the
command has exited — even while it is blocked on an idle pipe — and leaves the rest unread."""

from __future__ import annotations

import io
import os

from webshelf.runtimes.stdin import Pump, fileno_of, read_all


def test_stop_wakes_a_pump_blocked_on_an_idle_pipe_and_nothing_more_is_read():
    read_end, write_end = os.pipe()
    got, closed = [], []
    with os.fdopen(read_end, "rb") as stream:
        pump = Pump(stream, got.append, lambda: closed.append(True)).start()
        pump.stop()  # the command exited before any input came
        pump._thread.join(timeout=60)
        assert not pump._thread.is_alive()
        os.write(write_end, b"later\n")
        assert os.read(read_end, 100) == b"later\n"  # still there: the pump did not take it
    os.close(write_end)
    assert got == [] and closed == [True]  # nothing copied; the command's end of the input is released


def test_a_stream_is_copied_in_chunks_then_closed():
    got, closed = [], []
    pump = Pump(io.BytesIO(b"x" * 200_000), got.append, lambda: closed.append(True)).start()
    pump._thread.join(timeout=60)
    pump.stop()
    assert b"".join(got) == b"x" * 200_000 and max(map(len, got)) <= 1 << 16 and closed == [True]


def test_bytes_and_streams_for_a_runtime_that_buffers():
    assert read_all(io.BytesIO(b"abc")) == b"abc" and read_all(b"abc") == b"abc" and read_all(None) is None
    assert fileno_of(io.BytesIO(b"")) is None and fileno_of(b"x") is None


def test_a_pump_never_started_closes_what_it_holds():
    closed = []
    Pump(io.BytesIO(b"x"), lambda _: None, lambda: closed.append(True)).stop()
    assert closed == [True]
