"""Polite fetching: at most ``web.per_host_concurrency`` requests to one host, ``web.per_host_delay_ms`` apart.

Twenty subagents sharing a home must not hammer one site with twenty requests at once, so the
limit holds across every call and every process of a home, not per ``web_extract`` call. The slots
are files — ``<home>/cache/hosts/<host-hash>.<i>.slot``, outside ``cache/web`` so sandboxes never
see them — each taken with a non-blocking ``flock``: the kernel hands one slot to one open file,
whichever process or event loop it belongs to, and releases it when a process dies, so a killed
fetcher never holds a host (the style of cache/lock.py). A caller that finds every slot busy
polls (a few ms, growing to 50 ms) without blocking its event loop; within one event loop the
callers for a host first queue on an ``asyncio.Semaphore`` of the same size, so at most that many
of them poll (500 queued URLs for one host polled the slot files ~11,000 times, hundreds of
microseconds of syscalls each, and the loop spent its time there). The delay is a shared
"next start" timestamp per host, read and advanced under an exclusive lock, so concurrent
callers reserve successive start times instead of all waking together.

Slots are keyed on the host name alone (lower-case, trailing dot dropped; the port is ignored:
two servers on one host are one site to be polite to). Every request takes its host's slot, hop by
hop: the URL's host before the request, held until its body is read or the redirect is answered,
and a redirect to another host then takes *that* host's slot and delay (and, with
``web.robots_txt: obey``, passes that host's robots.txt) — core/backends/local.py ``_follow``. A
hop releases its slot before the next hop waits for one, so redirects back and forth between
two hosts cannot deadlock. Waiting for a slot does not count against ``web.timeout_s`` (the
request has not been sent yet). A home where the slot files cannot be
written (read-only, full) falls back to the same limits within this process, never to a failure.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import hashlib
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

_FALLBACK: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_NEXT: dict[str, float] = {}
_FALLBACK_LOCK = threading.Lock()
# The slot indices this process holds, per slot-file prefix, and the slot behind each held fd:
# the order in which _try_take tries the files (a hint; the flock decides).
_HELD: dict[str, set[int]] = {}
_SLOT_OF: dict[int, tuple[str, int]] = {}
_HELD_LOCK = threading.Lock()
# Per event loop (asyncio semaphores belong to one loop), per (slot directory, host, size): the
# in-process queue in front of the slot files.
_QUEUES: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, int], asyncio.Semaphore]]" = (
    weakref.WeakKeyDictionary())
_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def host_key(url: str) -> str:
    """The file-name key of a URL's host (lower-case name, port ignored)."""
    return _key_of_host((urlsplit(url).hostname or "").lower().rstrip("."))


@functools.lru_cache(maxsize=1024)
def _key_of_host(host: str) -> str:
    """The hash behind ``host_key``, once per host (a call fetches many URLs of few hosts)."""
    return hashlib.sha256(host.encode()).hexdigest()[:20]


class HostSlots:
    """``async with slots.slot(url):`` — one of the host's slots, after the host's delay."""

    def __init__(self, directory: Path, concurrency: int, delay_ms: int) -> None:
        self.directory = directory
        self.concurrency = concurrency
        self.delay_s = delay_ms / 1000
        # the slot files' names as plain strings: a Path join per request cost more than the open
        self._prefix = os.path.join(directory, "")

    def _try_take(self, key: str) -> int | None:
        """A held slot: a file descriptor, or -1 for a slot of the in-process fallback.

        The slots this process already holds are tried last (their ``flock`` would fail anyway):
        with 63 of 64 slots held here, a take is one ``open`` + ``flock``, not 64 of each (a
        profile at concurrency 32 showed ~16 opens per request). Which slots are ours is only a
        hint for the order; the ``flock`` alone decides."""
        name = self._prefix + key
        with _HELD_LOCK:
            held = _HELD.setdefault(name, set())
            order = [i for i in range(self.concurrency) if i not in held] + [i for i in held if i < self.concurrency]
        try:
            for i in order:
                fd = self._open(f"{name}.{i}.slot")
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                with _HELD_LOCK:
                    held.add(i)
                    _SLOT_OF[fd] = (name, i)
                return fd
            return None
        except OSError:  # a read-only or full home must not fail fetches: limit within this process only
            with _FALLBACK_LOCK:
                semaphore = _FALLBACK.setdefault((key, self.concurrency), threading.BoundedSemaphore(self.concurrency))
            return -1 if semaphore.acquire(blocking=False) else None

    def _open(self, path: str) -> int:
        """The slot file, its directory created the first time (or again, if it was removed)."""
        try:
            return os.open(path, _OPEN, 0o644)
        except FileNotFoundError:
            self.directory.mkdir(parents=True, exist_ok=True)
            return os.open(path, _OPEN, 0o644)

    def _release(self, key: str, fd: int) -> None:
        if fd == -1:
            _FALLBACK[(key, self.concurrency)].release()
            return
        with _HELD_LOCK:
            name, i = _SLOT_OF.pop(fd)
            _HELD[name].discard(i)
        os.close(fd)  # releases the flock

    def _reserve_start(self, key: str) -> float:
        """Seconds to wait before starting, having booked the next start ``delay_s`` after this one."""
        try:
            fd = os.open(f"{self._prefix}{key}.next", _OPEN, 0o644)
        except OSError:  # the in-process fallback, as for the slots
            with _FALLBACK_LOCK:
                now = time.time()
                start = max(now, _NEXT.get(key, now))
                _NEXT[key] = start + self.delay_s
            return start - now
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, 64, 0).decode("ascii", "ignore").strip()
            now = time.time()
            try:
                start = max(now, float(raw)) if raw else now
            except ValueError:
                start = now
            if start - now > 3600:  # a clock jump or a corrupt file: never wait an hour
                start = now
            data = f"{start + self.delay_s:.6f}".encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            return start - now
        finally:
            os.close(fd)  # closing releases the lock

    def _queue(self, key: str) -> asyncio.Semaphore:
        queues = _QUEUES.setdefault(asyncio.get_running_loop(), {})
        name = (self._prefix, key, self.concurrency)
        if (queue := queues.get(name)) is None:
            queue = queues[name] = asyncio.Semaphore(self.concurrency)
        return queue

    @asynccontextmanager
    async def slot(self, url: str) -> AsyncIterator[None]:
        key = host_key(url)
        async with self._queue(key):
            async with self._file_slot(key):
                yield

    @asynccontextmanager
    async def _file_slot(self, key: str) -> AsyncIterator[None]:
        wait = 0.005
        while (fd := self._try_take(key)) is None:
            await asyncio.sleep(wait)
            wait = min(wait * 1.5, 0.05)
        try:
            if self.delay_s:
                pause = await asyncio.to_thread(self._reserve_start, key)
                if pause > 0:
                    await asyncio.sleep(pause)
            yield
        finally:
            self._release(key, fd)


def host_slots(config: object) -> HostSlots:
    """The slots of the config's home (``<home>/cache/hosts``)."""
    web = config.web  # type: ignore[attr-defined]
    return HostSlots(Path(config.home) / "cache" / "hosts", web.per_host_concurrency, web.per_host_delay_ms)  # type: ignore[attr-defined]


__all__ = ["HostSlots", "host_key", "host_slots"]
