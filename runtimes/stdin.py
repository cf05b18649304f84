"""Standard input for a command in a sandbox: bytes given up front, or a stream copied while the
command runs.

``webshelf runtime run`` used to read all of its standard input before the command started, so
``yes | webshelf runtime run local -- head -1`` never ended and a large input sat whole in
memory. ``exec(..., stdin=stream)`` takes a binary file instead, and each runtime streams it:

* ``local`` hands the stream's file descriptor to bwrap as the command's stdin (no copy at all);
  a stream without one (a test's ``BytesIO``) is pumped into a pipe;
* ``docker`` and ``ssh`` pump it into the exec's socket or channel in a thread (``Pump``);
* ``modal``'s SDK gets the input before the command runs, so it is read to the end first
  (``read_all``) — the one runtime that still buffers.

A ``Pump`` copies in chunks (``CHUNK`` bytes), so memory stays flat whatever the input's size,
and stops reading when the command has exited (``stop()``): a reader blocked on an idle pipe is
woken through a pipe of its own, so nothing keeps reading input nobody will consume.
"""

from __future__ import annotations

import io
import os
import select
import threading
from collections.abc import Callable
from typing import BinaryIO, Union

#: what ``Runtime.exec`` takes as stdin: nothing, all of it, or a binary stream to copy from
Stdin = Union[bytes, BinaryIO, None]
CHUNK = 1 << 16


def is_stream(stdin: Stdin) -> bool:
    return stdin is not None and not isinstance(stdin, (bytes, bytearray, memoryview))


def fileno_of(stdin: Stdin) -> int | None:
    """The stream's file descriptor, or None (bytes, or a stream that has none)."""
    if not is_stream(stdin):
        return None
    try:
        return stdin.fileno()  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def read_all(stdin: Stdin) -> bytes | None:
    """All of ``stdin`` as bytes, for a runtime that cannot stream (read to the end first)."""
    if is_stream(stdin):
        return stdin.read()  # type: ignore[union-attr]
    return None if stdin is None else bytes(stdin)


class Pump:
    """Copy ``source`` into ``write`` in a daemon thread, then call ``close`` (end of input; also
    after ``stop()``, which releases the command's end of a pipe).

    ``source`` is bytes or a binary stream. Errors on the way out (the command closed its
    input, the sandbox went away) end the copy quietly: the command's exit code tells what
    happened. ``stop()`` — call it once the command has exited, always (it also closes the
    wake pipe) — makes the copy stop reading.
    """

    def __init__(self, source: Stdin, write: Callable[[bytes], object], close: Callable[[], object], *,
                 name: str = "webshelf-stdin") -> None:
        self._source, self._write, self._close = source, write, close
        self._stopping = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Pump":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop reading (the command exited); a read blocked on an idle pipe returns now."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if not self._thread.is_alive() and self._thread.ident is None:  # never started: close it all here
            os.close(self._wake_r)
            os.close(self._wake_w)
            try:
                self._close()
            except Exception:  # noqa: BLE001 — nothing was sent; closing is best effort
                pass
            return
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass  # the copy has finished already (its end of the wake pipe is closed)
        os.close(self._wake_w)  # the write end is stop()'s; the thread closes the read end

    def _chunks(self):
        source = self._source
        if not is_stream(source):
            if source:
                yield bytes(source)
            return
        fd = fileno_of(source)
        while not self._stopping.is_set():
            if fd is not None:
                ready, _, _ = select.select([fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                chunk = os.read(fd, CHUNK)
            else:
                read = getattr(source, "read1", None) or source.read  # type: ignore[union-attr]
                chunk = read(CHUNK)
            if not chunk:
                return
            yield chunk

    def _run(self) -> None:
        try:
            for chunk in self._chunks():
                if self._stopping.is_set():
                    return
                self._write(chunk)
            self._close()
        except Exception:  # noqa: BLE001 — OSError, or ValueError once teardown closed the socket/pipe
            pass  # the command stopped reading (exited, timed out, or the sandbox is going)
        finally:
            os.close(self._wake_r)
