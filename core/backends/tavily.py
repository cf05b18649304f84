"""Tavily: ``POST /extract`` with up to 20 URLs per request; larger sets are split.

Checked 2026-11-29 against the tavily-python 0.8.5 SDK source (``tavily/async_tavily.py``:
``_extract``, ``extract``, ``_handle_error_response``) for https://docs.tavily.com/documentation/api-reference/endpoint/extract
(the docs site itself could not be reached from this machine):

- auth ``Authorization: Bearer <key>``; body ``{urls, extract_depth: basic|advanced,
  format: markdown, timeout (s, 1–60), include_images}``;
- 200 ``{results: [{url, raw_content, images}], failed_results: [{url, error}], response_time}``;
  errors ``{detail: {error}}`` with 400/401/403/429/432/433/5xx.

Tavily's extract has no cache-age parameter, so ``cache.max_age`` cannot be sent to it; the
20-URL limit per request is from Tavily's documentation as quoted by the lead, not the SDK.
"""

from __future__ import annotations

from typing import Any

from webshelf.core.backends.hosted import HostedBackend, Outcome, by_requested_url
from webshelf.core.config import TavilyConfig

MAX_URLS_PER_REQUEST = 20


class TavilyBackend(HostedBackend):
    name = "tavily"
    env_var = "TAVILY_API_KEY"
    path = "/extract"
    batch_size = MAX_URLS_PER_REQUEST

    def request_body(self, urls: list[str], *, max_age_s: int) -> dict[str, Any]:  # no cache-age parameter
        settings: TavilyConfig = self.settings  # type: ignore[assignment]
        return {"urls": urls, "extract_depth": settings.extract_depth, "format": "markdown",
                "timeout": settings.timeout_s, "include_images": False}

    def read_response(self, urls: list[str], data: dict[str, Any]) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        for url, item in by_requested_url(urls, data.get("failed_results")).items():
            outcomes[url] = self.url_failed(url, item.get("error"))
        for url, item in by_requested_url(urls, data.get("results")).items():
            outcomes[url] = self.page(url, item.get("raw_content"), final_url=item.get("url"), title=item.get("title"))
        return outcomes


__all__ = ["TavilyBackend"]
