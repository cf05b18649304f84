"""``web_extract``: URLs in, per-URL results out — fetch, clean, store, truncate.

The pipeline of DESIGN.md. URLs are fetched concurrently through one backend (one shared
HTTP client), duplicates once; results come back in input order. Every failure is contained
in its own URL's result: a bad URL, a fetch error, even a failed store (then the agent still
gets its window, with a note that the full text could not be kept and no dangling path).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from cache.shelf import Shelf
from core.backends import get_backend, select_backend
from core.clean import clean_markdown
from core.config import Config, check_char_limit, load_config
from core.errors import InputError, InvalidURLError, WebshelfError
from core.models import ErrorInfo, ExtractResult, Page
from core import untrusted
from core.truncate import headings, render
from mounts.publish import PublishTarget, publish_all

log = logging.getLogger("webshelf")

Progress = Callable[[ExtractResult], None]


def check_urls(urls: Sequence[str] | str, max_urls: int) -> list[str]:
    """The call-level checks: a non-empty list of strings within ``web.max_urls``."""
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, Sequence) or not all(isinstance(u, str) for u in urls):
        raise InputError("urls must be a list of URL strings")
    if not 1 <= len(urls) <= max_urls:
        raise InputError(f"got {len(urls)} URLs; one call takes 1 to {max_urls} (web.max_urls) — split the list")
    return [u.strip() for u in urls]


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme.lower() == "file":
        return  # the backend applies web.allow_file_urls / web.file_dirs (core/netpolicy.py)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidURLError(f"{url!r} is not an absolute http(s) URL; write it like https://example.com/page", url=url)


def _valid(url: str) -> bool:
    try:
        check_url(url)
        return True
    except InvalidURLError:
        return False


def _error_result(url: str, exc: WebshelfError, started: float, backend: str | None) -> ExtractResult:
    return ExtractResult(url=url, backend=backend, elapsed_ms=(time.perf_counter() - started) * 1000,
                         error=ErrorInfo(code=exc.code, message=exc.message))


def _finish(page: Page, shelf: Shelf | None, shelf_error: str | None, budget: int, config: Config,
            backend: str, started: float) -> ExtractResult:
    """Clean, store and window one fetched page (runs in a worker thread: CPU and fsync)."""
    text = clean_markdown(page.markdown, config.web.max_line_chars)
    title = page.title or next((h.text for h in headings(text)[:1]), None)
    notes: list[str] = []
    path: str | None = None
    store_note = shelf_error
    if shelf is not None:
        try:
            stored = shelf.put(url=page.url, final_url=page.final_url, title=title, text=text,
                               backend=backend, content_type=page.content_type)
            path = str(stored.path)
        except (OSError, sqlite3.Error) as exc:
            store_note = f"the full text could not be stored: {getattr(exc, 'strerror', None) or exc}"
    if path is None:
        notes.append(store_note or "the full text could not be stored")
    if not text.strip():
        notes.append("no readable text was found on this page")
    wrapped = config.web.wrap_untrusted
    window = render(text, budget - (untrusted.overhead() if wrapped else 0), path=path,
                    head_ratio=config.web.head_ratio, store_note=store_note)
    return ExtractResult(
        url=page.url, final_url=page.final_url, title=title,
        content=untrusted.wrap(window.content) if wrapped else window.content, truncated=window.truncated,
        path=path, total_chars=window.total_chars, total_lines=window.total_lines, backend=backend,
        elapsed_ms=(time.perf_counter() - started) * 1000, notes=notes,
    )


async def web_extract(
    urls: Sequence[str] | str,
    *,
    char_limit: int | None = None,
    fresh: bool = False,
    config: Config | None = None,
    backend: str | None = None,
    progress: Progress | None = None,
    runtimes: Sequence[PublishTarget] = (),
) -> list[ExtractResult]:
    """Extract each URL as Markdown for an agent: whole when it fits ``char_limit``
    (default ``web.extract_char_limit``), else head/tail windows and a footer naming the
    stored full text. One result per input URL, in order; failures are per-URL errors.

    ``fresh`` asks for a network fetch even when a recent stored copy exists. Each stored
    page is published to every runtime in ``runtimes`` (readable inside before this returns);
    a publish that fails or exceeds ``runtimes.publish_timeout_s`` is reported in ``notes``."""
    config = config or load_config()
    urls = check_urls(urls, config.web.max_urls)
    budget = check_char_limit(char_limit) if char_limit is not None else config.web.extract_char_limit
    unique = list(dict.fromkeys(urls))
    chosen = get_backend(select_backend(config, backend), config)  # before the shelf: a config error leaks nothing
    chosen.fresh = fresh
    shelf: Shelf | None = None
    shelf_error: str | None = None
    try:
        shelf = Shelf(config.home)
    except (OSError, sqlite3.Error) as exc:
        shelf_error = f"the cache at {config.home / 'cache'} is unusable: {getattr(exc, 'strerror', None) or exc}"
        log.warning(shelf_error)

    async def one(url: str) -> ExtractResult:
        started = time.perf_counter()
        try:
            check_url(url)
            page = await pending[url]  # the backend limits requests in flight (web.concurrency)
            result = await asyncio.to_thread(_finish, page, shelf, shelf_error, budget, config, chosen.name, started)
            if runtimes and result.path:
                problems = await asyncio.to_thread(publish_all, runtimes, [result.path], config.runtimes.publish_timeout_s)
                result.notes.extend(str(p) for p in problems)
        except WebshelfError as exc:
            result = _error_result(url, exc, started, chosen.name)
        except Exception as exc:  # noqa: BLE001 — one URL's bug must not fail the others
            log.exception("unexpected error extracting %s", url)
            result = _error_result(url, WebshelfError(f"{url}: internal error: {type(exc).__name__}: {exc}"),
                                   started, chosen.name)
            result.error.code = "internal_error"
        if progress:
            progress(result)
        return result

    try:
        async with chosen:
            # every URL starts at once; a batching backend (core/backends/hosted.py) groups them
            pending = chosen.fetch_many([u for u in unique if _valid(u)])
            done = await asyncio.gather(*(one(u) for u in unique))
    finally:
        if shelf is not None:
            shelf.close()
    by_url = dict(zip(unique, done))
    seen: set[str] = set()
    results = []
    for u in urls:  # a repeated URL gets its own copy of the one result
        results.append(by_url[u].model_copy(deep=True) if u in seen else by_url[u])
        seen.add(u)
    return results


def web_extract_sync(urls: Sequence[str] | str, **options: object) -> list[ExtractResult]:
    """``web_extract`` for code that is not async (works inside a running event loop too)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(web_extract(urls, **options))  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, web_extract(urls, **options)).result()  # type: ignore[arg-type]


__all__ = ["web_extract", "web_extract_sync"]
