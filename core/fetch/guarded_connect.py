"""An httpx transport that connects only to addresses the policy has checked.

httpx resolves and connects inside httpcore, so checking a host before the request is not
enough: a rebinding DNS server can answer the check with a public address and the connection
with 127.0.0.1. Here the one lookup *is* the connection's lookup: ``GuardedNetworkBackend``
resolves the host once, checks every address it got (core/fetch/netpolicy.py), and connects to a
checked IP. TLS still uses the host name for SNI and certificate checks (httpcore passes it to
``start_tls`` separately), and the Host header is untouched.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable

import httpcore
import httpx

from webshelf.core.fetch.netpolicy import Policy, check_addresses
from webshelf.core.fetch.pool_shards import CheapReadableStream, ShardedConnectionPool

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """All addresses the system resolver returns for host (IPv4 and IPv6), in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, with resolve-once-check-connect-to-checked in ``connect_tcp``."""

    def __init__(self, policy: Policy, resolver: Resolver | None = None) -> None:
        self.policy = policy
        self.resolver = resolver or system_resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self.resolver(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from None
        checked = check_addresses(host, addresses, self.policy)
        last: Exception | None = None
        for address in checked:  # connect to a checked address, never to the name
            try:
                return CheapReadableStream(await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options))
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, *args: object, **kwargs: object) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by webshelf")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose connection pool uses ``GuardedNetworkBackend``, split into
    shards of a few connections so its bookkeeping stays cheap at high concurrency
    (core/fetch/pool_shards.py)."""

    def __init__(self, policy: Policy, *, limits: httpx.Limits, resolver: Resolver | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(limits=limits, trust_env=False)
        self._pool = ShardedConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(trust_env=False),  # web.ca_bundle: core/fetch/tls.py
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedNetworkBackend(policy, resolver),
        )
