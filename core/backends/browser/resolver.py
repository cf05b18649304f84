"""Name lookups for the browser's policy proxies, on threads of their own, with a deadline.

The proxies used the system resolver seam of the local backend (``loop.getaddrinfo``), which
runs ``getaddrinfo`` on the calling loop's *default* executor — the thread pool that the same
call's other work (``asyncio.to_thread`` conversion, other URLs' lookups) also waits on. A page
pulls dozens of sub-resources from hosts webshelf has never seen; a slow DNS server (a dropped
UDP packet costs glibc 5 s per try) then holds those threads, and URLs that have nothing to do
with that page stall behind it.

``ResolverPool`` keeps browser lookups apart: a fixed number of daemon threads (so a lookup
the C library never returns from cannot hold up the interpreter's exit either, as pool threads
of ``concurrent.futures`` would: they are joined at exit), a queue in front of them, and a
deadline per lookup that counts the wait in the queue too. A lookup past its deadline fails
with a ``TimeoutError`` naming the host (the proxy refuses that request with 403 and records
why); its thread is freed when ``getaddrinfo`` returns, and the bound on threads means a flood
of slow names costs ``THREADS`` threads, not one per name.

The answers are checked by the proxy as before (core/fetch/netpolicy.py ``check_addresses``);
this module only decides *where* and *how long* the lookup runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import socket
import threading
from collections.abc import Callable

THREADS = 4  # lookups at once for every browser of the process; more queue (and share the deadline)
TIMEOUT_S = 10.0  # glibc's default: 5 s per try, 2 tries

Lookup = Callable[[str, int], list[str]]


def getaddrinfo_addresses(host: str, port: int) -> list[str]:
    """All addresses the system resolver gives for ``host`` (IPv4 and IPv6), in its order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def lookup_timeout(host: str, timeout_s: float, busy: int, threads: int) -> TimeoutError:
    """The error for a lookup past its deadline: a plain ``TimeoutError`` (so an ``OSError``, which
    the proxy turns into a refusal it records), never seen outside the proxy — hence not a class
    of webshelf's error tree — whose message names the host."""
    return TimeoutError(f"no DNS answer for {host!r} within {timeout_s:g} s "
                        f"({busy} of the browser's {threads} lookup threads were busy); "
                        "check the resolver in /etc/resolv.conf, or retry")


class ResolverPool:
    """``await pool.resolve(host, port)`` → addresses, run on this pool's threads (see the module docstring)."""

    def __init__(self, threads: int = THREADS, timeout_s: float = TIMEOUT_S, lookup: Lookup | None = None) -> None:
        if threads < 1:
            raise ValueError("a resolver pool needs at least one thread")
        self.threads = threads
        self.timeout_s = timeout_s
        self._lookup = lookup or getaddrinfo_addresses
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = False
        self.busy = 0  # lookups running now (for the error message and tests)

    def _start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        for i in range(self.threads):
            threading.Thread(target=self._work, name=f"webshelf-browser-dns-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            future, host, port = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up while it waited in the queue
            with self._lock:
                self.busy += 1
            try:
                future.set_result(self._lookup(host, port))
            except BaseException as exc:  # noqa: BLE001 — handed to the caller, who decides
                future.set_exception(exc)
            finally:
                with self._lock:
                    self.busy -= 1

    async def resolve(self, host: str, port: int) -> list[str]:
        """The addresses of ``host``; a ``TimeoutError`` naming it past the deadline, the resolver's ``OSError`` as it is."""
        self._start()
        future: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        self._jobs.put((future, host, port))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout_s)
        except asyncio.TimeoutError:
            future.cancel()  # still queued: it never runs; running: its thread is free when getaddrinfo returns
            raise lookup_timeout(host, self.timeout_s, self.busy, self.threads) from None


_shared: ResolverPool | None = None
_shared_lock = threading.Lock()


def shared() -> ResolverPool:
    """The process's pool for every browser proxy (started with its first lookup)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ResolverPool()
        return _shared


async def browser_resolver(host: str, port: int) -> list[str]:
    """The proxies' default resolver: ``shared().resolve`` (same signature as core/fetch's seam)."""
    return await shared().resolve(host, port)


__all__ = ["ResolverPool", "THREADS", "TIMEOUT_S", "browser_resolver", "getaddrinfo_addresses", "lookup_timeout", "shared"]
