"""How old a provider's cached copy of a page may be: one number, read from one place.

Hosted providers keep their own caches (Firecrawl ``maxAge``, Exa ``maxAgeHours``, Parallel
``fetch_policy.max_age_seconds``). webshelf sends its own freshness to each of them explicitly, so
the age of what an agent reads does not depend on which provider fetched it. The number comes
from ``cache.max_age`` (the cache-lifecycle section) when that section exists, else 15 minutes;
``fresh=True`` asks for a live fetch (0).
"""

from __future__ import annotations

from datetime import timedelta

from core.config import Config

DEFAULT_MAX_AGE_S = 15 * 60


def _seconds(value: object) -> int | None:
    if isinstance(value, timedelta):
        return int(value.total_seconds())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    return None


def max_age_s(config: Config, *, fresh: bool = False) -> int:
    """Seconds a stored copy (ours or a provider's) may be old; 0 when ``fresh``."""
    if fresh:
        return 0
    cache = getattr(config, "cache", None)
    for name in ("max_age_s", "max_age"):
        seconds = _seconds(getattr(cache, name, None))
        if seconds is not None:
            return max(0, seconds)
    return DEFAULT_MAX_AGE_S


__all__ = ["DEFAULT_MAX_AGE_S", "max_age_s"]
