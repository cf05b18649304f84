"""Registry of backends by the name used in config (``web.backend``) and on the CLI.

Implementations are imported only when chosen, so an optional dependency of one backend
never breaks another.
"""

from __future__ import annotations

import importlib

from core.backends.base import Backend
from core.config import Config
from core.errors import ConfigError

BACKENDS: dict[str, str] = {
    "local": "core.backends.local:LocalBackend",
}


def get_backend(name: str, config: Config) -> Backend:
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ConfigError(f"unknown backend {name!r}; choose one of: {', '.join(sorted(BACKENDS))}", key="web.backend") from None
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)(config)


__all__ = ["BACKENDS", "Backend", "get_backend"]
