"""Exa: ``POST /contents`` with many URLs per request and per-URL ``statuses``.

Checked 2026-11-29 against the exa-py 2.28.0 SDK source (``exa_py/api.py``: ``get_contents``,
``CONTENTS_OPTIONS_TYPES``, ``TextContentsOptions``, ``ContentStatus``, ``to_camel_case``, the
``x-api-key`` header) for https://docs.exa.ai/reference/get-contents (the docs site itself could
not be reached from this machine):

- auth ``x-api-key: <key>``; body ``{urls, text: {includeHtmlTags: false, maxCharacters?},
  maxAgeHours, livecrawlTimeout? (ms)}`` — camelCase on the wire;
- 200 ``{requestId, results: [{id, url, title, text}], statuses: [{id, status: success|error,
  error: {tag, httpStatusCode}}]}``; errors ``{error}`` (or ``{message}``) with 4xx/5xx.

``maxAgeHours`` is whole hours: freshness below an hour is sent as 0 (always crawl live), never
rounded up to an older copy than ``cache.max_age`` allows. The batch size of 100 URLs is
webshelf's choice; the SDK documents no limit.
"""

from __future__ import annotations

from typing import Any

from webshelf.core.backends.hosted import HostedBackend, Outcome, by_requested_url
from webshelf.core.config import ExaConfig


class ExaBackend(HostedBackend):
    name = "exa"
    env_var = "EXA_API_KEY"
    path = "/contents"
    batch_size = 100
    auth_header = "x-api-key"
    auth_scheme = ""

    def request_body(self, urls: list[str], *, max_age_s: int) -> dict[str, Any]:
        settings: ExaConfig = self.settings  # type: ignore[assignment]
        text: dict[str, Any] = {"includeHtmlTags": False}
        if settings.max_characters is not None:
            text["maxCharacters"] = settings.max_characters
        body: dict[str, Any] = {"urls": urls, "text": text, "maxAgeHours": max_age_s // 3600}
        if settings.livecrawl_timeout_ms is not None:
            body["livecrawlTimeout"] = settings.livecrawl_timeout_ms
        return body

    def read_response(self, urls: list[str], data: dict[str, Any]) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        for url, status in by_requested_url(urls, data.get("statuses"), key="id").items():
            if status.get("status") == "success":
                continue
            error = status.get("error") if isinstance(status.get("error"), dict) else {}
            code = error.get("httpStatusCode")
            if isinstance(code, int) and code >= 400:
                outcomes[url] = self.target_status_error(url, code, error.get("tag"))
            else:
                outcomes[url] = self.url_failed(url, error.get("tag") or status.get("status"))
        for url, item in by_requested_url(urls, data.get("results")).items():
            if url not in outcomes:
                outcomes[url] = self.page(url, item.get("text"), final_url=item.get("url"), title=item.get("title"))
        return outcomes


__all__ = ["ExaBackend"]
