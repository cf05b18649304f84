"""Firecrawl: ``POST /v2/scrape``, one URL per request, requests run concurrently.

Checked 2026-11-29 against the firecrawl-py 4.55.0 SDK source (``firecrawl/v2/methods/aio/scrape.py``,
``v2/utils/validation.py: prepare_scrape_options``, ``v2/types.py: ScrapeOptions, PDFParser``,
``v2/utils/http_client_async.py``) for https://docs.firecrawl.dev/api-reference/endpoint/scrape
(the docs site itself could not be reached from this machine):

- auth ``Authorization: Bearer <key>``; body ``{url, formats: ["markdown"], onlyMainContent,
  removeBase64Images, maxAge (ms), timeout (ms), waitFor (ms, optional),
  parsers: [{type: "pdf", mode, maxPages}]}``;
- 200 ``{success: true, data: {markdown, metadata: {title, sourceURL, url, statusCode, error}}}``;
  errors ``{success: false, error, code?}`` with a 4xx/5xx status.

A target page that answered 4xx/5xx comes back as ``success: true`` with ``metadata.statusCode``;
that is a per-URL ``http_status`` error. Batch scrape (``/v2/batch/scrape`` + polling) is not used:
with one request per URL at ``web.concurrency`` in flight a call of ``web.max_urls`` (20) URLs
already takes ⌈20/8⌉ round trips (docs/benchmarks.md), and polling adds at least one interval.
"""

from __future__ import annotations

from typing import Any

from webshelf.core.backends.hosted import HostedBackend, Outcome
from webshelf.core.config import FirecrawlConfig


class FirecrawlBackend(HostedBackend):
    name = "firecrawl"
    env_var = "FIRECRAWL_API_KEY"
    path = "/v2/scrape"
    batch_size = 1

    def request_body(self, urls: list[str], *, max_age_s: int) -> dict[str, Any]:
        settings: FirecrawlConfig = self.settings  # type: ignore[assignment]
        body: dict[str, Any] = {
            "url": urls[0],
            "formats": ["markdown"],
            "onlyMainContent": settings.only_main_content,
            "removeBase64Images": settings.remove_base64_images,
            "maxAge": max_age_s * 1000,
            "timeout": int(settings.timeout_s * 1000),
            "parsers": [{"type": "pdf", "mode": settings.pdf_mode,
                         "maxPages": settings.pdf_max_pages or self.config.web.max_pdf_pages}],
        }
        if settings.wait_for_ms is not None:
            body["waitFor"] = settings.wait_for_ms
        return body

    def read_response(self, urls: list[str], data: dict[str, Any]) -> dict[str, Outcome]:
        url = urls[0]
        if data.get("success") is not True or not isinstance(data.get("data"), dict):
            return {url: self.url_failed(url, data.get("error") or "the answer has no data")}
        doc = data["data"]
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        status = meta.get("statusCode")
        if isinstance(status, int) and status >= 400:
            return {url: self.target_status_error(url, status, meta.get("error"))}
        return {url: self.page(url, doc.get("markdown"), final_url=meta.get("url") or meta.get("sourceURL"),
                               title=meta.get("title"), status=status)}


__all__ = ["FirecrawlBackend"]
