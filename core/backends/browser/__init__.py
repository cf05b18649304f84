"""The browser backend (``web.backend: browser``, and a step of ``web.fallback``).

``backend`` renders and converts, ``proxy`` is the policy proxy every browser request passes,
``lifecycle`` finds, launches and restarts Chromium, ``service`` keeps one browser per process
(its own thread and loop, shared by every call, closed when idle, at exit and on SIGTERM). Playwright is imported only when a page is
rendered, so webshelf without the ``browser`` extra still imports this package.
"""

from webshelf.core.backends.browser.lifecycle import browser_available

__all__ = ["browser_available"]
