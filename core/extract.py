"""``web_extract``: URLs in, per-URL results out — the pipeline of DESIGN.md as named stages.

1. ``check_urls``       the call: a list of 1..``web.max_urls`` strings (an ``InputError`` fails the call)
2. ``_validate``        each unique URL once → a ``CheckedURL`` (core/fetch/checked.py) or its error
3. ``_serve_hits``      a young stored copy (cache/shelf.py ``reuse``) → its result, no network
4. ``_fetch_misses``    route (core/backends/routing.py), ``fetch_many(checked, fresh=…)``, the next
                        backend of ``web.fallback`` for a near-empty page, a 403/429 or a timeout
                        (core/backends/fallback.py), then per
                        URL ``_finish``: clean (core/clean.py), store (cache/shelf.py ``put``), truncate
                        (core/truncate.py) — each page as soon as it arrives
5. ``_publish``         every handed-out path to every attached runtime (mounts/publish.py)
6. ``_evict_after``     one bounded eviction pass (cache/evict.py) and retraction of exactly the
                        paths it removed, ``PruneReport.paths``, from the same runtimes

URLs are fetched concurrently through one backend (one shared HTTP client), duplicates once;
results come back in input order. Every failure is contained in its own URL's result: a bad
URL, a fetch error, even a failed store (then the agent still gets its window, with a note that
the full text could not be kept and no dangling path). A URL string is validated exactly once,
in stage 2; later stages and the backend receive the checked value.

A URL with a stored copy younger than ``cache.max_age`` is served from the shelf without any
network request (``cached=True``; ``fresh=True`` bypasses this), and the backend is not even
opened when every URL is a hit. After a call that wrote pages, one bounded eviction pass runs
(skipped at once if another process is pruning), protecting every page this call hands out.

The backend is ``local`` unless the call or the config names another (core/backends/selection.py:
a provider key alone never switches it), and a hosted backend is never sent a URL only this
machine should fetch — those go to the local backend with a note (core/backends/routing.py).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from webshelf.cache.evict import EvictionPolicy
from webshelf.cache.shelf import CachedPage, Shelf, StoredPage
from webshelf.cache.utf8 import Utf8Text
from webshelf.core.bridge import run_sync
from webshelf.core.backends import HOSTED_KEYS, check_backend, get_backend, require_key, select_backend
from webshelf.core.backends.routing import keep_local, local_note, not_sent_error
from webshelf.core.backends.selection import fallback_chain
from webshelf.core.clean import clean_markdown, clean_title
from webshelf.core.clean_utf8 import clean_utf8_for_store
from webshelf.core.config import Config, check_char_limit, load_config
from webshelf.errors import CacheError, InputError, WebshelfError
from webshelf.core import served
from webshelf.core.fetch.checked import CheckedURL, validate
from webshelf.core.fetch.netpolicy import Policy
from webshelf.core.models import ErrorInfo, ExtractResult, Page
from webshelf.core.truncate import Window, headings
from webshelf.mounts.publish import PublishTarget, publish_all, retract_all

log = logging.getLogger("webshelf")

Progress = Callable[[ExtractResult], None]
# Pages one extract call may evict on its way out. A call writes at most web.max_urls pages
# (default 20), so 64 keeps up with writes, while bounding what a call waits for: an unlink of
# a flushed file costs 2–3 ms on a slow disk (docs/benchmarks.md, Cache), so ≤ ~200 ms.
OPPORTUNISTIC_REMOVALS = 64
# An empty page (an SPA shell, a script-only page) is stored but never reused: the next call
# fetches it again, so the agent always gets this note rather than a silent empty copy.
EMPTY_NOTE = "no readable text was found on this page"


def check_urls(urls: Sequence[str] | str, max_urls: int) -> list[str]:
    """The call-level checks: a non-empty list of strings within ``web.max_urls``."""
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, Sequence) or not all(isinstance(u, str) for u in urls):
        raise InputError("urls must be a list of URL strings")
    if not 1 <= len(urls) <= max_urls:
        raise InputError(f"got {len(urls)} URLs; one call takes 1 to {max_urls} (web.max_urls) — split the list")
    return [u.strip() for u in urls]


def _validate(urls: Sequence[str], config: Config, backend: str, by_url: dict[str, ExtractResult],
              progress: Progress | None) -> list[CheckedURL]:
    """Stage 2: each URL checked once (syntax, then the DNS-free address policy); a URL that
    fails gets its error result now and goes no further — no cache lookup, no backend."""
    policy = Policy.from_config(config.web)
    checked: list[CheckedURL] = []
    for url in urls:
        started = time.perf_counter()
        try:
            checked.append(validate(url, policy))
        except WebshelfError as exc:
            by_url[url] = _error_result(url, exc, started, backend)
            if progress:
                progress(by_url[url])
    return checked


def _error_result(url: str, exc: WebshelfError, started: float, backend: str | None) -> ExtractResult:
    return ExtractResult(url=url, backend=backend, elapsed_ms=(time.perf_counter() - started) * 1000,
                         error=ErrorInfo(code=exc.code, message=exc.message))


def _finish(page: Page, shelf: Shelf | None, shelf_error: str | None, budget: int, config: Config,
            backend: str, started: float, leading: Sequence[str] = ()) -> ExtractResult:
    """Clean, store and window one fetched page (runs in a worker thread: CPU and fsync);
    ``leading`` notes (the fallback chain's) come first and are rendered inside the budget."""
    # Only what can be stored is cleaned (cost bounded by cache.max_file_chars, not the page size).
    # The cleaned page is UTF-8 (Utf8Text): the shelf writes those bytes, the window decodes only its ends.
    text, raw_chars = clean_utf8_for_store(page.markdown, config.web.max_line_chars,
                                           config.cache.max_file_chars if shelf is not None else None)
    title = clean_title(page.title) or next((clean_title(h.text) for h in headings(text, last_line=200, limit=1)), None)
    notes: list[str] = list(leading)
    path: str | None = None
    store_note = shelf_error
    cut_note: str | None = None
    early = None
    if shelf is not None:
        try:
            stored = shelf.put(url=page.url, final_url=page.final_url, title=title, text=text,
                               backend=backend, content_type=page.content_type,
                               max_chars=config.cache.max_file_chars, original_chars=raw_chars,
                               during=lambda s: _early_window(s, leading, budget, config, store_note))
            path, text = str(stored.path), stored.text
            cut_note = _cut_note(stored.record.original_chars, config)
            early = stored.during
        except CacheError as exc:  # StoreError: "the full text could not be stored: <why>"
            store_note = exc.message
            if raw_chars is not None:  # nothing stored: the windows must show the page's real tail
                text = clean_markdown(page.markdown, config.web.max_line_chars)
    if path is None:
        notes.append(store_note or "the full text could not be stored")
    if cut_note:
        notes.append(cut_note)
    if _blank(text):
        notes.append(EMPTY_NOTE)
    result = ExtractResult(url=page.url, final_url=page.final_url, title=title, path=path, backend=backend,
                           notes=notes)
    _show(result, text, budget, config, store_note=store_note, cut_note=cut_note, early=early)
    result.elapsed_ms = (time.perf_counter() - started) * 1000
    return result


def _blank(text: str | Utf8Text) -> bool:
    return text.is_blank() if isinstance(text, Utf8Text) else not text.strip()


def _early_window(stored: StoredPage, leading: Sequence[str], budget: int, config: Config,
                  store_note: str | None) -> tuple:
    """The window of a page being stored, rendered while its bytes are flushed to disk
    (``Shelf.put(during=…)``: the render's CPU overlaps the fsync's wait) from the inputs
    ``_finish`` will have if the store succeeds; ``_show`` uses it only if they match."""
    path, cut_note = str(stored.path), _cut_note(stored.record.original_chars, config)
    notes = list(leading) + ([cut_note] if cut_note else []) + ([EMPTY_NOTE] if _blank(stored.text) else [])
    inputs = (path, tuple(notes), store_note, cut_note)
    return inputs, _window(stored.text, budget, config, path=path, store_note=store_note, cut_note=cut_note,
                           notes=notes)


def _window(text: str, budget: int, config: Config, *, path: str | None, store_note: str | None = None,
            cut_note: str | None = None, notes: Sequence[str] = ()) -> tuple[Window, str]:
    """``served.window`` with this config's head ratio and untrusted-content wrapping."""
    return served.window(text, budget, head_ratio=config.web.head_ratio, wrap_untrusted=config.web.wrap_untrusted,
                         path=path, store_note=store_note, cut_note=cut_note, notes=notes)


def _show(result: ExtractResult, text: str, budget: int, config: Config, *, store_note: str | None = None,
          cut_note: str | None = None, early: tuple | None = None) -> None:
    """Render ``result.content`` from ``text`` with every note in ``result.notes`` inside the
    budget — the one place a page becomes what the agent sees. The inputs are kept (private,
    until ``web_extract`` returns) so that notes added later, e.g. a failed publish, are
    rendered in by calling this again (``_reshow``) instead of being appended past the budget."""
    if early is not None and early[0] == (result.path, tuple(result.notes), store_note, cut_note):
        window, result.content = early[1]  # rendered from these very inputs while the page was flushed
    else:
        window, result.content = _window(text, budget, config, path=result.path, store_note=store_note,
                                         cut_note=cut_note, notes=result.notes)
    result.truncated, result.total_chars, result.total_lines = window.truncated, window.total_chars, window.total_lines
    result._render_inputs = (text, budget, config, store_note, cut_note)


def _reshow(result: ExtractResult) -> None:
    inputs = result._render_inputs
    if inputs is not None:
        text, budget, config, store_note, cut_note = inputs
        _show(result, text, budget, config, store_note=store_note, cut_note=cut_note)


def _cut_note(original_chars: int | None, config: Config) -> str | None:
    return served.cut_note(original_chars, config.cache.max_file_chars)


def _from_cache(url: str, hit: CachedPage, budget: int, config: Config, started: float) -> ExtractResult:
    """The result for a reused stored copy: same windows and footer as a fresh extract."""
    rec = hit.record
    cut_note = _cut_note(rec.original_chars, config)
    notes = [served.served_note(rec.fetched_at)]
    if cut_note:
        notes.append(cut_note)
    # values of the types the fields declare, from our own index: constructed, not validated, so a
    # call the shelf answers builds no validator at all (issue 15's start-up)
    result = ExtractResult.model_construct(url=url, final_url=rec.final_url, title=clean_title(rec.title),
                                           path=str(hit.path), backend=rec.backend, notes=notes, cached=True)
    _show(result, hit.text, budget, config, cut_note=cut_note)
    result.elapsed_ms = (time.perf_counter() - started) * 1000
    return result


def _reuse(shelf: Shelf | None, url: CheckedURL, fresh: bool, config: Config) -> CachedPage | None:
    """A stored copy to serve instead of fetching, or None; a broken cache is just a miss.
    ``url`` passed the address policy in stage 2, so a host the config now refuses is never
    served from an older copy. An empty stored copy is not reused either: fetching again gives
    the page another chance and its note."""
    if shelf is None or fresh or config.cache.max_age <= 0 or url.is_file:
        return None  # file:// pages are read again: web.file_dirs is checked on every read
    try:
        hit = shelf.reuse(url.url, config.cache.max_age)
        return hit if hit is None or hit.text.strip() else None  # an empty copy: fetch again (EMPTY_NOTE)
    except CacheError as exc:
        log.warning("cache lookup for %s failed, fetching instead: %s", url, exc)
        return None


def _serve_hits(checked: list[CheckedURL], shelf: Shelf | None, fresh: bool, budget: int, config: Config,
                by_url: dict[str, ExtractResult], progress: Progress | None) -> list[CheckedURL]:
    """Stage 3: the result of every URL with a reusable stored copy; returns the misses."""
    misses: list[CheckedURL] = []
    for url in checked:
        started = time.perf_counter()
        hit = _reuse(shelf, url, fresh, config)
        if hit is None:
            misses.append(url)
            continue
        by_url[url.url] = _from_cache(url.url, hit, budget, config, started)
        if progress:
            progress(by_url[url.url])
    return misses


def _evict_after(shelf: Shelf, config: Config, protect: set[str], runtimes: Sequence[PublishTarget] = ()) -> None:
    """Stage 6: one bounded, non-blocking eviction pass after a call that wrote pages; exactly
    the paths it removed (``PruneReport.paths``) are retracted from the attached runtimes, so
    sandboxes lose evicted pages. A failure here never fails the extract: it is logged."""
    policy = EvictionPolicy(ttl=config.cache.ttl, max_total_bytes=config.cache.max_total_bytes)
    try:
        report = shelf.prune(policy, protect=protect, max_removals=OPPORTUNISTIC_REMOVALS, block=False)
    except CacheError as exc:
        log.warning("cache eviction pass failed (the extract is unaffected): %s", exc)
        return
    if report.removed or report.temp_removed:
        log.info("evicted %d pages (%d bytes) and %d stale temp files", len(report.removed), report.freed_bytes,
                 len(report.temp_removed))
    if runtimes and report.paths:
        for problem in retract_all(runtimes, [str(p) for p in report.paths], config.runtimes.publish_timeout_s):
            log.warning("%s", problem)


async def _fetch_misses(misses: list[CheckedURL], backend_name: str, fresh: bool, shelf: Shelf | None,
                        shelf_error: str | None, budget: int, config: Config,
                        progress: Progress | None, override: str | None = None) -> dict[str, ExtractResult]:
    """Stage 4: fetch, clean, store and window every URL without a reusable copy. With a hosted
    backend, URLs only this machine should fetch (core/backends/routing.py) go to the local
    backend with a note saying why — or fail with ``not_sent_to_provider`` (``web.private_urls:
    refuse``). The backends get the checked values and ``fresh``; none checks a URL again."""
    import asyncio  # here, as in the other async stages: a call served from the shelf never loads it (issue 15)

    from webshelf.core.backends.fallback import Chain  # imports asyncio and the backend base

    stay_here = await keep_local(misses, config) if backend_name in HOSTED_KEYS else {}  # browser: this machine
    refused = stay_here if config.web.private_urls == "refuse" else {}
    local_reasons = {} if refused else stay_here
    groups = {backend_name: [u for u in misses if u.url not in stay_here]}
    if local_reasons:  # only when backend_name is hosted
        groups["local"] = [u for u in misses if u.url in local_reasons]

    async with contextlib.AsyncExitStack() as stack:
        # the later backends of web.fallback, opened only if a page needs them (core/backends/fallback.py)
        chain = Chain(fallback_chain(config, backend_name, override)[1:], config, stack, fresh=fresh)
        pending: dict[str, Awaitable[Page]] = {}
        used: dict[str, str] = {}
        for name, group in groups.items():
            if group:
                opened = await stack.enter_async_context(get_backend(name, config))
                # every URL starts at once; a batching backend (core/backends/hosted.py) groups them
                pending.update(opened.fetch_many(group, fresh=fresh))
                used.update(dict.fromkeys((u.url for u in group), name))

        async def one(url: str) -> ExtractResult:
            started = time.perf_counter()
            name = used.get(url, backend_name)
            try:
                if url in refused:
                    raise not_sent_error(url, backend_name, refused[url])
                if url in local_reasons:
                    page = await pending[url]  # the backend limits requests in flight (web.concurrency)
                    fell_back: list[str] = []
                else:  # on a near-empty page, a 403/429 or a timeout, the next backend of web.fallback
                    outcome = await chain.run(checked[url], name, pending[url])
                    name, fell_back = outcome.backend, outcome.notes
                    if outcome.error is not None:
                        result = _error_result(url, outcome.error, started, name)
                        result.notes = fell_back
                        if progress:
                            progress(result)
                        return result
                    page = outcome.page
                result = await asyncio.to_thread(_finish, page, shelf, shelf_error, budget, config, name, started,
                                                 fell_back)
                if url in local_reasons:
                    result.notes.insert(0, local_note(backend_name, local_reasons[url]))
            except WebshelfError as exc:
                result = _error_result(url, exc, started, name)
            except Exception as exc:  # noqa: BLE001 — one URL's bug must not fail the others
                log.exception("unexpected error extracting %s", url)
                result = _error_result(url, WebshelfError(f"{url}: internal error: {type(exc).__name__}: {exc}"),
                                       started, name)
                result.error.code = "internal_error"
            if progress:
                progress(result)
            return result

        checked = {u.url: u for u in misses}
        keys = list(checked)
        return dict(zip(keys, await asyncio.gather(*(one(u) for u in keys))))


async def _publish(runtimes: Sequence[PublishTarget], by_url: dict[str, ExtractResult], config: Config) -> None:
    """Stage 5: every handed-out path — cached pages too, a sandbox started since may not have
    them — readable in every attached runtime; a problem becomes a note inside the budget."""
    handed_out = [r.path for r in by_url.values() if r.path]
    if not runtimes or not handed_out:
        return
    import asyncio

    problems = await asyncio.to_thread(publish_all, runtimes, handed_out, config.runtimes.publish_timeout_s)
    for r in by_url.values():
        if r.path and problems:
            r.notes.extend(str(p) for p in problems)
            _reshow(r)  # the problems go inside the budget too


def _open_shelf(config: Config) -> tuple[Shelf | None, str | None]:
    """This home's shelf, or None and the note every stored-less result carries."""
    try:
        return Shelf.shared(config.home), None
    except CacheError as exc:  # CacheUnavailableError: "the cache at <dir> is unusable: <why>"
        log.warning(exc.message)
        return None, exc.message


@dataclass
class _Call:
    """A call after stages 1–3: what is already answered (checks, cache hits) and what is left."""

    urls: list[str]
    budget: int
    fresh: bool
    config: Config
    backend_name: str
    shelf: Shelf | None
    shelf_error: str | None
    progress: Progress | None
    by_url: dict[str, ExtractResult]
    misses: list[CheckedURL]
    override: str | None = None  # a per-call backend= means exactly that backend: no fallback chain


def _start(urls: Sequence[str] | str, char_limit: int | None, fresh: bool, config: Config | None,
           backend: str | None, progress: Progress | None) -> _Call:
    """Stages 1–3, which need no event loop: the call checks, validation and the cache hits."""
    config = config or load_config()
    urls = check_urls(urls, config.web.max_urls)
    budget = check_char_limit(char_limit) if char_limit is not None else config.web.extract_char_limit
    unique = list(dict.fromkeys(urls))
    backend_name = check_backend(select_backend(config, backend))  # a config error before anything is touched
    if backend_name in HOSTED_KEYS:  # no key: the same error whether the pages are cached or not
        require_key(backend_name, config)
    shelf, shelf_error = _open_shelf(config)
    by_url: dict[str, ExtractResult] = {}
    checked = _validate(unique, config, backend_name, by_url, progress)
    misses = _serve_hits(checked, shelf, fresh, budget, config, by_url, progress)
    return _Call(urls, budget, fresh, config, backend_name, shelf, shelf_error, progress, by_url, misses, backend)


async def _complete(call: _Call, runtimes: Sequence[PublishTarget]) -> list[ExtractResult]:
    """Stages 4–6: fetch the misses, publish, evict; then the results in input order."""
    import asyncio

    by_url, config, shelf = call.by_url, call.config, call.shelf
    if call.misses:  # a backend (and its HTTP client) is opened only when something must be fetched
        by_url.update(await _fetch_misses(call.misses, call.backend_name, call.fresh, shelf, call.shelf_error,
                                          call.budget, config, call.progress, call.override))
    await _publish(runtimes, by_url, config)
    if call.misses and shelf is not None:
        handed_out = {Path(r.path).name for r in by_url.values() if r.path}
        await asyncio.to_thread(_evict_after, shelf, config, handed_out, runtimes)
    return _in_order(call)


def _in_order(call: _Call) -> list[ExtractResult]:
    for r in call.by_url.values():
        r._render_inputs = None  # the page text is not kept alive in the results handed out
    seen: set[str] = set()
    results = []
    for u in call.urls:  # a repeated URL gets its own copy of the one result
        results.append(call.by_url[u].model_copy(deep=True) if u in seen else call.by_url[u])
        seen.add(u)
    return results


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
    return await _complete(_start(urls, char_limit, fresh, config, backend, progress), runtimes)


def web_extract_sync(urls: Sequence[str] | str, *, char_limit: int | None = None, fresh: bool = False,
                     config: Config | None = None, backend: str | None = None, progress: Progress | None = None,
                     runtimes: Sequence[PublishTarget] = ()) -> list[ExtractResult]:
    """``web_extract`` for code that is not async (works inside a running event loop too;
    core/bridge.py, shared with ``call_tool`` and the CLI).

    A call that every stored copy answers, with no runtime to publish to, needs no event loop
    at all: it returns here without importing asyncio (``webshelf extract`` on a cached URL
    is mostly interpreter start-up; issue 15)."""
    call = _start(urls, char_limit, fresh, config, backend, progress)
    if not call.misses and not runtimes:
        return _in_order(call)
    return run_sync(_complete(call, runtimes))


__all__ = ["web_extract", "web_extract_sync"]
