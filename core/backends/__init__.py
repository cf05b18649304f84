"""Registry of backends by the name used in config (``web.backend``) and on the CLI.

Implementations are imported only when chosen, so an optional dependency of one backend
never breaks another.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

from core.backends.base import Backend
from core.config import Config
from core.errors import ConfigError

BACKENDS: dict[str, str] = {
    "local": "core.backends.local:LocalBackend",
    "firecrawl": "core.backends.firecrawl:FirecrawlBackend",
    "tavily": "core.backends.tavily:TavilyBackend",
    "exa": "core.backends.exa:ExaBackend",
    "parallel": "core.backends.parallel:ParallelBackend",
}
# Hosted providers in the order the selection rule tries them, with their usual key variable.
HOSTED_KEYS: dict[str, str] = {
    "firecrawl": "FIRECRAWL_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "exa": "EXA_API_KEY",
    "parallel": "PARALLEL_API_KEY",
}


@dataclass(frozen=True)
class BackendStatus:
    name: str
    usable: bool
    why: str


def key_source(name: str, config: Config) -> str | None:
    """Where a hosted provider's key comes from (never the key itself), or None."""
    settings = getattr(config.web, name)
    if settings.api_key is not None and settings.api_key.get_secret_value().strip():
        return f"web.{name}.api_key"
    if os.environ.get(HOSTED_KEYS[name], "").strip():
        return HOSTED_KEYS[name]
    return None


def select_backend(config: Config, override: str | None = None) -> str:
    """The per-call ``backend=``, else ``web.extract_backend``, else ``web.backend``, else the
    first hosted provider whose key is present, else ``local``."""
    for chosen in (override, config.web.extract_backend, config.web.backend):
        if chosen:
            return chosen
    return next((name for name in HOSTED_KEYS if key_source(name, config)), "local")


def backend_status(config: Config) -> list[BackendStatus]:
    """Every backend, whether it can be used now and why (not)."""
    rows = [BackendStatus("local", True, "fetches and converts on this machine; no key needed")]
    for name, env_var in HOSTED_KEYS.items():
        source = key_source(name, config)
        where = getattr(config.web, name).base_url
        rows.append(BackendStatus(name, True, f"key from {source}; API {where}") if source else
                    BackendStatus(name, False, f"no API key: set web.{name}.api_key or {env_var}"))
    return rows


def check_backend(name: str) -> str:
    """``name`` if a backend is registered under it, else a ConfigError listing the choices."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of: {', '.join(sorted(BACKENDS))}", key="web.backend")
    return name


def get_backend(name: str, config: Config) -> Backend:
    module, _, cls = BACKENDS[check_backend(name)].partition(":")
    return getattr(importlib.import_module(module), cls)(config)


__all__ = ["BACKENDS", "Backend", "BackendStatus", "backend_status", "check_backend", "get_backend", "select_backend"]
