"""The backend seam: anything that turns a URL into a ``Page`` of Markdown.

A backend is an async context manager so that one HTTP client (one connection pool) serves
every URL of a call; ``fetch`` raises a ``FetchError`` subclass for a URL that failed, and
the pipeline turns that into a per-URL error without touching the other URLs.

``fetch_many`` starts every URL of a call at once and hands back one awaitable per URL. The
default runs ``fetch`` per URL; a provider that takes many URLs in one request (Tavily, Exa,
Parallel) overrides it to send batches, and still resolves each URL on its own — a URL that
failed inside a batch raises only when its own awaitable is awaited. Awaitables (not a finished
dict) let the pipeline clean and store the first pages while later ones are still in flight.

URLs come in as ``CheckedURL`` values (core/fetch/checked.py): the pipeline validated each one
once, and a backend does not judge the string again. A plain string (a backend used directly)
is validated here, once, by ``check``. ``fresh`` is an argument of the call, not state of the
backend: a hosted provider turns it into its own "no cached copy" setting.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Coroutine, Sequence
from types import TracebackType

from webshelf.core.config import Config
from webshelf.core.fetch.checked import CheckedURL, validate
from webshelf.core.fetch.netpolicy import Policy
from webshelf.core.models import Page

URLs = Sequence[CheckedURL | str]


class Backend(ABC):
    name: str = "?"

    def __init__(self, config: Config) -> None:
        self.config = config
        # At most web.concurrency requests in flight. Held only around network I/O, so that
        # converting one page overlaps with fetching the next.
        self.gate = asyncio.Semaphore(config.web.concurrency)
        self.policy = Policy.from_config(config.web)
        self._tasks: set[asyncio.Task] = set()

    async def __aenter__(self) -> "Backend":
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        for task in list(self._tasks):  # a call that was cancelled leaves no fetch running
            task.cancel()
        await self.aclose()

    async def aclose(self) -> None:
        """Release clients; the default backend holds none."""

    def spawn(self, coro: Coroutine) -> asyncio.Task:
        """A task the backend owns: cancelled when the backend closes."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def check(self, url: CheckedURL | str) -> CheckedURL:
        """``url`` as a checked value: validated now when it is a plain string, never twice."""
        return url if isinstance(url, CheckedURL) else validate(url, self.policy)

    def fetch_many(self, urls: URLs, *, fresh: bool = False) -> dict[str, Awaitable[Page]]:
        """Start fetching every URL now, keyed by the URL string; each awaitable gives that URL's
        Page or raises its FetchError. ``fresh`` asks for a live fetch, not a provider's copy."""
        unique = {str(u): u for u in urls}
        return {key: self.spawn(self.fetch(url, fresh=fresh)) for key, url in unique.items()}

    @abstractmethod
    async def fetch(self, url: CheckedURL | str, *, fresh: bool = False) -> Page:
        """Fetch one URL and return it as Markdown, or raise a FetchError."""
