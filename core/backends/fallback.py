"""The fallback chain: when one backend cannot read a page, the next of ``web.fallback`` tries.

``web.fallback: [local, browser, <hosted>…]`` (default ``[local, browser]`` where Chromium and
Playwright are installed, else ``[local]``; core/backends/selection.py ``fallback_chain``). A page
goes on to the next backend when the previous one

- returned a near-empty page: fewer than ``web.fallback_min_chars`` letters and digits, and a
  ``<script>`` — an app shell whose text only JavaScript writes (a page that is short and has no
  script is simply short, and is kept);
- got a 403 or 429, the answers bot blocking gives a non-browser client; or
- timed out.

Any other error (a blocked address, an unsupported type, a 404) is final: another backend would
get the same answer, or must not be asked. The result names the backend that produced it, and
its notes say why each earlier one was skipped. A hosted backend in the chain is never sent a
URL that only this machine should fetch (core/backends/routing.py), nor used without its key:
it is skipped with a note. Later backends are opened only when a page needs them, once per
call, and shared by every URL of the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field

from webshelf.core.backends.base import Backend
from webshelf.core.config import Config
from webshelf.core.fetch.checked import CheckedURL
from webshelf.core.models import Page
from webshelf.errors import FetchTimeoutError, HTTPStatusError, WebshelfError

BOT_BLOCK_STATUSES = {403, 429}
HTML_TYPES = {"text/html", "application/xhtml+xml"}
SHORT_PAGE = 5_000  # characters of Markdown below which <script> elements are counted
_SCRIPT = re.compile(rb"<script\b", re.IGNORECASE)
_WORD_CHAR = re.compile(r"\w")


def count_scripts(body: bytes, converted: object) -> int:
    """``<script>`` elements of an HTML page that converted to little text, else 0 (cheap: the
    count is taken only for short pages). Set on ``Page.scripts`` by the local backend."""
    markdown = getattr(converted, "markdown", "")
    if getattr(converted, "content_type", None) not in HTML_TYPES or len(markdown) >= SHORT_PAGE:
        return 0
    return len(_SCRIPT.findall(body))


def text_chars(markdown: str) -> int:
    """Letters and digits in the page: Markdown syntax, spaces and punctuation do not count."""
    return len(_WORD_CHAR.findall(markdown))


def page_reason(page: Page, config: Config) -> str | None:
    """Why a page someone returned should go on to the next backend (None: keep it)."""
    if not page.scripts:
        return None
    chars = text_chars(page.markdown)
    if chars >= config.web.fallback_min_chars:
        return None
    return (f"near-empty page ({chars} letters and digits, {page.scripts} <script> element"
            f"{'s' if page.scripts != 1 else ''}: an app shell whose text needs JavaScript; web.fallback_min_chars "
            f"{config.web.fallback_min_chars})")


def error_reason(exc: WebshelfError) -> str | None:
    """Why an error should go on to the next backend (None: it is final)."""
    if isinstance(exc, FetchTimeoutError):
        return f"timed out ({exc.message})"
    if isinstance(exc, HTTPStatusError) and exc.context.get("status") in BOT_BLOCK_STATUSES:
        return f"HTTP {exc.context['status']}, which looks like bot blocking"
    return None


@dataclass
class Outcome:
    """What the chain produced for one URL: a page or the error, which backend, and the notes."""

    backend: str
    page: Page | None = None
    error: WebshelfError | None = None
    notes: list[str] = field(default_factory=list)


class Chain:
    """The later backends of ``web.fallback`` for one call, opened on first need and shared."""

    def __init__(self, names: Sequence[str], config: Config, stack: contextlib.AsyncExitStack, *,
                 fresh: bool = False) -> None:
        self.names = list(names)
        self.config = config
        self.stack = stack
        self.fresh = fresh
        self._opened: dict[str, Backend] = {}
        self._lock = asyncio.Lock()

    async def _backend(self, name: str) -> Backend:
        from webshelf.core.backends import get_backend

        async with self._lock:
            if name not in self._opened:
                self._opened[name] = await self.stack.enter_async_context(get_backend(name, self.config))
            return self._opened[name]

    async def _unusable(self, name: str, url: CheckedURL) -> str | None:
        """Why backend ``name`` must not be asked for ``url`` (a hosted one: no key, or a private URL)."""
        from webshelf.core.backends.routing import keep_local
        from webshelf.core.backends.selection import HOSTED_KEYS, key_problem

        if name not in HOSTED_KEYS:
            return None
        if problem := key_problem(name, self.config):
            return problem
        reasons = await keep_local([url], self.config)
        if url.url in reasons:
            return f"not sent to {name}: {reasons[url.url]} (hosted backends never receive such URLs)"
        return None

    async def run(self, url: CheckedURL, first: str, pending: Awaitable[Page]) -> Outcome:
        """The page from ``first`` (``pending``), or from the next backend that reads it."""
        best = Outcome(first)
        try:
            best.page = await pending
            reason = page_reason(best.page, self.config)
        except WebshelfError as exc:
            best.error, reason = exc, error_reason(exc)
        if reason is None or not self.names:
            return best
        notes: list[str] = []
        previous = first
        for name in self.names:
            notes.append(f"{previous} backend skipped: {reason}; trying {name} (web.fallback)")
            if problem := await self._unusable(name, url):
                reason, previous = problem, name
                continue
            try:
                page = await (await self._backend(name)).fetch(url, fresh=self.fresh)
            except WebshelfError as exc:
                reason, previous = error_reason(exc) or f"failed too: {exc.code}: {exc.message}", name
                continue
            reason, previous = page_reason(page, self.config), name
            if reason is None:
                return Outcome(name, page=page, notes=[*notes, f"produced by the {name} backend"])
            if best.page is None or text_chars(page.markdown) > text_chars(best.page.markdown):
                best = Outcome(name, page=page)
        kept = f"this is the {best.backend} backend's page" if best.page else f"the {first} backend's error is reported"
        notes.append(f"{previous} backend: {reason}; no backend of web.fallback read more, so {kept}")
        return Outcome(best.backend, page=best.page, error=None if best.page else best.error, notes=notes)


__all__ = ["Chain", "Outcome", "count_scripts", "error_reason", "page_reason", "text_chars"]
