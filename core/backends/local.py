"""The local backend: fetch with httpx on this machine, convert here, no API key needed.

One ``httpx.AsyncClient`` per call serves every URL (shared connection pool, HTTP keep-alive),
with redirects followed, gzip/brotli decoding and a User-Agent that says who we are.
Conversion (CPU-bound) runs in a worker thread so that it never stalls other fetches.
"""

from __future__ import annotations

import asyncio

import httpx

from core.backends.base import Backend
from core.config import Config
from core.convert import to_markdown
from core.errors import FetchError, FetchTimeoutError, HTTPStatusError
from core.models import Page

MAX_REDIRECTS = 5


class LocalBackend(Backend):
    name = "local"

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        web = config.web
        self._client = httpx.AsyncClient(
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
            timeout=httpx.Timeout(web.timeout_s),
            headers={"User-Agent": web.user_agent, "Accept": "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"},
            limits=httpx.Limits(max_connections=web.concurrency, max_keepalive_connections=web.concurrency),
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> Page:
        try:
            async with self.gate:
                response = await asyncio.wait_for(self._client.get(url), self.config.web.timeout_s)
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise FetchTimeoutError(f"{url}: no complete response within {self.config.web.timeout_s:g} s (web.timeout_s)", url=url) from None
        except httpx.TooManyRedirects:
            raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects", url=url) from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{url}: {type(exc).__name__}: {exc or 'request failed'}", url=url) from None
        if response.status_code >= 400:
            raise HTTPStatusError(
                f"{url}: HTTP {response.status_code} {response.reason_phrase}", url=url, status=response.status_code
            )
        final_url = str(response.url)
        converted = await asyncio.to_thread(to_markdown, response.content, response.headers.get("content-type"), final_url)
        return Page(url=url, final_url=final_url, markdown=converted.markdown, title=converted.title,
                    content_type=converted.content_type, status=response.status_code)
