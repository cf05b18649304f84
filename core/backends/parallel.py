"""Parallel: the GA extract endpoint ``POST /v1/extract`` with full content, up to 20 URLs a request.

Checked 2026-11-29 against the parallel-web 1.3.7 SDK source (``parallel/_client.py: extract``
posts to ``/v1/extract`` with ``x-api-key``; ``types/client_extract_params.py``,
``advanced_extract_settings_param.py``, ``fetch_policy_param.py``, ``full_content_settings_param.py``,
``extract_response.py``, ``extract_result.py``, ``extract_error.py``, ``shared/error_response.py``)
for https://docs.parallel.ai/api-reference/extract (the docs site itself could not be reached):

- body ``{urls (≤ 20), advanced_settings: {full_content: true | {max_chars_per_result},
  fetch_policy: {max_age_seconds (≥ 600), timeout_seconds, disable_cache_fallback}}}``;
- 200 ``{extract_id, results: [{url, title, publish_date, excerpts, full_content}],
  errors: [{url, error_type, http_status_code, content}], warnings, usage, session_id}``;
  errors ``{type: "error", error: {message, ref_id, detail}}`` with 4xx/5xx.

Parallel's smallest ``max_age_seconds`` is 600: a fresher request (``fresh=True`` or
``cache.max_age`` under 10 minutes) is sent as 600, the freshest Parallel offers.
"""

from __future__ import annotations

from typing import Any

from webshelf.core.backends.hosted import HostedBackend, Outcome, by_requested_url
from webshelf.core.config import ParallelConfig

MAX_URLS_PER_REQUEST = 20
MIN_MAX_AGE_S = 600


class ParallelBackend(HostedBackend):
    name = "parallel"
    env_var = "PARALLEL_API_KEY"
    path = "/v1/extract"
    batch_size = MAX_URLS_PER_REQUEST
    auth_header = "x-api-key"
    auth_scheme = ""

    def request_body(self, urls: list[str], *, max_age_s: int) -> dict[str, Any]:
        settings: ParallelConfig = self.settings  # type: ignore[assignment]
        full: bool | dict[str, int] = True
        if settings.max_chars_per_result is not None:
            full = {"max_chars_per_result": settings.max_chars_per_result}
        return {"urls": urls, "advanced_settings": {
            "full_content": full,
            "fetch_policy": {"max_age_seconds": max(MIN_MAX_AGE_S, max_age_s),
                             "timeout_seconds": settings.timeout_s,
                             "disable_cache_fallback": settings.disable_cache_fallback},
        }}

    def read_response(self, urls: list[str], data: dict[str, Any]) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        for url, error in by_requested_url(urls, data.get("errors")).items():
            code = error.get("http_status_code")
            if isinstance(code, int) and code >= 400:
                outcomes[url] = self.target_status_error(url, code, error.get("error_type"))
            else:
                outcomes[url] = self.url_failed(url, error.get("error_type"))
        for url, item in by_requested_url(urls, data.get("results")).items():
            outcomes[url] = self.page(url, item.get("full_content"), final_url=item.get("url"), title=item.get("title"))
        return outcomes


__all__ = ["ParallelBackend"]
