"""One validation per URL: a URL string becomes a ``CheckedURL`` once, and only that value goes on.

Before, one cache miss passed two different ``check_url`` functions five times (the pipeline's
syntax check three times, the address policy once in the reuse step and once more in the local
backend) — the same rules in several places that could drift apart. Now ``validate`` is the one
place a URL string is judged, in two steps, always in this order:

1. syntax — an absolute ``http(s)`` URL with a host, a port in range, or a ``file://`` URL
   (``InvalidURLError``: "write it like https://example.com/page");
2. the DNS-free address policy of core/fetch/netpolicy.py — scheme, credentials in the URL,
   reserved names, IP literals in any spelling, ``web.allow_file_urls`` (``BlockedURLError``).

The pipeline (core/extract.py) validates every input URL before anything else and hands the
``CheckedURL`` to the cache lookup, the routing of hosted backends and the backend's
``fetch_many``; none of them checks the string again. A backend used directly with a plain string
validates it itself, once (``Backend.check``). Two checks are *not* validation of the input
string and stay where they are: each redirect target is a new URL and passes the policy when it
is followed (core/backends/local.py), and the connection checks every address DNS returned
(core/fetch/guarded_connect.py), so a rebinding DNS server gets no second chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from webshelf.core.fetch import netpolicy
from webshelf.errors import InvalidURLError, clip

EXAMPLE = "write it like https://example.com/page"
MAX_URL_CHARS = 16_384  # far past real URLs (browsers and CDNs cut at 8–16 KB); a 5 MB "URL" is an attack


@dataclass(frozen=True)
class CheckedURL:
    """A URL that passed ``validate`` under the policy in force; ``str()`` is the URL itself."""

    url: str
    scheme: str  # lower-case: "http", "https" or "file"
    host: str | None  # lower-case, without a trailing dot; None for file:// URLs

    @property
    def is_file(self) -> bool:
        return self.scheme == "file"

    def __str__(self) -> str:
        return self.url


def _syntax(url: str) -> tuple[str, str | None]:
    if len(url) > MAX_URL_CHARS:
        raise InvalidURLError(f"{clip(url, quote=True)} is {len(url):,} characters long; webshelf accepts URLs of "
                              f"up to {MAX_URL_CHARS:,} characters", url=url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — raises ValueError for a port that is not a number in range
    except ValueError as exc:
        raise InvalidURLError(f"{clip(url, quote=True)} is not a valid URL ({exc}); {EXAMPLE}", url=url) from None
    scheme = parts.scheme.lower()
    if scheme == "file":
        return scheme, None  # web.allow_file_urls below; web.file_dirs when the file is read
    if scheme not in ("http", "https") or not parts.hostname:
        raise InvalidURLError(f"{clip(url, quote=True)} is not an absolute http(s) URL; {EXAMPLE}", url=url)
    return scheme, parts.hostname.lower().rstrip(".")


def validate(url: str, policy: netpolicy.Policy) -> CheckedURL:
    """The checked value of ``url``, or ``InvalidURLError`` / ``BlockedURLError`` saying why not
    and what to do. No DNS lookup: the local backend's connection checks the addresses."""
    scheme, host = _syntax(url)
    netpolicy.check_url(url, policy)
    return CheckedURL(url=url, scheme=scheme, host=host)


__all__ = ["CheckedURL", "validate"]
