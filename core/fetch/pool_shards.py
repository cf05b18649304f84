"""Connection pools whose bookkeeping stays small at high concurrency (issue 15).

httpcore's ``AsyncConnectionPool`` re-examines every connection each time a request is added or
finishes (``_assign_requests_to_connections``): ``has_expired`` on each one — which, through
anyio's ``extra()``, builds the socket's whole attribute table, ``getpeername`` included — and,
for every idle connection, a count of the idle connections (a scan inside a scan). The work per
request grows with the square of the pool size: at 64 connections a profile of 500 loopback
requests showed ~2 million ``is_idle`` calls and 50,000 ``getpeername`` calls, and bare httpx
spent ~8 ms of CPU per request (it spends ~2.7 ms at 32). On 2 cores that CPU, not the network,
set the wall time.

Two changes, both through httpcore's public interfaces:

- ``CheapReadableStream`` answers ``get_extra_info("is_readable")`` (the expiry check) from the
  socket it looked up once at connect time: one ``poll``, no attribute table, no ``getpeername``.
- ``ShardedConnectionPool`` splits ``max_connections`` over pools of at most ``SHARD`` (8)
  connections and sends each request to one of them, so each pool's scans stay ~8² however high
  ``web.concurrency`` goes. The limits hold: the shards' sizes add up to ``max_connections`` (and
  keep-alive likewise). A request goes to a shard that has an idle connection to its origin and
  room (keep-alive reuse as with one pool), else to the least-loaded shard.

With up to ``SHARD`` connections there is one shard, i.e. exactly httpcore's pool.
"""

from __future__ import annotations

import math
import select
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpcore

#: Connections per shard: the pool's per-assignment scans cost ~SHARD² calls.
SHARD = 8


class CheapReadableStream(httpcore.AsyncNetworkStream):
    """A network stream whose ``is_readable`` check is one ``poll`` on a socket looked up once."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, sock: socket.socket | None = None) -> None:
        self._inner = inner
        self._sock = sock if sock is not None else inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        # TLS runs over the same TCP socket: its readability still says whether the server hung up
        tls = await self._inner.start_tls(ssl_context, server_hostname=server_hostname, timeout=timeout)
        return CheapReadableStream(tls, self._sock)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return is_socket_readable(self._sock)
        return self._inner.get_extra_info(info)


def is_socket_readable(sock: socket.socket | None) -> bool:
    """Whether a read would return at once (data, or ``b""``: the server hung up), as httpcore tests it;
    a socket that is gone counts as readable (its next read is the end)."""
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` near-equal integers that add up to it (``split(20, 3)`` → 7, 7, 6)."""
    q, r = divmod(total, parts)
    return [q + 1] * r + [q] * (parts - r)


class _Counted:
    """A response body that gives its shard's slot back once, when it is closed."""

    def __init__(self, stream: Any, done: Callable[[], None]) -> None:
        self._stream, self._done = stream, done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()  # an httpcore pool's body (PoolByteStream) always has one
        finally:
            self._release()

    def _release(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done()


class ShardedConnectionPool:
    """``max_connections`` spread over httpcore pools of at most ``SHARD`` connections each; what httpx's
    transport asks of its pool (``handle_async_request``, ``aclose``, async context) and nothing else."""

    def __init__(self, *, max_connections: int | None, max_keepalive_connections: int | None = None,
                 **pool_kwargs: Any) -> None:
        if max_connections is None:  # no limit: one pool, as httpx would build (nothing to split)
            self.shards = [httpcore.AsyncConnectionPool(max_connections=None,
                                                        max_keepalive_connections=max_keepalive_connections,
                                                        **pool_kwargs)]
            self._sizes, self._load = [1], [0]
            return
        parts = max(1, math.ceil(max_connections / SHARD))
        sizes = split(max_connections, parts)
        keepalive = split(min(max_keepalive_connections, max_connections) if max_keepalive_connections is not None
                          else max_connections, parts)
        self.shards = [httpcore.AsyncConnectionPool(max_connections=size, max_keepalive_connections=alive,
                                                    **pool_kwargs) for size, alive in zip(sizes, keepalive)]
        self._sizes = sizes
        self._load = [0] * parts  # requests each shard holds (sent, body not yet closed)

    def _choose(self, origin: httpcore.Origin) -> int:
        if len(self.shards) == 1:
            return 0
        for i, shard in enumerate(self.shards):
            if self._load[i] < self._sizes[i] and any(
                    c.is_idle() and c.can_handle_request(origin) for c in shard.connections):
                return i
        return min(range(len(self.shards)), key=lambda i: self._load[i] / self._sizes[i])

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        i = self._choose(request.url.origin)
        self._load[i] += 1

        def done() -> None:
            self._load[i] -= 1

        try:
            response = await self.shards[i].handle_async_request(request)
        except BaseException:
            done()
            raise
        response.stream = _Counted(response.stream, done)
        return response

    @property
    def connections(self) -> list[httpcore.AsyncConnectionInterface]:
        return [c for shard in self.shards for c in shard.connections]

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()

    async def __aenter__(self) -> "ShardedConnectionPool":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["SHARD", "CheapReadableStream", "ShardedConnectionPool", "split"]
