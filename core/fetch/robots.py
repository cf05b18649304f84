"""``web.robots_txt: obey``: refuse a URL its site's robots.txt disallows, naming the rule.

Off by default (``ignore``), like the agents webshelf replaces; ``obey`` is what the MCP
reference fetch server does for model-initiated fetches. robots.txt is parsed by ``protego``
(Scrapy's parser: RFC 9309 longest-match, ``*`` and ``$`` patterns) and kept per origin in this
process for ``cache.max_age``, so twenty URLs of one site cost one robots.txt request. It is
fetched by the backend's own fetch path — the address policy, the proxy, the byte cap, the
redirects — never around them. RFC 9309 says what a missing file means: 4xx (not found, gone,
forbidden) allows everything, 5xx means "assume complete disallow". A robots.txt that cannot be
fetched at all (connection refused, timeout) allows the URL, so the page's own fetch reports the
real problem. The user-agent matched is ``web.user_agent``'s product token (``webshelf``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from webshelf.errors import BlockedByRobotsError, FetchError, HTTPStatusError

ROBOTS_MAX_BYTES = 500_000  # RFC 9309: parse at least the first 500 KiB


@dataclass
class _Entry:
    at: float
    parser: object | None  # a Protego, or None: everything allowed
    refusal: str | None  # a reason everything is refused (5xx)


_CACHE: dict[str, _Entry] = {}
_LOADING: dict[tuple[int, str], asyncio.Lock] = {}
_LOCK = threading.Lock()


def _fresh(origin: str, max_age_s: float) -> _Entry | None:
    with _LOCK:
        entry = _CACHE.get(origin)
    return entry if entry is not None and time.monotonic() - entry.at <= max_age_s else None

Fetch = Callable[[str], Awaitable[bytes]]


def agent_token(user_agent: str) -> str:
    """``webshelf/0.1 (+https://…)`` → ``webshelf``: robots.txt groups match the product token."""
    return (user_agent.split("/", 1)[0].split() or ["*"])[0]


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower().rpartition('@')[2]}"


def _parse(text: str) -> object:
    try:
        from protego import Protego
    except ImportError:
        from webshelf.errors import MissingPackageError

        raise MissingPackageError("web.robots_txt: obey needs the protego package: pip install protego",
                                  package="protego") from None
    return Protego.parse(text)


def _rule(parser: object, url: str, agent: str) -> tuple[str, str]:
    """(group, rule) that disallowed ``url`` — from protego's rule set, '?' if its internals moved."""
    try:
        rule_set = parser._get_matching_rule_set(agent)  # type: ignore[attr-defined]
        from protego._utils import _quote_path  # noqa: PLC2701 — the path form protego matched

        path = _quote_path(url)
        for rule in rule_set._rules:
            if rule.value.match(path):
                return rule_set.user_agent or "*", f"{rule.field.capitalize()}: {rule.value._pattern}"
    except Exception:  # noqa: BLE001 — naming the rule is a courtesy; the decision stands
        pass
    return "?", "Disallow: ?"


async def check_robots(url: str, *, user_agent: str, max_age_s: float, fetch: Fetch) -> None:
    """Raise ``BlockedByRobotsError`` when the site's robots.txt disallows ``url`` for ``user_agent``."""
    origin = origin_of(url)
    robots_url = origin + "/robots.txt"
    if urlsplit(url).path == "/robots.txt":
        return
    entry = _fresh(origin, max_age_s)
    if entry is None:
        with _LOCK:  # one robots.txt request per origin, however many of its URLs arrive at once
            key = (id(asyncio.get_running_loop()), origin)
            loading = _LOADING.setdefault(key, asyncio.Lock())
        async with loading:
            entry = _fresh(origin, max_age_s)
            if entry is None:
                entry = await _load(robots_url, fetch)
                with _LOCK:
                    _CACHE[origin] = entry
    agent = agent_token(user_agent)
    how = "web.robots_txt is obey; set it to ignore to fetch anyway"
    if entry.refusal:
        raise BlockedByRobotsError(f"{url}: refused: {robots_url} {entry.refusal}, which RFC 9309 reads as "
                                   f"'disallow everything' ({how})", url=url, rule="*")
    if entry.parser is not None and not entry.parser.can_fetch(url, agent):  # type: ignore[attr-defined]
        group, rule = _rule(entry.parser, url, agent)
        raise BlockedByRobotsError(f"{url}: refused by {robots_url}: the rule '{rule}' in the group for "
                                   f"user-agent '{group}' matches this URL for '{agent}' ({how})", url=url, rule=rule)


async def _load(robots_url: str, fetch: Fetch) -> _Entry:
    now = time.monotonic()
    try:
        body = await fetch(robots_url)
    except HTTPStatusError as exc:
        status = int(exc.context.get("status") or 0)
        if status >= 500:
            return _Entry(now, None, f"answered HTTP {status}")
        return _Entry(now, None, None)  # 4xx: no rules
    except FetchError:
        return _Entry(now, None, None)  # unreachable: let the page's own fetch say why
    return _Entry(now, _parse(body[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace")), None)


def forget() -> None:
    """Drop every cached robots.txt (tests)."""
    with _LOCK:
        _CACHE.clear()
        _LOADING.clear()


__all__ = ["agent_token", "check_robots", "forget"]
