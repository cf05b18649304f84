"""Which URLs a hosted provider may be sent: never one that only this machine should reach.

A URL that is ``file://``, a loopback/private/link-local/other non-public address, a reserved
local name (``localhost``, ``*.internal`` …) or a host listed in ``web.allow_hosts`` is one the
user opened to webshelf on purpose, for this machine — an intranet wiki, a dev server, a local
file. Sending it to Firecrawl, Tavily, Exa or Parallel would leak it to a third party (and the
provider could not reach it anyway). So, whatever backend is in force, such a URL is fetched
with the local backend and a note says why (``web.private_urls: local``, the default: the user
allowed it), or fails with ``not_sent_to_provider`` (``web.private_urls: refuse``).

The rule is about the *target* URL, never the provider's ``base_url`` (operator configuration,
on loopback in tests). Without an opt-in (``web.allow_private`` or a CIDR in ``web.allow_hosts``)
no DNS lookup is made — the provider resolves the target, and a non-public literal is refused
by the address policy anyway. With an opt-in, names are looked up here (the lookup the local
backend would make): an intranet name resolving to a private address stays on this machine.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from webshelf.core.config import Config
from webshelf.errors import NotSentToProviderError
from webshelf.core.fetch.checked import CheckedURL
from webshelf.core.fetch.netpolicy import RESERVED_NAMES, RESERVED_SUFFIXES, Policy, address_problem, parse_ip, redact

if TYPE_CHECKING:  # asyncio and the resolver's module (httpx) load with a lookup; `backend list` needs neither
    import asyncio

    from webshelf.core.fetch.guarded_connect import Resolver


def local_only_reason(url: str, policy: Policy) -> str | None:
    """Why ``url`` must not be sent to a hosted provider, from the URL alone (None: it may be)."""
    parts = urlsplit(url)
    if parts.scheme.lower() == "file":
        return "it is a file:// URL (a file on this machine)"
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        return None
    if dataclasses.replace(policy, allow_private=False).host_allowed(host):
        return f"{host} is listed in web.allow_hosts"
    ip = parse_ip(host)
    if ip is not None:
        problem = address_problem(ip)
        return f"{host} is {problem}" if problem else None
    if host in RESERVED_NAMES or host.endswith(RESERVED_SUFFIXES):
        return f"{host!r} is a local or internal name"
    return None


def _looks_up(policy: Policy) -> bool:
    """Names are resolved here only when the user opened non-public addresses to webshelf."""
    return policy.allow_private or bool(policy._networks)


async def _resolved_reason(host: str, port: int, policy: Policy, resolver: Resolver, timeout_s: float) -> str | None:
    import asyncio

    try:
        addresses = await asyncio.wait_for(resolver(host, port), timeout_s)
    except (OSError, asyncio.TimeoutError, UnicodeError):
        return None  # not resolvable here: not an intranet name this machine knows
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if problem := address_problem(ip):
            return f"{host} resolves to {ip}, {problem}"
        if any(ip in net for net in policy._networks if net.version == ip.version):
            return f"{host} resolves to {ip}, in web.allow_hosts"
    return None


async def keep_local(urls: Sequence[CheckedURL], config: Config, *,
                     resolver: Resolver | None = None) -> dict[str, str]:
    """The URLs of ``urls`` that must not go to a hosted provider, each with the reason.

    The URLs are already checked (core/fetch/checked.py): one the address policy refuses never
    gets here — its result is a ``blocked_url`` error, as with the local backend."""
    import asyncio

    from webshelf.core.fetch.guarded_connect import system_resolver

    policy = Policy.from_config(config.web)
    reasons: dict[str, str] = {}
    lookups: dict[str, asyncio.Task[str | None]] = {}
    for checked in dict.fromkeys(urls):
        url = checked.url
        if reason := local_only_reason(url, policy):
            reasons[url] = reason
        elif _looks_up(policy) and checked.host:
            parts = urlsplit(url)
            port = parts.port or (443 if checked.scheme == "https" else 80)
            lookups[url] = asyncio.ensure_future(_resolved_reason(
                checked.host, port, policy, resolver or system_resolver, min(config.web.timeout_s, 10.0)))
    for url, task in lookups.items():
        if reason := await task:
            reasons[url] = reason
    return reasons


REFUSE_HINT = ("only this machine fetches it (web.private_urls: refuse); set web.private_urls: local to fetch such "
               "URLs with the local backend, or pass backend='local'")
DIRECT_HINT = "a hosted backend never sends such URLs; fetch it with the local backend (backend='local')"


def not_sent_error(url: str, provider: str, reason: str, hint: str = REFUSE_HINT) -> NotSentToProviderError:
    return NotSentToProviderError(f"{redact(url)}: not sent to {provider}: {reason}; {hint}", url=url, backend=provider)


def local_note(provider: str, reason: str) -> str:
    return (f"fetched on this machine with the local backend, not sent to {provider}: {reason} "
            "(hosted backends never receive private, allow-listed, loopback or file:// URLs; web.private_urls)")


def hosted_rule(config: Config, provider: str) -> str:
    """One line for ``webshelf backends``: what happens to URLs that never go to ``provider``."""
    what = ("fetched with local" if config.web.private_urls == "local"
            else "refused with not_sent_to_provider")
    return (f"never sent to {provider}: private, allow-listed, loopback and file:// URLs — {what} "
            f"(web.private_urls: {config.web.private_urls})")


__all__ = ["hosted_rule", "keep_local", "local_note", "local_only_reason", "not_sent_error"]
