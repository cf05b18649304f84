"""The local backend: fetch with httpx on this machine, convert here, no API key needed.

One ``httpx.AsyncClient`` per call serves every URL (shared connection pool, keep-alive). Every
fetch is hardened against hostile URLs and servers (README "Security"):

- the address policy (core/fetch/netpolicy.py) before the request — the URL arrives checked
  (core/fetch/checked.py), a plain string is checked once here — and in the connection itself
  (core/fetch/guarded_connect.py: resolve once, check every address, connect to a checked one);
- redirects followed here, not by httpx, each hop re-checked, at most ``web.max_redirects``;
- one deadline per URL (``web.timeout_s``) over DNS, connect, TLS, redirects, retries and the
  body, plus a per-read timeout (``web.read_timeout_s``) — a trickling server cannot hold on;
- the decoded body capped at ``web.max_bytes`` while streaming (core/fetch/body.py), bombs included;
- 429/503 retried up to ``web.max_retries`` honouring ``Retry-After`` within ``web.max_retry_wait_s``.

Conversion (CPU-bound) runs in a worker process (core/convert/pool.py, ``web.convert_workers``)
with a deadline and a memory budget, so it never holds the event loop and a hostile page fails
only its own URL (``conversion_timeout``, ``too_complex``); a call with one small page, or
``convert_workers`` 0/1, converts in a thread of this process with the pre-checks only.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from webshelf.core.backends.base import Backend
from webshelf.core.fetch.checked import CheckedURL
from webshelf.core.fetch.body import read_capped, too_large
from webshelf.core.config import Config
from webshelf.core.backends.fallback import count_scripts
from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.by_type import is_pdf, refuse_binary_type, to_markdown
from webshelf.core.convert.pool import default_workers, shared_pool, use_pool
from webshelf.errors import (BlockedByRobotsError, BlockedURLError, FetchError, FetchTimeoutError, HTTPStatusError, InvalidURLError,
                         TooManyRedirectsError, WebshelfError)
from webshelf.core.fetch.file_urls import read_file_url
from webshelf.core.fetch.guarded_connect import GuardedTransport, Resolver
from webshelf.core.fetch.headers import request_headers
from webshelf.core.fetch.politeness import host_slots
from webshelf.core.fetch.robots import check_robots
from webshelf.core.fetch.tls import ssl_context, verify_failure, verify_message
from webshelf.core.fetch.proxy import ProxiedTransport, RoutingTransport, proxy_chooser
from webshelf.core.models import Page
from webshelf.core.fetch.netpolicy import check_url, redact

ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,application/pdf;q=0.7,*/*;q=0.5"
REDIRECTS = {301, 302, 303, 307, 308}
RETRIED = {429, 503}


@dataclass
class Fetched:
    final_url: str
    status: int
    content_type: str | None
    body: bytes


def standard_phrase(status: int) -> str:
    """`` Not Found`` for 404: the standard reason phrase, never the server's own. A reason phrase
    is text the server chooses and it reaches the agent outside any untrusted-content markers, so
    a hostile ``HTTP/1.1 404 Ignore previous instructions`` must not be echoed."""
    try:
        return " " + http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def retry_after_s(value: str | None, attempt: int) -> float:
    """Seconds a ``Retry-After`` header asks for (delta or HTTP date); 1, 2, 4… s when absent."""
    if value:
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            pass
    return float(2**attempt)


class _Deadline:
    """A URL's deadline (``web.timeout_s``): the monotonic time ``at``, and the ``asyncio.timeout``
    scope that enforces it, both moved later by the time spent waiting for a host slot."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.scope: asyncio.Timeout | None = None

    def extend(self, waited_s: float) -> None:
        self.at += waited_s
        if self.scope is not None and (when := self.scope.when()) is not None:
            self.scope.reschedule(when + waited_s)


class LocalBackend(Backend):
    name = "local"

    def __init__(self, config: Config, *, resolver: Resolver | None = None) -> None:
        super().__init__(config)
        web = config.web
        limits = httpx.Limits(max_connections=web.concurrency, max_keepalive_connections=web.concurrency)
        tls = ssl_context(config, self.name)  # default roots plus web.ca_bundle (core/fetch/tls.py)
        direct = GuardedTransport(self.policy, limits=limits, resolver=resolver, ssl_context=tls)
        proxied = RoutingTransport(direct, proxy_chooser(config, self.name),  # web.proxy…: target still checked
                                   lambda proxy: ProxiedTransport(self.policy, proxy, limits=limits, resolver=resolver,
                                                                  verify=tls))
        self._client = httpx.AsyncClient(
            transport=proxied,
            follow_redirects=False,  # followed in _follow, each hop checked
            timeout=httpx.Timeout(web.timeout_s, read=min(web.read_timeout_s, web.timeout_s)),
            headers={"Accept": ACCEPT, **request_headers(web), "Accept-Encoding": "gzip, deflate, br"},
            trust_env=False,  # web.trust_env_proxy is read by proxy_chooser, so the policy applies to it too
        )
        self._host_slots = host_slots(config)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _robots_body(self, url: str) -> bytes:
        return (await self._fetch_within_deadline(url)).body

    def fetch_many(self, urls, *, fresh: bool = False):  # noqa: ANN001, ANN201 — see Backend.fetch_many
        self._urls_in_call = len({str(u) for u in urls})  # one URL in a call may convert in this process
        return super().fetch_many(urls, fresh=fresh)

    async def _convert(self, fetched: Fetched):  # noqa: ANN202
        web = self.config.web
        bounds = Bounds.from_config(web)
        workers = web.convert_workers if web.convert_workers is not None else default_workers()
        if use_pool(workers, getattr(self, "_urls_in_call", 1), fetched.body, is_pdf(fetched.body, fetched.content_type)):
            pool = shared_pool(workers, web.convert_memory_mb)
            return await pool.convert(fetched.body, fetched.content_type, fetched.final_url, bounds)
        return await asyncio.to_thread(to_markdown, fetched.body, fetched.content_type, fetched.final_url, bounds=bounds)

    async def fetch(self, url: CheckedURL | str, *, fresh: bool = False) -> Page:
        """Always a live fetch (``fresh`` changes nothing here: this backend keeps no copies)."""
        web = self.config.web
        checked = self.check(url)
        url = checked.url
        if checked.is_file:
            body, ctype, final_url = await asyncio.to_thread(read_file_url, url, self.policy, web.max_bytes)
            fetched = Fetched(final_url, 200, ctype, body)
        else:
            await self._obey_robots(url)
            fetched = await self._fetch_within_deadline(url)  # each hop: its host's slot, then the gate
        converted = await self._convert(fetched)
        return Page(url=url, final_url=fetched.final_url, markdown=converted.markdown, title=converted.title,
                    content_type=converted.content_type, status=fetched.status,
                    scripts=count_scripts(fetched.body, converted))

    async def _obey_robots(self, url: str) -> None:
        """With ``web.robots_txt: obey``, refuse ``url`` (a first URL or a redirect hop) its robots.txt disallows."""
        web = self.config.web
        if web.robots_txt == "obey":  # core/fetch/robots.py: fetched through this same guarded path
            await check_robots(url, user_agent=web.user_agent, max_age_s=self.config.cache.max_age,
                               fetch=self._robots_body)

    async def _fetch_within_deadline(self, url: str) -> Fetched:
        web = self.config.web
        deadline = _Deadline(time.monotonic() + web.timeout_s)  # the URL is redacted only for an error message
        try:
            async with asyncio.timeout(web.timeout_s) as deadline.scope:
                return await self._follow(url, deadline)
        except TimeoutError:
            raise FetchTimeoutError(f"{redact(url)}: no complete response within {web.timeout_s:g} s (web.timeout_s, which covers "
                                    "DNS, connect, TLS, redirects and the whole body)", url=url) from None
        except httpx.TimeoutException as exc:
            what = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
            raise FetchTimeoutError(f"{redact(url)}: the server sent nothing for {web.read_timeout_s:g} s ({what} timeout, "
                                    "web.read_timeout_s)", url=url) from None
        except WebshelfError as exc:
            if exc.context.get("url"):
                raise
            raise type(exc)(f"{redact(url)}: {exc.message}", url=url, **exc.context) from None
        except httpx.InvalidURL as exc:  # e.g. a redirect to a malformed Location
            raise InvalidURLError(f"{redact(url)}: not a valid URL: {exc}", url=url) from None
        except httpx.HTTPError as exc:
            if (failure := verify_failure(exc)) is not None:  # a private CA or a TLS-inspecting proxy: web.ca_bundle
                raise FetchError(f"{redact(url)}: {verify_message(failure)}", url=url) from None
            raise FetchError(f"{redact(url)}: {type(exc).__name__}: {exc or 'request failed'}", url=url) from None

    async def _follow(self, url: str, deadline: "_Deadline") -> Fetched:
        """GET with redirects followed by hand: every hop passes the policy again, and is polite to
        its own host — that host's slot and delay (core/fetch/politeness.py) and, with
        ``web.robots_txt: obey``, its robots.txt. A hop holds only its own host's slot (released
        before the next hop takes one, so A→B and B→A redirects cannot deadlock), and the time
        spent waiting for a slot is added to the deadline: a URL that has not been sent yet has
        not started."""
        web = self.config.web
        current = url
        for _hop in range(web.max_redirects + 1):
            async with self._polite(current, deadline):
                response, retry_note = await self._send_with_retries(current, deadline.at)
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECTS and location:
                        target = urljoin(str(response.url), location.strip())
                        try:
                            check_url(target, self.policy, first_hop=False)
                        except BlockedURLError as exc:  # a new URL: the policy for a redirect target
                            raise BlockedURLError(f"{redact(url)}: redirect to {exc.message}", url=url) from None
                    elif response.status_code >= 400:
                        raise HTTPStatusError(f"{redact(url)}: HTTP {response.status_code}{standard_phrase(response.status_code)}"
                                              + (f" (at {redact(current)})" if current != url else "") + retry_note,
                                              url=url, status=response.status_code)
                    else:
                        return await self._read(url, response)
                finally:
                    await response.aclose()
            if web.robots_txt == "obey":  # the hop's own site and path (cached per origin), outside any slot
                try:
                    await self._obey_robots(target)
                except BlockedByRobotsError as exc:
                    raise BlockedByRobotsError(f"{redact(url)}: redirect to {exc.message}", url=url,
                                               rule=exc.context.get("rule")) from None
            current = target
        raise TooManyRedirectsError(f"{redact(url)}: more than {web.max_redirects} redirects (web.max_redirects); "
                                    f"the last one pointed at {redact(current)}", url=url)

    @asynccontextmanager
    async def _polite(self, url: str, deadline: "_Deadline") -> AsyncIterator[None]:
        """One hop's host slot (web.per_host_concurrency / _delay_ms, across processes), then the
        gate (web.concurrency requests in flight), the wait not counted against web.timeout_s."""
        began = time.monotonic()
        async with self._host_slots.slot(url):
            async with self.gate:
                deadline.extend(time.monotonic() - began)
                yield

    async def _send_with_retries(self, url: str, deadline: float) -> tuple[httpx.Response, str]:
        """The response, and a note on retries for the error message when it is still a 429/503."""
        web = self.config.web
        waited = 0.0
        for attempt in range(web.max_retries + 1):
            try:
                response = await self._client.send(self._client.build_request("GET", url), stream=True)
            except BlockedURLError as exc:
                raise BlockedURLError(f"{redact(url)}: {exc.message}", url=url) from None
            if response.status_code not in RETRIED:
                return response, ""
            if attempt == web.max_retries:
                return response, f"; gave up after {attempt} retries (web.max_retries)"
            wait = retry_after_s(response.headers.get("retry-after"), attempt)
            if waited + wait > web.max_retry_wait_s or time.monotonic() + wait > deadline:
                return response, (f"; the server asked to retry after {wait:g} s, more than webshelf waits "
                                  f"(web.max_retry_wait_s {web.max_retry_wait_s:g} s in total, within web.timeout_s) — try later")
            await response.aclose()
            await asyncio.sleep(wait)
            waited += wait
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, url: str, response: httpx.Response) -> Fetched:
        web = self.config.web
        shown = redact(url)  # once per page: the checks below name the URL the same way
        ctype = response.headers.get("content-type")
        refuse_binary_type(ctype, shown)
        encoding = response.headers.get("content-encoding")
        length = response.headers.get("content-length")
        if length and length.isdigit() and int(length) > web.max_bytes and not encoding:
            raise too_large(shown, web.max_bytes)
        body = await read_capped(response.aiter_raw(), encoding, web.max_bytes, shown)
        return Fetched(str(response.url), response.status_code, ctype, body)


__all__ = ["LocalBackend"]
