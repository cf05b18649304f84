"""What every hosted backend shares: key, one httpx client, the URL policy, batching, retries, errors.

A provider module (firecrawl, tavily, exa, parallel) only says how to turn a batch of URLs into
one request body and how to read the answer into a ``Page`` or a ``FetchError`` per URL. This
base class does the rest the same way for all of them:

- the API key comes from ``web.<provider>.api_key`` (``${ENV}`` allowed) or the provider's usual
  environment variable; it is sent only in the auth header and scrubbed from every message;
- every URL has passed the DNS-free address policy and the secret-URL check before it is sent
  (once, core/fetch/checked.py: the pipeline's ``CheckedURL``, or ``check`` for a plain string — no
  DNS lookup here, the provider resolves the target); a ``file://`` URL and a URL only this machine
  should fetch (private, allow-listed, loopback: ``routing.local_only_reason``) are never sent —
  ``web_extract`` hands those to the local backend first; the provider's own base URL is operator
  configuration;
- ``fresh`` (an argument of ``fetch_many``) becomes the provider's freshness setting
  (core/freshness.py), passed to ``request_body`` as ``max_age_s``;
- URLs go out in batches of ``batch_size`` (1 = one request per URL), at most ``web.concurrency``
  requests in flight; a failed request fails only the URLs of its batch, and a URL the provider
  reports as failed inside an HTTP 200 fails alone;
- answers are streamed and capped at ``web.max_bytes`` of decoded size, like local fetches
  (core/fetch/body.py): a gzip bomb or a 120 MB answer stops at the cap with ``too_large``, and
  of an error answer only the first 64 KB are read;
- 429 and 5xx are retried up to ``web.max_retries`` honouring ``Retry-After`` within
  ``web.max_retry_wait_s``; timeouts and errors name the provider and quote its message.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from abc import abstractmethod
from collections.abc import Awaitable
from typing import Any

import brotli
import httpx

from webshelf.core.backends.base import Backend, URLs
from webshelf.core.backends.local import retry_after_s
from webshelf.core.backends.routing import DIRECT_HINT, local_only_reason, not_sent_error
from webshelf.core.backends.selection import configured_key, require_key
from webshelf.core.config import Config, HostedBackendConfig
from webshelf.core.fetch.body import decoders, read_capped, through
from webshelf.core.fetch.checked import CheckedURL
from webshelf.core.fetch.proxy import hosted_client_proxy
from webshelf.core.fetch.tls import ssl_context, verify_failure, verify_message
from webshelf.errors import BackendError, BlockedURLError, FetchError, FetchTimeoutError, HTTPStatusError, TooLargeError
from webshelf.core.freshness import max_age_s
from webshelf.core.models import Page
from webshelf.core.fetch.netpolicy import redact

Outcome = Page | FetchError


ERROR_BODY_BYTES = 64 * 1024  # of an error answer only the head is read: it holds the message


def provider_message(body: bytes) -> str:
    """The human part of a provider's error body, whichever shape it uses."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    if isinstance(data, dict):
        for key in ("error", "detail", "message"):
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("error") or value.get("detail")
            if isinstance(value, str) and value.strip():
                return value.strip()[:300]
    return " ".join(str(data).split())[:300]


async def read_answer(response: httpx.Response, cap: int, where: str, *, clip_to: int | None = None) -> bytes:
    """The decoded body of a provider's answer, streamed and capped like a local fetch
    (core/fetch/body.py: gzip/brotli decoded in bounded steps, ``TooLargeError`` past ``cap``).
    With ``clip_to``, reading stops quietly after that many bytes (error answers)."""
    if clip_to is None:
        return await read_capped(response.aiter_raw(), response.headers.get("content-encoding"), cap, where)
    parts: list[bytes] = []
    total = 0
    try:
        async for piece in _decoded(response):
            parts.append(piece)
            total += len(piece)
            if total >= clip_to:
                break
    except FetchError:
        pass  # an undecodable error body: the status says enough
    return b"".join(parts)[:clip_to]


async def _decoded(response: httpx.Response):  # noqa: ANN202 — async iterator of decoded pieces
    chain = decoders(response.headers.get("content-encoding"), str(response.url))
    try:
        async for chunk in response.aiter_raw():
            for piece in through(chunk, chain):
                yield piece
    except (zlib.error, brotli.error):
        raise FetchError("corrupt compressed body") from None


class HostedBackend(Backend):
    """A provider's HTTP API as a backend. Subclasses set the class attributes and two methods."""

    env_var: str = "?"
    path: str = "/"
    batch_size: int = 1
    auth_header: str = "Authorization"
    auth_scheme: str = "Bearer "

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.settings: HostedBackendConfig = getattr(config.web, self.name)
        key = require_key(self.name, config)  # the same ConfigError extract raises before the cache
        self._key = key
        self._client = httpx.AsyncClient(
            base_url=self.settings.base_url,
            timeout=httpx.Timeout(self.wait_s, connect=min(10.0, self.wait_s)),
            headers={self.auth_header: self.auth_scheme + key, "User-Agent": config.web.user_agent,
                     "Accept": "application/json"},
            limits=httpx.Limits(max_connections=config.web.concurrency),
            proxy=hosted_client_proxy(config, self.name, self.settings.base_url),  # web.proxy, per backend
            trust_env=config.web.trust_env_proxy,  # the proxy itself: hosted_client_proxy
            verify=ssl_context(config, self.name),  # web.ca_bundle (a TLS-inspecting proxy's CA), per backend
        )

    # -- what a provider implements ------------------------------------------------------------
    @abstractmethod
    def request_body(self, urls: list[str], *, max_age_s: int) -> dict[str, Any]:
        """The JSON body of one request for ``urls`` (one URL for per-URL providers); a provider
        copy older than ``max_age_s`` seconds must not be used (0: fetch live)."""

    @abstractmethod
    def read_response(self, urls: list[str], data: dict[str, Any]) -> dict[str, Outcome]:
        """One ``Page`` or ``FetchError`` per requested URL (missing ones become errors)."""

    # -- shared machinery ------------------------------------------------------------------------
    @property
    def wait_s(self) -> float:
        """How long we wait for one answer: the provider's own timeout plus time to report it."""
        return self.settings.timeout_s + min(10.0, self.settings.timeout_s)

    def scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def error(self, cls: type[FetchError], message: str, url: str | None = None, **context: object) -> FetchError:
        return cls(self.scrub(message), url=url, backend=self.name, **context)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: CheckedURL | str, *, fresh: bool = False) -> Page:
        return await self.fetch_many([url], fresh=fresh)[str(url)]

    def file_refused(self, url: str) -> FetchError:
        return BlockedURLError(f"{url}: refused: a file:// URL cannot be fetched by the hosted backend {self.name}; "
                               "use the local backend (backend='local') for local files", url=url)

    def fetch_many(self, urls: URLs, *, fresh: bool = False) -> dict[str, Awaitable[Page]]:
        loop = asyncio.get_running_loop()
        unique = {str(u): u for u in urls}
        futures: dict[str, asyncio.Future[Page]] = {u: loop.create_future() for u in unique}
        allowed = []
        for url, given in unique.items():
            try:
                checked = self.check(given)
                if checked.is_file:  # a provider cannot read this machine's files
                    raise self.file_refused(url)
                if reason := local_only_reason(url, self.policy):  # extract routes these to local first
                    raise not_sent_error(url, self.name, reason, DIRECT_HINT)
                allowed.append(url)
            except FetchError as exc:
                futures[url].set_exception(exc)
        age = max_age_s(self.config, fresh=fresh)
        for start in range(0, len(allowed), self.batch_size):
            self.spawn(self._run_batch(allowed[start:start + self.batch_size], futures, age))
        return futures

    async def _run_batch(self, urls: list[str], futures: dict[str, asyncio.Future[Page]], age: int) -> None:
        try:
            async with self.gate:
                data = await self._post(self.request_body(urls, max_age_s=age))
            outcomes = self.read_response(urls, data)
        except FetchError as exc:  # the whole request failed: every URL of this batch says why
            outcomes = {u: type(exc)(f"{redact(u)}: {exc.message}", **{**exc.context, "url": u}) for u in urls}
        except Exception as exc:  # noqa: BLE001 — a malformed answer must fail its URLs, not hang them
            outcomes = {u: self.error(BackendError, f"{redact(u)}: {self.name} returned an answer webshelf could not "
                                      f"read ({type(exc).__name__}: {exc})", u) for u in urls}
        for url in urls:
            outcome = outcomes.get(url) or self.error(
                BackendError, f"{redact(url)}: {self.name} returned no result and no error for this URL", url)
            if isinstance(outcome, FetchError):
                outcome.message = self.scrub(outcome.message)
                outcome.args = (outcome.message,)
                futures[url].set_exception(outcome)
            else:
                futures[url].set_result(outcome)

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST the body, retrying 429/5xx; the decoded JSON object of a 2xx answer."""
        web = self.config.web
        where = f"{self.settings.base_url}{self.path}"
        waited = 0.0
        for attempt in range(web.max_retries + 1):
            try:
                response = await self._client.send(self._client.build_request("POST", self.path, json=body), stream=True)
            except httpx.TimeoutException:
                raise self.error(FetchTimeoutError, f"{self.name}: no answer from {where} within "
                                 f"{self.wait_s:g} s (web.{self.name}.timeout_s plus time to answer)") from None
            except httpx.HTTPError as exc:
                if (failure := verify_failure(exc)) is not None:
                    raise self.error(BackendError, f"{self.name}: cannot reach {where}: "
                                     f"{verify_message(failure, self.name)}") from None
                raise self.error(BackendError, f"{self.name}: cannot reach {where}: {type(exc).__name__}: "
                                 f"{exc or 'request failed'}") from None
            try:
                status = response.status_code
                if status >= 400:
                    message = provider_message(await self._read(response, where, clip_to=ERROR_BODY_BYTES))
                else:
                    raw = await self._read(response, where)
            finally:
                await response.aclose()
            if status == 429 or status >= 500:
                wait = retry_after_s(response.headers.get("retry-after"), attempt)
                if attempt < web.max_retries and waited + wait <= web.max_retry_wait_s:
                    await asyncio.sleep(wait)
                    waited += wait
                    continue
                note = (f"; gave up after {attempt} retries (web.max_retries, web.max_retry_wait_s)" if attempt
                        else "; not retried (web.max_retries 0 or the requested wait is over web.max_retry_wait_s)")
                raise self.error(BackendError, f"{self.name} answered HTTP {status}: {message}{note}", status=status)
            if status in (401, 403):
                raise self.error(BackendError, f"{self.name} refused the API key (HTTP {status}: "
                                 f"{message}); check web.{self.name}.api_key or {self.env_var}", status=status)
            if status >= 400:
                raise self.error(BackendError, f"{self.name} answered HTTP {status}: {message}", status=status)
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError):
                data = None
            if not isinstance(data, dict):
                shown = " ".join(raw[:400].decode("utf-8", errors="replace").split())[:200]
                raise self.error(BackendError, f"{self.name} answered HTTP {status} with a body that is not a JSON "
                                 f"object: {shown}")
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, response: httpx.Response, where: str, *, clip_to: int | None = None) -> bytes:
        """The answer's body within ``web.max_bytes`` (decoded size); a bigger one is ``too_large``
        naming the provider, never read whole into memory."""
        cap = self.config.web.max_bytes
        try:
            return await read_answer(response, cap, where, clip_to=clip_to)
        except httpx.TimeoutException:
            raise self.error(FetchTimeoutError, f"{self.name}: the answer from {where} stalled (no data within "
                             f"{self.wait_s:g} s)") from None
        except httpx.HTTPError as exc:
            raise self.error(BackendError, f"{self.name}: the answer from {where} broke off: {type(exc).__name__}") from None
        except TooLargeError:
            raise self.error(TooLargeError, f"{self.name}'s answer is larger than web.max_bytes ({cap:,} bytes, after "
                             "decompression); webshelf stopped reading it — raise web.max_bytes, or ask for fewer "
                             "URLs per call") from None

    def page(self, url: str, markdown: object, *, final_url: object = None, title: object = None,
             status: object = None) -> Outcome:
        """A Page from a provider's fields, or an error when it sent no text."""
        if not isinstance(markdown, str):
            return self.error(BackendError, f"{redact(url)}: {self.name} returned no Markdown for this URL", url)
        return Page(url=url, final_url=final_url if isinstance(final_url, str) and final_url else url,
                    markdown=markdown, title=title if isinstance(title, str) and title.strip() else None,
                    content_type="text/markdown", status=status if isinstance(status, int) else None)

    def target_status_error(self, url: str, status: int, detail: str | None = None) -> FetchError:
        return self.error(HTTPStatusError, f"{redact(url)}: the page answered HTTP {status} (reported by {self.name})"
                          + (f": {detail}" if detail else ""), url, status=status)

    def url_failed(self, url: str, detail: object) -> FetchError:
        text = " ".join(str(detail).split())[:300] if detail else "no reason given"
        return self.error(BackendError, f"{redact(url)}: {self.name} could not extract this URL: {text}", url)


def by_requested_url(urls: list[str], items: object, key: str = "url") -> dict[str, dict[str, Any]]:
    """Provider result items keyed by the URL we asked for (tolerating a trailing-slash difference)."""
    wanted = {u: u for u in urls} | {u.rstrip("/"): u for u in urls}
    found: dict[str, dict[str, Any]] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get(key), str):
            requested = wanted.get(item[key]) or wanted.get(item[key].rstrip("/"))
            if requested and requested not in found:
                found[requested] = item
    return found


__all__ = ["HostedBackend", "by_requested_url", "configured_key", "provider_message"]
