"""core/fetch/pool_shards.py: the sharded connection pool keeps httpx's limits and keep-alive,
and the cheap readability check still sees a server that hung up (issue 15).

Real sockets against the loopback server; no timing assertions.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import httpcore
import httpx
import pytest

from webshelf.core.fetch.guarded_connect import GuardedTransport
from webshelf.core.fetch.netpolicy import Policy
from webshelf.core.fetch.pool_shards import SHARD, CheapReadableStream, ShardedConnectionPool, split
from tests.loopback import LoopbackServer, Response


def test_split_adds_up_and_differs_by_at_most_one():
    for total in range(1, 200):
        for parts in range(1, min(total, 30) + 1):
            sizes = split(total, parts)
            assert sum(sizes) == total and len(sizes) == parts and max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("connections, shards", [(1, 1), (8, 1), (9, 2), (32, 4), (64, 8), (20, 3)])
def test_shards_hold_at_most_shard_connections_and_add_up_to_the_limit(connections, shards):
    pool = ShardedConnectionPool(max_connections=connections, max_keepalive_connections=connections)
    sizes = [s._max_connections for s in pool.shards]
    assert len(pool.shards) == shards and sum(sizes) == connections and max(sizes) <= SHARD


class Concurrent:
    def __init__(self) -> None:
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, req) -> Response:
        import time

        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.05)
        with self.lock:
            self.now -= 1
        return Response(b"<p>ok</p>")


def _transport(limit: int) -> GuardedTransport:
    from webshelf.core.config import Config

    policy = Policy.from_config(Config.model_validate({"web": {"allow_private": True}}).web)
    return GuardedTransport(policy, limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit))


def test_many_requests_through_a_sharded_pool_never_pass_its_limit_and_reuse_connections():
    handler = Concurrent()
    with LoopbackServer() as srv:
        url = srv.route("/c", handler)

        async def go() -> tuple[list[int], int]:
            transport = _transport(20)
            async with httpx.AsyncClient(transport=transport) as client:
                statuses = await asyncio.gather(*(client.get(url) for _ in range(120)))
                opened = len(transport._pool.connections)
                loads = list(transport._pool._load)
            assert loads == [0] * len(loads)  # every body closed gave its slot back
            return [r.status_code for r in statuses], opened

        statuses, opened = asyncio.run(go())
    assert statuses == [200] * 120
    assert handler.most <= 20 and opened <= 20  # 120 requests, at most 20 connections: kept alive and reused


def test_sequential_requests_keep_one_connection_alive():
    with LoopbackServer() as srv:
        url = srv.route("/s", Response(b"<p>ok</p>"))

        async def go() -> int:
            transport = _transport(32)
            async with httpx.AsyncClient(transport=transport) as client:
                for _ in range(10):
                    (await client.get(url)).raise_for_status()
                return len(transport._pool.connections)

        assert asyncio.run(go()) == 1


def test_a_failed_request_gives_its_shard_slot_back():
    async def go() -> list[int]:
        transport = _transport(16)
        async with httpx.AsyncClient(transport=transport) as client:
            for _ in range(3):
                with pytest.raises(httpx.ConnectError):
                    await client.get("http://127.0.0.1:9/")  # discard port: refused
            return list(transport._pool._load)

    assert asyncio.run(go()) == [0, 0]


def test_cheap_readability_sees_a_server_that_hung_up():
    async def go() -> tuple[bool, bool]:
        closed = asyncio.Event()

        async def serve(reader, writer) -> None:
            await closed.wait()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stream = CheapReadableStream(await httpcore.AnyIOBackend().connect_tcp("127.0.0.1", port))
        before = stream.get_extra_info("is_readable")
        closed.set()
        for _ in range(200):  # the FIN arrives asynchronously
            if stream.get_extra_info("is_readable"):
                break
            await asyncio.sleep(0.01)
        after = stream.get_extra_info("is_readable")
        assert stream.get_extra_info("socket") is not None  # other keys still answered by the inner stream
        await stream.aclose()
        server.close()
        await server.wait_closed()
        return before, after

    assert asyncio.run(go()) == (False, True)


def test_no_connection_limit_is_one_unsplit_pool():
    pool = ShardedConnectionPool(max_connections=None, max_keepalive_connections=None)
    assert len(pool.shards) == 1 and pool.shards[0]._max_connections == sys.maxsize  # httpcore: no limit
