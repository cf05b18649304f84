"""The backend seam: anything that turns a URL into a ``Page`` of Markdown.

A backend is an async context manager so that one HTTP client (one connection pool) serves
every URL of a call; ``fetch`` raises a ``FetchError`` subclass for a URL that failed, and
the pipeline turns that into a per-URL error without touching the other URLs.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from types import TracebackType

from core.config import Config
from core.models import Page


class Backend(ABC):
    name: str = "?"

    def __init__(self, config: Config) -> None:
        self.config = config
        # At most web.concurrency requests in flight. Held only around network I/O, so that
        # converting one page overlaps with fetching the next.
        self.gate = asyncio.Semaphore(config.web.concurrency)

    async def __aenter__(self) -> "Backend":
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release clients; the default backend holds none."""

    @abstractmethod
    async def fetch(self, url: str) -> Page:
        """Fetch one URL and return it as Markdown, or raise a FetchError."""
