"""One error tree for webshelf, so callers can catch broadly or precisely.

Every error carries a stable ``code`` (what an agent or a program switches on), the
context it happened in (url, path, runtime, key) and a message a person or an agent can
act on: what was wrong and what to do about it. Third-party exceptions (httpx, sqlite,
yaml, SDKs) are converted where they enter webshelf and never leak out.

    WebshelfError                      code
    ├── ConfigError                    config_invalid
    ├── InputError                     invalid_input      (bad argument to an API call)
    ├── FetchError                     fetch_failed
    │   ├── InvalidURLError            invalid_url        (not an absolute http(s) URL)
    │   ├── BlockedURLError            blocked_url        (address policy, scheme, secrets)
    │   ├── TooLargeError              too_large
    │   ├── FetchTimeoutError          timeout
    │   ├── UnsupportedContentError    unsupported_content_type
    │   ├── HTTPStatusError            http_status        (carries .context["status"])
    │   ├── TooManyRedirectsError      too_many_redirects (more than web.max_redirects hops)
    │   ├── BackendError               backend_error      (a hosted provider failed)
    │   └── NotSentToProviderError     not_sent_to_provider (a private/allow-listed/file URL kept off a provider)
    ├── CacheError                     cache_error
    │   ├── PathOutsideCacheError      path_outside_cache
    │   ├── PageNotFoundError          page_not_found     (missing or evicted page)
    │   ├── OffsetPastEndError         offset_past_end
    │   └── StoreError                 store_failed       (the full text could not be stored)
    ├── RuntimeAdapterError            runtime_error
    │   ├── RuntimeUnavailableError    runtime_unavailable (bwrap/SDK/daemon/image missing)
    │   ├── RuntimeExecError           runtime_exec_failed (a command could not run; sandbox died)
    │   ├── RuntimeTimeoutError        runtime_timeout
    │   └── MountError                 mount_error
    └── MissingPackageError            missing_package    (an optional package is needed)
"""

from __future__ import annotations


class WebshelfError(Exception):
    """Root of every error webshelf raises on purpose."""

    code = "webshelf_error"

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        return self.message


class ConfigError(WebshelfError):
    code = "config_invalid"


class InputError(WebshelfError):
    code = "invalid_input"


class FetchError(WebshelfError):
    code = "fetch_failed"


class InvalidURLError(FetchError):
    code = "invalid_url"


class BlockedURLError(FetchError):
    code = "blocked_url"


class TooLargeError(FetchError):
    code = "too_large"


class FetchTimeoutError(FetchError):
    code = "timeout"


class UnsupportedContentError(FetchError):
    code = "unsupported_content_type"


class HTTPStatusError(FetchError):
    code = "http_status"


class TooManyRedirectsError(FetchError):
    code = "too_many_redirects"


class BackendError(FetchError):
    code = "backend_error"


class NotSentToProviderError(FetchError):
    """A URL only this machine should fetch (private, allow-listed, loopback, file://) that a hosted
    backend was asked for: it is never sent (core/backends/routing.py)."""

    code = "not_sent_to_provider"


class CacheError(WebshelfError):
    code = "cache_error"


class PathOutsideCacheError(CacheError):
    code = "path_outside_cache"


class PageNotFoundError(CacheError):
    code = "page_not_found"


class OffsetPastEndError(CacheError):
    code = "offset_past_end"


class StoreError(CacheError):
    code = "store_failed"


class RuntimeAdapterError(WebshelfError):
    code = "runtime_error"


class MountError(RuntimeAdapterError):
    code = "mount_error"


class RuntimeUnavailableError(RuntimeAdapterError):
    code = "runtime_unavailable"


class RuntimeExecError(RuntimeAdapterError):
    code = "runtime_exec_failed"


class RuntimeTimeoutError(RuntimeAdapterError):
    code = "runtime_timeout"


class MissingPackageError(WebshelfError):
    """An optional dependency (e.g. the MCP SDK) is not installed; the message names it."""

    code = "missing_package"
