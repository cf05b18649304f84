"""The reuse key of a URL: the same page however the URL was spelled.

Reuse and page names are keyed by this form, so ``HTTP://Example.com:80/a#intro`` and
``http://example.com/a`` share one stored copy. Only changes that cannot alter what a server
returns are made: scheme and host lower-cased, the default port dropped, an empty path
made ``/``, the fragment (never sent to the server) removed. Query and path are kept as is.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """``url`` in its reuse-key form; a URL that cannot be parsed is returned stripped."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal: keep its brackets
        host = f"[{host}]"
    netloc = host
    if parts.username is not None:
        auth = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{auth}@{host}"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    path = parts.path or ("/" if netloc else "")
    return urlunsplit((scheme, netloc, path, parts.query, ""))
