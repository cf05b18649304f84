"""One error tree for webshelf, so callers can catch broadly or precisely.

Every room (core, runtimes, mounts, cache) imports this module — it imports nothing of
webshelf — and raises these classes directly: there is no second tree and no conversion
layer. Every error carries a stable ``code`` (what an agent or a program switches on), the
context it happened in (``url``, ``path``, ``runtime``, ``key``, ``errno`` in ``.context``) and a
message a person or an agent can act on: what was wrong and what to do about it. Third-party
exceptions (httpx, sqlite3, OSError from the cache, yaml, pydantic, docker, requests, paramiko,
modal) are converted where they enter webshelf and never leak out.

    WebshelfError                      code
    ├── ConfigError                    config_invalid
    │   └── RuntimeConfigError         runtime_config_invalid (settings a sandbox kind cannot run with)
    ├── InputError                     invalid_input      (bad argument to an API call)
    ├── FetchError                     fetch_failed
    │   ├── InvalidURLError            invalid_url        (not an absolute http(s) URL)
    │   ├── BlockedURLError            blocked_url        (address policy, scheme, secrets)
    │   ├── TooLargeError              too_large
    │   ├── FetchTimeoutError          timeout
    │   ├── UnsupportedContentError    unsupported_content_type
    │   ├── ConversionTimeoutError     conversion_timeout (converting the body passed web.convert_timeout_s)
    │   ├── TooComplexError            too_complex        (the body needs more than web.convert_memory_mb / web.max_html_elements)
    │   ├── HTTPStatusError            http_status        (carries .context["status"])
    │   ├── TooManyRedirectsError      too_many_redirects (more than web.max_redirects hops)
    │   ├── BackendError               backend_error      (a hosted provider failed)
    │   ├── BlockedByRobotsError       blocked_by_robots  (web.robots_txt: obey and robots.txt disallows the URL)
    │   ├── ProxyError                 proxy_failed       (the configured proxy refused or could not be reached)
    │   ├── DocumentError              document_invalid   (a DOCX/PPTX/XLSX/EPUB/ODT file is corrupt or a zip bomb)
    │   └── NotSentToProviderError     not_sent_to_provider (a private/allow-listed/file URL kept off a provider)
    ├── CacheError                     cache_error        (an eviction, clear or verify pass failed)
    │   ├── CacheUnavailableError      cache_unavailable  (cache directory, lock or index cannot be opened)
    │   ├── CacheIndexError            cache_index_failed (a read or update of the SQLite index failed)
    │   ├── StoreError                 store_failed       (the full text could not be stored)
    │   ├── PathOutsideCacheError      path_outside_cache
    │   ├── PageNotFoundError          page_not_found     (missing or evicted page)
    │   └── OffsetPastEndError         offset_past_end
    ├── RuntimeAdapterError            runtime_error      (.runtime names the runtime)
    │   ├── RuntimeUnavailableError    runtime_unavailable (bwrap/SDK/daemon/image/host missing or gone)
    │   ├── RuntimeExecError           runtime_exec_failed (a command could not run; sandbox died)
    │   │   ├── RuntimeTimeoutError    runtime_timeout
    │   │   └── ReloadBusyError        runtime_reload_busy (modal: open files refused a Volume reload; retried)
    │   └── MountError                 mount_error        (verify/publish found the mount wrong)
    └── MissingPackageError            missing_package    (an optional package is needed)

``tests/test_errors.py`` checks that every class is drawn here with its code and that codes
are unique.

Errors echo what they were given (a path, a pattern, a URL, a tool name) so the reader knows
which one failed — but an argument can be megabytes, and the error goes to a model's context.
``clip`` is the one helper every error site uses to echo a value: long values keep their head
and tail with the count of characters left out. As a backstop, a message itself is clipped to
``MAX_MESSAGE_CHARS`` the same way, so no error is ever larger than that.
"""

from __future__ import annotations


ECHO_CHARS = 200  # the longest echo of one value in an error
MAX_MESSAGE_CHARS = 4_000  # the longest error message (a backstop behind ``clip``)


def clip(value: object, limit: int = ECHO_CHARS, *, quote: bool = False) -> str:
    """``value`` as text for an error (``repr`` when ``quote``), at most about ``limit`` characters:
    a longer one keeps its head and tail around ``…[N characters left out]…``."""
    text = repr(value) if quote else str(value)
    if len(text) <= limit:
        return text
    head = max(1, limit * 2 // 3)
    tail = max(1, limit - head)
    return f"{text[:head]}…[{len(text) - head - tail:,} characters left out]…{text[-tail:]}"


def _clip_context(value: object) -> object:
    return clip(value, MAX_MESSAGE_CHARS // 4) if isinstance(value, str) else value


class WebshelfError(Exception):
    """Root of every error webshelf raises on purpose.

    A class about one runtime sets ``names_runtime = True`` (``RuntimeAdapterError`` and
    ``RuntimeConfigError``, in two branches of the tree): its message then starts with
    ``runtime '<name>': `` (so a person knows which sandbox failed), ``.runtime`` is the name and
    ``.detail`` the message without that prefix. One flag read here, rather than a mixin each
    of those branches inherits besides its own base."""

    code = "webshelf_error"
    names_runtime = False

    def __init__(self, message: str, **context: object) -> None:
        if self.names_runtime:
            self.runtime: str | None = context.get("runtime")  # type: ignore[assignment]
            self.detail = message
            message = f"runtime {self.runtime!r}: {message}" if self.runtime else message
        message = clip(message, MAX_MESSAGE_CHARS)
        super().__init__(message)
        self.message = message
        self.context = {k: _clip_context(v) for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        return self.message


class ConfigError(WebshelfError):
    code = "config_invalid"


class RuntimeConfigError(ConfigError):
    """A runtime's settings cannot work (e.g. a mount path the sandbox kind forbids)."""

    code = "runtime_config_invalid"
    names_runtime = True


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


class ConversionTimeoutError(FetchError):
    """Converting one page to Markdown ran past ``web.convert_timeout_s``: its worker process was
    killed and replaced (core/convert/pool.py); the other URLs of the call are unaffected."""

    code = "conversion_timeout"


class TooComplexError(FetchError):
    """A page whose conversion would need more than its budget: more elements than
    ``web.max_html_elements`` (refused before any tree is built), or a worker that ran out of
    ``web.convert_memory_mb`` (killed and replaced)."""

    code = "too_complex"


class HTTPStatusError(FetchError):
    code = "http_status"


class TooManyRedirectsError(FetchError):
    code = "too_many_redirects"


class BackendError(FetchError):
    code = "backend_error"


class BlockedByRobotsError(FetchError):
    """``web.robots_txt: obey`` and the site's robots.txt disallows the URL; the message names the rule."""

    code = "blocked_by_robots"


class ProxyError(FetchError):
    """The proxy in ``web.proxy`` refused the request or could not be reached (its credentials never shown)."""

    code = "proxy_failed"


class DocumentError(FetchError):
    """An office document or e-book could not be read: corrupt, or over the zip-bomb limits."""

    code = "document_invalid"


class NotSentToProviderError(FetchError):
    """A URL only this machine should fetch (private, allow-listed, loopback, file://) that a hosted
    backend was asked for: it is never sent (core/backends/routing.py)."""

    code = "not_sent_to_provider"


class CacheError(WebshelfError):
    code = "cache_error"


class CacheUnavailableError(CacheError):
    """The cache cannot be opened: its directory, lock file or index (permissions, a full
    disk, a symlink where a directory belongs, a corrupt database)."""

    code = "cache_unavailable"


class CacheIndexError(CacheError):
    """A query or update of the SQLite index failed (locked, corrupt, read-only, disk full)."""

    code = "cache_index_failed"


class StoreError(CacheError):
    code = "store_failed"


class PathOutsideCacheError(CacheError):
    code = "path_outside_cache"


class PageNotFoundError(CacheError):
    code = "page_not_found"


class OffsetPastEndError(CacheError):
    code = "offset_past_end"


class RuntimeAdapterError(WebshelfError):
    """Raised by the runtime adapters (``webshelf.runtimes``) and by core about a runtime."""

    code = "runtime_error"
    names_runtime = True


class RuntimeUnavailableError(RuntimeAdapterError):
    code = "runtime_unavailable"


class RuntimeExecError(RuntimeAdapterError):
    code = "runtime_exec_failed"


class RuntimeTimeoutError(RuntimeExecError):
    code = "runtime_timeout"


class ReloadBusyError(RuntimeExecError):
    """Modal refused a Volume reload because files of the Volume are open inside the sandbox;
    the Modal runtime retries (``runtimes/modal/fleet.py``)."""

    code = "runtime_reload_busy"


class MountError(RuntimeAdapterError):
    code = "mount_error"


class MissingPackageError(WebshelfError):
    """An optional dependency (e.g. the MCP SDK) is not installed; the message names it."""

    code = "missing_package"
