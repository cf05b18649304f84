"""The browser backend: render a page in headless Chromium, then convert its DOM like any HTML.

For pages whose text exists only after JavaScript runs (an SPA shell is ``<div id=root>`` and a
script). Per URL: a fresh browser context (no cookies, storage or cache shared between URLs;
service workers blocked, downloads refused, dialogs dismissed, permissions denied) in the
process-wide browser (service.py: Playwright lives on its own thread and loop; the render runs
there, submitted from this call's loop), its own policy proxy on this call's loop (proxy.py: every request, sub-resources, redirects, fetch/XHR and WebSockets
included, passes the address policy; the bytes it lets through are capped at ``web.max_bytes``),
``goto`` until ``load``, then network idle or ``web.browser.wait_ms``, whichever comes first. The
serialised DOM goes through the same HTML→Markdown path as the local backend
(core/convert/by_type.py), so cleaning, truncate-and-store and the outline are identical.

Images, media and fonts are not fetched (the text never depends on them). Chromium pauses them and
every document request (CDP ``Fetch`` by resource type, ``_second_layer``): the second layer, a
document URL the DNS-free policy refuses (``file://``, ``chrome://``, a loopback literal, a
reserved name) is failed before it reaches the proxy. Scripts, styles and fetch/XHR are not
paused (each pause cost a round trip through Playwright; the proxy checks them all). At most ``web.browser.max_pages`` pages render at once in the shared browser, across
every call of the process (service.py); one deadline, ``web.timeout_s``, covers a page from its
context to its DOM. Polite like the local backend: the page holds its host's slot
(``web.per_host_concurrency``, ``web.per_host_delay_ms``; core/fetch/politeness.py) for the whole
render, and ``web.robots_txt: obey`` checks its URL first (robots.txt read by a LocalBackend).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import urlsplit

from webshelf.core.backends.base import Backend
from webshelf.core.backends.fallback import count_scripts
from webshelf.core.backends.browser.lifecycle import SharedBrowser, require_browser
from webshelf.core.backends.browser.service import BrowserService, acquire, launch_key, release
from webshelf.core.backends.browser.proxy import BLOCKED_HEADER, PolicyProxy
from webshelf.core.config import Config
from webshelf.core.convert.by_type import HTML_TYPES, media_type, to_markdown
from webshelf.core.fetch.body import too_large
from webshelf.core.fetch.checked import CheckedURL
from webshelf.core.fetch.guarded_connect import Resolver
from webshelf.core.fetch.netpolicy import check_url, redact
from webshelf.core.fetch.headers import accept_language
from webshelf.core.fetch.politeness import host_slots
from webshelf.core.fetch.proxy import proxy_chooser
from webshelf.core.fetch.robots import check_robots
from webshelf.core.fetch.tls import HOW as TLS_HOW
from webshelf.core.models import Page
from webshelf.errors import (BackendError, BlockedURLError, FetchTimeoutError, HTTPStatusError, InvalidURLError,
                             ProxyError, UnsupportedContentError)


# Sub-resources a page's text never depends on: not fetched at all (scripts, styles, XHR are).
# As CDP spells them; "Other" is mostly the favicon.
SKIPPED_TYPES = {"Image", "Media", "Font", "Other"}
# What Chromium pauses for the second layer (CDP Fetch, resource types as CDP spells them): the
# skipped types, to fail them, and documents (the page, its frames, every redirect hop of them),
# to check them. Scripts, styles, fetch/XHR are not paused: a pause is a round trip through
# Playwright's driver and this thread, and a page's chain of scripts paid it request after
# request (bench/browser.py); the policy proxy checks each of them anyway, with DNS.
PAUSED_TYPES = (*sorted(SKIPPED_TYPES), "Document")


class BrowserBackend(Backend):
    name = "browser"

    def __init__(self, config: Config, *, resolver: Resolver | None = None) -> None:
        super().__init__(config)
        self.settings = config.web.browser
        self.executable = require_browser(self.settings.executable_path)
        self.resolver = resolver
        self._key = launch_key(config, self.executable, self.policy)  # a bad web.ca_bundle fails here
        self._service: BrowserService | None = None
        self._upstream = proxy_chooser(config, self.name)  # web.proxy…: the policy proxy connects through it
        self._host_slots = host_slots(config)  # web.per_host_concurrency / _delay_ms, shared with the local backend
        self._robots_reader: Any = None  # a LocalBackend, made when web.robots_txt: obey needs a robots.txt
        self.blocked: dict[str, list[str]] = {}  # url → requests the proxy refused (tests, notes)

    def _use_service(self) -> BrowserService:
        """The process-wide browser service for these settings (service.py), held until ``aclose``."""
        if self._service is None:
            self._service = acquire(self._key, self.settings.idle_s)
        return self._service

    @property
    def _shared(self) -> SharedBrowser | None:
        """The service's browser (launch counts for tests; its Playwright objects belong to the service's loop)."""
        return self._service.shared if self._service is not None else None

    async def _browser(self) -> None:
        """Launch the shared browser now if it is not running (tests, benchmarks)."""
        service = self._use_service()
        await service.run(service.browser())

    async def pids(self) -> dict[str, list[int]]:
        """The shared browser's processes by kind, from Chromium itself (lifecycle.py ``pids``)."""
        service = self._use_service()
        return await service.run(service.pids())

    async def aclose(self) -> None:
        """Release the shared browser (closed by the service after ``web.browser.idle_s`` unused)."""
        if self._robots_reader is not None:
            reader, self._robots_reader = self._robots_reader, None
            await reader.aclose()
        if self._service is not None:
            service, self._service = self._service, None
            release(service)

    async def fetch(self, url: CheckedURL | str, *, fresh: bool = False) -> Page:
        """Render one URL in a fresh context; ``fresh`` changes nothing (no copies are kept)."""
        checked = self.check(url)
        if checked.is_file:
            raise BlockedURLError(f"{redact(checked.url)}: the browser backend never opens file:// URLs; "
                                  "the local backend reads them (web.allow_file_urls, web.file_dirs)", url=checked.url)
        if self.config.web.robots_txt == "obey":
            await self._obey_robots(checked.url)
        service = self._use_service()
        # Polite like the local backend: the page's host slot (and delay) for the whole render, so a
        # browser never adds its own requests at once to a host's web.per_host_concurrency. The
        # page's policy proxy runs on this call's loop (its resolver, its byte count); Chromium
        # and every Playwright call run on the service's loop.
        async with self._host_slots.slot(checked.url):
            proxy = await PolicyProxy(self.policy, resolver=self.resolver, max_bytes=self.config.web.max_bytes,
                                      upstream=self._upstream).start()
            try:
                html, final_url, status, ctype = await service.run(self._render_job(service, checked.url, proxy))
            finally:
                self.blocked[checked.url] = list(proxy.blocked)
                await proxy.close()
        converted = await asyncio.to_thread(to_markdown, html, ctype, final_url,
                                            max_pdf_pages=self.config.web.max_pdf_pages)
        return Page(url=checked.url, final_url=final_url, markdown=converted.markdown, title=converted.title,
                    content_type=converted.content_type, status=status, scripts=count_scripts(html, converted))

    async def _obey_robots(self, url: str) -> None:
        """``web.robots_txt: obey`` for the page URL: its robots.txt is read by the local backend's
        guarded fetch (the same policy, caps, host slots and cache per origin, core/fetch/robots.py)."""
        from webshelf.core.backends.local import LocalBackend

        if self._robots_reader is None:
            self._robots_reader = LocalBackend(self.config)
        web = self.config.web
        await check_robots(url, user_agent=web.user_agent, max_age_s=self.config.cache.max_age,
                           fetch=self._robots_reader._robots_body)

    async def _render_job(self, service: BrowserService, url: str, proxy: PolicyProxy) -> tuple[bytes, str, int, str]:
        """On the service's loop: one of ``max_pages`` slots (shared by every call), then the render
        within ``web.timeout_s`` (waiting for a slot does not count: the page has not started)."""
        timeout_s = self.config.web.timeout_s
        async with service.pages:
            try:
                async with asyncio.timeout(timeout_s):
                    return await self._render_unless_crash(service, url, proxy)
            except TimeoutError:
                raise FetchTimeoutError(f"{redact(url)}: the browser did not finish the page within "
                                        f"{timeout_s:g} s (web.timeout_s)", url=url) from None

    async def _render_unless_crash(self, service: BrowserService, url: str, proxy: PolicyProxy) -> tuple[bytes, str, int, str]:
        """``_render``, but a browser that dies meanwhile fails this URL at once: a pending
        Playwright call is not always woken by the crash, so the disconnect is watched too."""
        browser = await service.browser()
        gone = asyncio.get_running_loop().create_future()

        def on_disconnect(*_: object) -> None:
            if not gone.done():
                gone.set_result(None)
        browser.on("disconnected", on_disconnect)
        try:
            return await _unless(self._render(browser, url, proxy), gone, lambda: BackendError(
                f"{redact(url)}: the browser crashed while rendering (only this URL failed; "
                "the browser is restarted for the next one)", url=url, backend="browser"))
        finally:
            with contextlib.suppress(Exception):
                browser.remove_listener("disconnected", on_disconnect)

    async def _render(self, browser: Any, url: str, proxy: PolicyProxy) -> tuple[bytes, str, int, str]:
        from playwright.async_api import Error as PlaywrightError

        web = self.config.web
        shown = redact(url)
        context = None
        try:
            context = await browser.new_context(
                proxy={"server": proxy.url, "bypass": "<-loopback>"}, service_workers="block",
                accept_downloads=False, permissions=[], java_script_enabled=True, ignore_https_errors=False,
                user_agent=self.settings.user_agent or _chrome_user_agent(browser.version),
                **_page_headers(web))
            page = await context.new_page()
            await self._second_layer(context, page, proxy)
            page.on("dialog", lambda dialog: asyncio.ensure_future(_quietly(dialog.dismiss())))
            # A tab whose renderer dies (out of memory, a renderer bug) surfaces as whichever
            # Playwright call was pending — and inside the network-idle wait, whose errors are
            # suppressed, as nothing: the page's "crash" event names it and fails this URL at once,
            # while the browser and the other pages go on.
            crashed = asyncio.get_running_loop().create_future()
            page.on("crash", lambda *_: crashed.done() or crashed.set_result(None))
            return await _unless(self._load(page, url, proxy, browser), crashed, lambda: BackendError(
                f"{shown}: the page crashed in the browser (its renderer died, e.g. out of memory; only this "
                "URL failed)", url=url, backend="browser"))
        except PlaywrightError as exc:
            what = "the browser crashed while rendering" if not browser.is_connected() else "the browser failed"
            raise BackendError(f"{shown}: {what}: {str(exc).splitlines()[0]} (only this URL failed; the browser "
                               "is restarted for the next one)", url=url, backend="browser") from None
        finally:
            if context is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), 10)

    async def _load(self, page: Any, url: str, proxy: PolicyProxy, browser: Any) -> tuple[bytes, str, int, str]:
        """Navigate ``page`` to ``url``, wait for it (bounded), and take its DOM (or its body)."""
        from playwright.async_api import Error as PlaywrightError

        web = self.config.web
        shown = redact(url)
        try:
            response = await page.goto(url, wait_until="load")
        except PlaywrightError as exc:
            raise self._goto_error(url, exc, proxy, browser) from None
        if response is None:
            raise BackendError(f"{shown}: the browser got no response for the page", url=url)
        if self.settings.wait_ms:
            with contextlib.suppress(PlaywrightError):  # bounded: a page that keeps polling is taken as it is
                await page.wait_for_load_state("networkidle", timeout=self.settings.wait_ms)
        final_url = page.url
        status = response.status
        headers = await response.all_headers()
        ctype = headers.get("content-type", "text/html")
        if BLOCKED_HEADER.lower() in headers and (failed := _proxy_failed(final_url, proxy)):
            raise failed
        if BLOCKED_HEADER.lower() in headers and proxy.blocked:  # the proxy refused the page (a redirect hop, DNS)
            raise BlockedURLError(f"{shown}: refused: {proxy.blocked[0]}", url=url)
        if status >= 400:
            raise HTTPStatusError(f"{shown}: HTTP {status} {response.status_text} (in the browser)"
                                  + (f" (at {redact(final_url)})" if final_url != url else ""), url=url, status=status)
        if media_type(ctype)[0] in HTML_TYPES or not ctype:
            html = (await page.content()).encode("utf-8")
            ctype = "text/html; charset=utf-8"
        else:  # JSON, text, … shown by the browser as it came: convert the body itself
            html = await response.body()
        if proxy.over_cap or len(html) > web.max_bytes:
            raise too_large(shown, web.max_bytes)
        return html, final_url, status, ctype

    def _goto_error(self, url: str, exc: Exception, proxy: PolicyProxy, browser: Any) -> Exception:
        shown = redact(url)
        text = str(exc).splitlines()[0]
        # Playwright's "net::ERR_… at URL": the markers are looked for in the code alone — the URL
        # may hold any of them ("403" in a port such as :40363 made a certificate error "refused")
        code = text.split(" at ", 1)[0]
        if "Download is starting" in code or "ERR_ABORTED" in code and not proxy.blocked:
            return UnsupportedContentError(f"{shown}: the browser was offered a download, and downloads are refused; "
                                           "the local backend reads PDFs and text (backend='local')", url=url)
        if failed := _proxy_failed(url, proxy):
            return failed
        if proxy.blocked and ("ERR_TUNNEL_CONNECTION_FAILED" in code or "ERR_BLOCKED" in code
                              or "ERR_FAILED" in code or "ERR_PROXY" in code or "403" in code):
            return BlockedURLError(f"{shown}: refused: {proxy.blocked[0]}", url=url)
        if proxy.over_cap:
            return too_large(shown, self.config.web.max_bytes)
        if "ERR_CERT" in code:  # a certificate the browser could not verify: the same advice as the local backend
            return BackendError(f"{shown}: TLS certificate verification failed in the browser ({text}); {TLS_HOW}",
                                url=url, backend="browser")
        if not browser.is_connected():
            return BackendError(f"{shown}: the browser crashed while rendering: {text} (only this URL failed; the "
                                "browser is restarted for the next one)", url=url, backend="browser")
        return BackendError(f"{shown}: the browser could not load the page: {text}", url=url, backend="browser")

    async def _second_layer(self, context: Any, page: Any, proxy: PolicyProxy) -> None:
        """Before the page loads: Chromium pauses images, media, fonts, favicons (failed: the text
        needs none of them — less time, memory, bytes) and documents — the page, its frames and
        every redirect hop — whose URL must pass the DNS-free policy (defence in depth: the proxy
        checks them again, with DNS). A refused document is recorded with the proxy's refusals."""
        session = await context.new_cdp_session(page)
        own_headers = dict(self.config.web.headers)
        main_frame = (await session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"] if own_headers else None

        async def decide(event: dict) -> None:
            request_id, request_url = event["requestId"], event["request"]["url"]
            allowed = event.get("resourceType") == "Document"
            if allowed and not request_url.startswith(("data:", "blob:", "about:")):
                try:
                    check_url(request_url, self.policy, first_hop=False)
                except (BlockedURLError, InvalidURLError) as exc:
                    allowed = False
                    proxy.blocked.append(exc.message.replace(": refused: ", ": ", 1))
            with contextlib.suppress(Exception):  # the page may be closing
                if allowed and own_headers and event.get("frameId") == main_frame:
                    # web.headers on the page's own navigation and its redirect hops only — as the
                    # local backend sends them — never on frames or the scripts' requests to other hosts
                    headers = {**event["request"].get("headers", {}), **own_headers}
                    await session.send("Fetch.continueRequest", {"requestId": request_id, "headers": [
                        {"name": k, "value": v} for k, v in headers.items()]})
                elif allowed:
                    await session.send("Fetch.continueRequest", {"requestId": request_id})
                else:
                    await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})

        session.on("Fetch.requestPaused", lambda event: asyncio.ensure_future(decide(event)))
        await session.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "resourceType": kind, "requestStage": "Request"}
                                                         for kind in PAUSED_TYPES]})


def _page_headers(web: Any) -> dict[str, Any]:
    """``Accept-Language`` from ``web.languages`` on every request of a context (core/fetch/headers.py,
    as the local backend sends it); ``web.headers`` go on the page's own document requests only
    (``_second_layer``). Not ``web.user_agent``: the browser is Chromium (``web.browser.user_agent``),
    so pages that refuse webshelf's name read. No ``locale``: Playwright's would replace the header."""
    language = accept_language(list(web.languages))
    return {"extra_http_headers": {"Accept-Language": language}} if language else {}


def _proxy_failed(url: str, proxy: PolicyProxy) -> ProxyError | None:
    """``proxy_failed`` when the upstream proxy (web.proxy), not the policy, failed this page's
    host: wrong credentials, unreachable — the local backend's error for the same cause."""
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}: "
    for why in proxy.proxy_failed:
        if why.startswith(where):
            return ProxyError(f"{redact(url)}: {why.removeprefix(where)}; check web.proxy", url=url)
    return None


def _chrome_user_agent(version: str) -> str:
    """Chromium's own User-Agent without "Headless" (pages that block headless browsers by name)."""
    major = version.split(".", 1)[0]
    return f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"


async def _quietly(awaitable: Any) -> None:
    with contextlib.suppress(Exception):
        await awaitable


async def _unless(work: Any, event: asyncio.Future, error: Any) -> Any:
    """Await ``work``, unless ``event`` (a crash) comes first: then ``work`` is cancelled and
    ``error()`` raised — a pending Playwright call is not always woken by the crash itself."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait({task, event}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        raise error()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task



__all__ = ["BrowserBackend"]
