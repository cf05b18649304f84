"""Which backend a call uses, and why — a provider key alone never changes it.

The rule: the per-call ``backend=`` (``--backend``), else ``web.extract_backend``, else
``web.backend``, whose default is ``local``. Only the explicit value ``auto`` looks at keys: it
picks the first of firecrawl, tavily, exa, parallel whose key is present, else ``local``.
Exporting ``FIRECRAWL_API_KEY`` for some other tool must not silently send every page —
intranet ones included — to a third party, so a key is used only where the user chose it.

Keys come from ``web.<provider>.api_key`` or the provider's usual environment variable. A key
that names an unset ``${VAR}`` is a deferred config error (core/config.py): ``key_problem``
reports it as the reason the provider is unusable, and ``require_key`` raises it, the same
way whether a page is then fetched or served from the cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from webshelf.core.config import Config, HostedBackendConfig
from webshelf.errors import ConfigError

AUTO = "auto"
# Hosted providers in the order ``auto`` tries them, with their usual key variable.
HOSTED_KEYS: dict[str, str] = {
    "firecrawl": "FIRECRAWL_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "exa": "EXA_API_KEY",
    "parallel": "PARALLEL_API_KEY",
}


@dataclass(frozen=True)
class Selection:
    """The backend in force for a call, what asked for it, and a sentence saying why."""

    name: str  # ``auto`` already resolved
    requested: str  # the value that decided: a backend name or ``auto``
    source: str  # "backend=", "web.extract_backend" or "web.backend"
    why: str


def configured_key(settings: HostedBackendConfig, env_var: str) -> str | None:
    """The API key from the config section, else from the provider's environment variable.
    Raises the deferred ConfigError when ``api_key`` names an unset ``${VAR}``."""
    if settings.api_key is not None and settings.api_key.get_secret_value().strip():
        return settings.api_key.get_secret_value().strip()
    return os.environ.get(env_var, "").strip() or None


def key_source(name: str, config: Config) -> str | None:
    """Where a hosted provider's key comes from (never the key itself), or None (also when the
    configured key names an unset variable: see ``key_problem``)."""
    try:
        settings = getattr(config.web, name)
        if settings.api_key is not None and settings.api_key.get_secret_value().strip():
            return f"web.{name}.api_key"
    except ConfigError:
        return None
    return HOSTED_KEYS[name] if os.environ.get(HOSTED_KEYS[name], "").strip() else None


def missing_key_error(name: str) -> ConfigError:
    env_var = HOSTED_KEYS[name]
    return ConfigError(f"the {name} backend needs an API key: set web.{name}.api_key (e.g. '${{{env_var}}}') "
                       f"or the environment variable {env_var}", key=f"web.{name}.api_key")


def require_key(name: str, config: Config) -> str:
    """The key of hosted provider ``name``, or the ConfigError that says how to provide it."""
    key = configured_key(getattr(config.web, name), HOSTED_KEYS[name])  # a deferred ${VAR} raises here
    if key is None:
        raise missing_key_error(name)
    return key


def key_problem(name: str, config: Config) -> str | None:
    """Why provider ``name`` cannot be used now (None when its key is present)."""
    try:
        require_key(name, config)
    except ConfigError as exc:
        return exc.message
    return None


def auto_pick(config: Config) -> tuple[str, str]:
    """What ``auto`` resolves to, and why."""
    order = ", ".join(HOSTED_KEYS)
    for name in HOSTED_KEYS:
        if source := key_source(name, config):
            return name, f"the first of {order} with a key (from {source})"
    return "local", f"none of {order} has a key"


def selection(config: Config, override: str | None = None) -> Selection:
    """The backend for a call: ``override``, else ``web.extract_backend``, else ``web.backend``
    (default ``local``); ``auto`` becomes the first provider with a key, else ``local``."""
    web = config.web
    for source, value in (("backend=", override), ("web.extract_backend", web.extract_backend),
                          ("web.backend", web.backend)):
        if value:
            break
    else:
        source, value = "web.backend", "local"
    explicit = source != "web.backend" or "backend" in web.model_fields_set
    if value == AUTO:
        name, why = auto_pick(config)
        return Selection(name, AUTO, source, f"{source} is auto: {why}")
    if explicit:
        return Selection(value, value, source, f"{source} is {value}")
    return Selection(value, value, source, "web.backend is local (the default); a provider key alone never "
                     "changes the backend: set web.backend: auto or name a provider to use one")


def default_fallback(config: Config) -> list[str]:
    """``web.fallback`` when unset: ``[local, browser]`` where the browser backend can run, else ``[local]``."""
    from webshelf.core.backends.browser.lifecycle import browser_available

    return ["local", "browser"] if browser_available(config.web.browser.executable_path) else ["local"]


def fallback_chain(config: Config, first: str, override: str | None = None) -> list[str]:
    """The backends a page is tried with, in order: ``first`` (the backend in force), then the
    ones after it in ``web.fallback``. A per-call ``backend=`` is exactly that backend, no chain;
    a backend in force that ``web.fallback`` does not list has none either."""
    if override:
        return [first]
    chain = config.web.fallback if config.web.fallback is not None else default_fallback(config)
    return [first, *chain[chain.index(first) + 1:]] if first in chain else [first]


def select_backend(config: Config, override: str | None = None) -> str:
    """The name of the backend in force (see ``selection``)."""
    return selection(config, override).name


__all__ = ["AUTO", "HOSTED_KEYS", "Selection", "auto_pick", "configured_key", "default_fallback", "fallback_chain", "key_problem", "key_source",
           "missing_key_error", "require_key", "select_backend", "selection"]
