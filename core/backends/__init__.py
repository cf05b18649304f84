"""Registry of backends by the name used in config (``web.backend``) and on the CLI.

Implementations are imported only when chosen, so an optional dependency of one backend
never breaks another, and nothing of the fetch path loads for a call served from the shelf. Which backend a call uses is decided in ``selection`` (a key alone never
switches it); which URLs a hosted backend may be sent is decided in ``routing``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from typing import TYPE_CHECKING, Any

from webshelf.core.backends.selection import (AUTO, HOSTED_KEYS, Selection, auto_pick, key_problem, key_source,
                                     require_key, select_backend, selection)
from webshelf.core.config import Config
from webshelf.errors import ConfigError

if TYPE_CHECKING:  # the seam (asyncio, the fetch rules) loads with a backend, not with the registry
    from webshelf.core.backends.base import Backend

BACKENDS: dict[str, str] = {
    "local": "webshelf.core.backends.local:LocalBackend",
    "browser": "webshelf.core.backends.browser.backend:BrowserBackend",
    "firecrawl": "webshelf.core.backends.firecrawl:FirecrawlBackend",
    "tavily": "webshelf.core.backends.tavily:TavilyBackend",
    "exa": "webshelf.core.backends.exa:ExaBackend",
    "parallel": "webshelf.core.backends.parallel:ParallelBackend",
}
CHOICES = (AUTO, *BACKENDS)


@dataclass(frozen=True)
class BackendStatus:
    name: str
    usable: bool
    why: str


def backend_status(config: Config) -> list[BackendStatus]:
    """Every backend, whether it can be used now and why (not)."""
    rows = [BackendStatus("local", True, "fetches and converts on this machine; no key needed")]
    from webshelf.core.backends.browser.lifecycle import require_browser

    try:
        chromium = require_browser(config.web.browser.executable_path)
        rows.append(BackendStatus("browser", True, f"renders JavaScript in {chromium}; no key needed"))
    except ConfigError as exc:
        rows.append(BackendStatus("browser", False, exc.message))
    for name, env_var in HOSTED_KEYS.items():
        try:  # a section or api_key naming an unset ${VAR} raises its deferred error
            settings = getattr(config.web, name)
            settings.api_key  # noqa: B018
        except ConfigError as exc:
            rows.append(BackendStatus(name, False, exc.message))
            continue
        source = key_source(name, config)
        rows.append(BackendStatus(name, True, f"key from {source}; API {settings.base_url}") if source else
                    BackendStatus(name, False, f"no API key: set web.{name}.api_key or {env_var}"))
    return rows


def check_backend(name: str) -> str:
    """``name`` if a backend is registered under it, else a ConfigError listing the choices."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of: {', '.join(CHOICES)}", key="web.backend")
    return name


def get_backend(name: str, config: Config) -> Backend:
    module, _, cls = BACKENDS[check_backend(name)].partition(":")
    return getattr(importlib.import_module(module), cls)(config)


def __getattr__(name: str) -> Any:
    """``Backend`` on first use (PEP 562): ``backend list``, the selection checks and a call
    served from the shelf never need the seam's imports (issue 15)."""
    if name == "Backend":
        from webshelf.core.backends.base import Backend

        return Backend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AUTO", "BACKENDS", "CHOICES", "HOSTED_KEYS", "Backend", "BackendStatus", "Selection", "auto_pick",
           "backend_status", "check_backend", "get_backend", "key_problem", "key_source", "require_key",
           "select_backend", "selection"]
