"""The request headers a page request carries: User-Agent, Accept-Language, the operator's extras.

``web.user_agent`` names webshelf to the sites it reads, ``web.languages`` becomes one
``Accept-Language`` header with falling q-values, and ``web.headers`` adds the rest. Headers that
belong to the connection or to webshelf's own safety machinery (``Host``, ``Content-Length``,
``Accept-Encoding`` — the bomb-safe decoder only handles what webshelf asks for — hop-by-hop and
``Proxy-*`` headers) cannot be set: an invalid request or a way around a rule is refused at load.
The browser backend sends the same ``Accept-Language`` on every request and ``web.headers`` on the
page's own document requests (core/backends/browser/backend.py), with Chromium's User-Agent.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_LANGUAGE = re.compile(r"^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$")
FORBIDDEN = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
             "accept-encoding", "proxy-authorization", "proxy-connection", "cookie2", "expect"}
OWN_KEY = {"user-agent": "web.user_agent", "accept-language": "web.languages"}


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    """``web.headers`` as given, or ValueError naming the header and what to do."""
    for name, value in headers.items():
        if not _TOKEN.match(name):
            raise ValueError(f"header name {name!r} is not a valid HTTP header name")
        lower = name.lower()
        if lower in OWN_KEY:
            raise ValueError(f"set {name} with {OWN_KEY[lower]}, not in web.headers")
        if lower in FORBIDDEN or lower.startswith("proxy-"):
            raise ValueError(f"header {name!r} cannot be set: webshelf manages it for the connection "
                             "(proxy credentials go in the web.proxy URL)")
        if not isinstance(value, str) or any(c in value for c in "\r\n\x00"):
            raise ValueError(f"header {name!r}: the value must be one line of text")
    return dict(headers)


def check_language(tag: str) -> str:
    """One ``web.languages`` entry: a language tag like ``en``, ``en-GB`` or ``*``."""
    tag = tag.strip()
    if not _LANGUAGE.match(tag):
        raise ValueError(f"{tag!r} is not a language tag; write it like en, en-GB or pt-BR")
    return tag


def accept_language(languages: list[str]) -> str | None:
    """``[en-GB, en, fr]`` → ``en-GB,en;q=0.9,fr;q=0.8`` (q never below 0.1)."""
    if not languages:
        return None
    parts = [languages[0]] + [f"{tag};q={max(0.1, 1 - 0.1 * i):.1f}" for i, tag in enumerate(languages[1:], 1)]
    return ",".join(parts)


def request_headers(web: object) -> dict[str, str]:
    """User-Agent, Accept-Language (when ``web.languages`` is set) and ``web.headers``, in that order."""
    out = {"User-Agent": web.user_agent}  # type: ignore[attr-defined]
    if language := accept_language(list(web.languages)):  # type: ignore[attr-defined]
        out["Accept-Language"] = language
    out.update(web.headers)  # type: ignore[attr-defined]
    return out


__all__ = ["accept_language", "check_headers", "check_language", "request_headers"]
