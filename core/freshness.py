"""How old a provider's cached copy of a page may be: one number, read from one place.

Hosted providers keep their own caches (Firecrawl ``maxAge``, Exa ``maxAgeHours``, Parallel
``fetch_policy.max_age_seconds``). webshelf sends its own freshness to each of them explicitly, so
the age of what an agent reads does not depend on which provider fetched it. The number is
``cache.max_age`` — the same setting that governs reuse of webshelf's own stored copies — and
``fresh=True`` asks for a live fetch (0).
"""

from __future__ import annotations

from webshelf.core.config import Config


def max_age_s(config: Config, *, fresh: bool = False) -> int:
    """Seconds a stored copy (ours or a provider's) may be old; 0 when ``fresh``."""
    return 0 if fresh else max(0, int(config.cache.max_age))


__all__ = ["max_age_s"]
