"""One browser per process, shared by every call: launched on first need, closed when idle or at exit.

Launching Chromium costs about 1.5 s; a call that renders one page should not pay it each time.
Each sync call (``web_extract_sync``) runs its own asyncio loop, and Playwright objects belong to
the loop that made them, so the browser cannot live on any caller's loop. It lives here instead:
a ``BrowserService`` is a daemon thread with its own event loop hosting Playwright, the
browser (lifecycle.py ``SharedBrowser``), the browser-wide policy proxy, and the page budget.
A backend hands it a render coroutine (``run``: ``run_coroutine_threadsafe`` + ``wrap_future``),
so every Playwright call happens on the service's loop, and a caller that is cancelled cancels
its render there too. The per-page policy proxy stays on the caller's loop (it is a plain TCP
server; the caller's resolver seam and byte counts stay with the call).

- **Budget across all calls:** ``web.browser.max_pages`` contexts at once, whichever calls they
  belong to (one semaphore on the service's loop); each context is still fresh per URL.
- **Settings that matter pick the browser:** the executable, its launch flags (the CA SPKI list
  of ``web.ca_bundle``), the address policy of the browser-wide proxy, the page budget and what
  pages are given (User-Agent, headers, languages, the upstream proxy) form the ``LaunchKey``; a
  call with other settings gets another service, never a browser launched for someone else.
- **A crash** fails the pages in flight (backend.py watches the disconnect) and the next page
  relaunches (``SharedBrowser.get``).
- **Idle:** when the last backend using a service closes, a timer of ``web.browser.idle_s``
  starts; a new user cancels it; when it fires, the browser, Playwright and the thread end.
- **Exit:** each service registers its ``shutdown`` with core/shutdown.py, the process's one
  clean-up registry and signal handler (and takes it back when it closes earlier): a normal
  exit closes every service, and so does SIGTERM or SIGHUP — in a library user's process (the
  exit status is still "killed by SIGTERM") and in every command (``mcp serve``, ``extract``:
  they exit ``128 + N``) alike. No handler of its own: two handlers fought over SIGTERM
  (whichever was installed last won).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from webshelf.core import shutdown as process
from webshelf.core.backends.browser.lifecycle import FLAGS, SharedBrowser
from webshelf.core.fetch.netpolicy import Policy

T = TypeVar("T")
CLOSE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class LaunchKey:
    """What a browser was launched for; another key, another browser."""

    executable: str
    args: tuple[str, ...]
    policy: Policy
    max_pages: int
    pages_get: tuple[Any, ...]  # User-Agent, headers, languages, upstream proxy: what contexts are given


async def _no_lookup(host: str, port: int) -> list[str]:
    """The browser-wide proxy's resolver: refuse without asking DNS. Pages go through their own
    per-context proxies, so what reaches this one is Chromium's own traffic (component updates,
    account checks, network-time queries to Google hosts), never a page's — it must not leave the
    machine, not even as a DNS question."""
    raise OSError(f"Chromium's own request for {host}, not a page's: refused without a lookup")


def launch_key(config: Any, executable: str, policy: Policy) -> LaunchKey:
    from webshelf.core.backends.browser.lifecycle import ca_flags
    from webshelf.core.fetch.proxy import proxy_for

    web = config.web
    upstream = proxy_for(config, "browser")
    return LaunchKey(executable=executable, args=(*FLAGS, *ca_flags(config)), policy=policy,
                     max_pages=web.browser.max_pages,
                     pages_get=(web.browser.user_agent, web.user_agent, tuple(sorted(web.headers.items())),
                                tuple(web.languages), upstream.url if upstream else None))


class BrowserService:
    """A thread with an event loop that owns one ``SharedBrowser``; see the module docstring."""

    def __init__(self, key: LaunchKey, idle_s: float) -> None:
        self.key = key
        self.idle_s = idle_s
        self.users = 0  # backends holding this service (under _LOCK)
        self.closed = False
        self._generation = 0  # bumped by every acquire: an idle timer armed before it is stale
        self.loop = asyncio.new_event_loop()
        self.pages = asyncio.Semaphore(key.max_pages)  # bound to self.loop on first use
        self._guard: Any = None
        self.shared: SharedBrowser | None = None
        self._start_lock = asyncio.Lock()
        self._unregister = process.register(self.shutdown, "a browser service (Chromium)")
        self._thread = threading.Thread(target=self._run, name="webshelf-browser", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    # -- used from the caller's loop ------------------------------------------------------------
    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the service's loop and await it from the caller's (cancellation crosses over)."""
        return await asyncio.wrap_future(self.submit(coro))

    # -- on the service's loop ------------------------------------------------------------------
    async def browser(self) -> Any:
        """The running browser, launched (with its browser-wide policy proxy) on first need."""
        from webshelf.core.backends.browser.proxy import PolicyProxy

        async with self._start_lock:
            if self.shared is None:
                self._guard = await PolicyProxy(self.key.policy, resolver=_no_lookup).start()
                self.shared = SharedBrowser(self.key.executable, self._guard.url, args=self.key.args)
        return await self.shared.get()

    async def pids(self) -> dict[str, list[int]]:
        await self.browser()
        assert self.shared is not None
        return await self.shared.pids()

    async def _close(self) -> None:
        try:
            if self.shared is not None:
                await self.shared.close()
            if self._guard is not None:
                await self._guard.close()
        finally:
            self.loop.call_soon(self.loop.stop)

    def _arm_idle(self, generation: int) -> None:
        self.loop.call_later(self.idle_s, self._idle_check, generation)

    def _idle_check(self, generation: int) -> None:
        with _LOCK:
            if self.closed or self.users or generation != self._generation:
                return
            self._forget()
        self.loop.create_task(self._close())

    def _forget(self) -> None:
        """Under _LOCK: this service takes no new users; the next call starts another."""
        self.closed = True
        self._unregister()
        if _SERVICES.get(self.key) is self:
            del _SERVICES[self.key]

    def shutdown(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Close now, from any thread but the service's own (exit, SIGTERM, tests)."""
        with _LOCK:
            already = self.closed and not self._thread.is_alive()
            self._forget()
        if already or not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            self.submit(self._close()).result(timeout)
        self._thread.join(timeout)


_SERVICES: dict[LaunchKey, BrowserService] = {}
_LOCK = threading.RLock()  # re-entrant: a signal's clean-up may run while the main thread holds it


def acquire(key: LaunchKey, idle_s: float) -> BrowserService:
    """The service for ``key`` (started now if there is none), counted as used until ``release``."""
    with _LOCK:
        service = _SERVICES.get(key)
        if service is None or service.closed:
            service = _SERVICES[key] = BrowserService(key, idle_s)
        service.users += 1
        service._generation += 1
        return service


def release(service: BrowserService) -> None:
    """One user fewer; the last one starts the idle timer (``web.browser.idle_s``)."""
    with _LOCK:
        service.users -= 1
        if service.users or service.closed:
            return
        generation = service._generation
    with contextlib.suppress(RuntimeError):  # the loop is already closed (exit)
        service.loop.call_soon_threadsafe(service._arm_idle, generation)


def running_services() -> list[BrowserService]:
    with _LOCK:
        return list(_SERVICES.values())


def shutdown_all(timeout: float = CLOSE_TIMEOUT_S) -> None:
    """Close every browser of this process (tests; at exit each service closes itself)."""
    for service in running_services():
        service.shutdown(timeout)


__all__ = ["BrowserService", "LaunchKey", "acquire", "launch_key", "release", "running_services", "shutdown_all"]
