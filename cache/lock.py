"""One advisory lock per cache, shared by writers and taken exclusively by eviction.

Writers (store + index) and cache hits (check + read + touch) hold it shared, so any number
of them run at once across processes; an eviction pass holds it exclusively, so it can never
delete a file between the moment a writer or a hit decided to hand out its path and the moment
the index says it was used. ``flock`` is released by the kernel when a process dies, so a
killed writer never wedges the cache. Threads of one process share one shared hold (flock
belongs to the open file, so the first thread takes it and the last releases it).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class CacheLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, _OPEN, 0o644)
        self._mutex = threading.Lock()
        self._readers = 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # a dropped shared shelf releases its descriptor
        self.close()

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._mutex:
            if self._readers == 0:
                fcntl.flock(self._fd, fcntl.LOCK_SH)
            self._readers += 1
        try:
            yield
        finally:
            with self._mutex:
                self._readers -= 1
                if self._readers == 0:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    @contextmanager
    def exclusive(self, *, block: bool = True) -> Iterator[bool]:
        """Yield True once held exclusively, or False at once when ``block`` is off and it is busy.

        Uses its own open file, so it waits for this process's shared holders like anyone
        else's: never call it while the same thread holds ``shared``."""
        fd = os.open(self.path, _OPEN, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
