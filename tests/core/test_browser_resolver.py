"""The browser proxies' resolver (core/backends/browser/resolver.py): lookups on threads of
their own, bounded, with a deadline and an error naming the host.

The resolver is a fake that blocks on an event for ``slow.test`` (a DNS server that does not
answer) and answers 127.0.0.1 for every other name, so only loopback is ever dialled. No timing
is asserted: "does not stall" is shown by order — other work finishes while the slow lookup is
still held, and only then is it released.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.loopback import LoopbackServer, Response
from webshelf.core.backends.browser import resolver as browser_dns
from webshelf.core.backends.browser.proxy import PolicyProxy
from webshelf.core.fetch.netpolicy import Policy

pytestmark = pytest.mark.timeout(60)


class BlockingDNS:
    """``slow.test`` blocks until ``release()``; every other name is 127.0.0.1; records each call."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.asked: list[str] = []
        self.threads: set[str] = set()
        self.slow_started = threading.Event()

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        self.threads.add(threading.current_thread().name)
        if host == "slow.test":
            self.slow_started.set()
            self.gate.wait(30)
        return ["127.0.0.1"]

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def dns():
    fake = BlockingDNS()
    yield fake
    fake.release()  # frees the pool's threads


def test_a_slow_lookup_does_not_hold_the_callers_default_executor_or_other_lookups(dns):
    pool = browser_dns.ResolverPool(threads=2, timeout_s=30, lookup=dns)

    async def go():
        loop = asyncio.get_running_loop()
        slow = asyncio.ensure_future(pool.resolve("slow.test", 443))
        await loop.run_in_executor(None, dns.slow_started.wait, 10)  # the slow lookup holds one pool thread
        # the calling loop's default executor, and the pool's other thread, still answer at once
        assert await loop.run_in_executor(None, lambda: "free") == "free"
        assert await pool.resolve("fast.test", 443) == ["127.0.0.1"]
        assert not slow.done()  # the order is the proof: both answered while slow.test was still held
        dns.release()
        return await slow

    assert asyncio.run(go()) == ["127.0.0.1"]
    assert dns.threads <= {"webshelf-browser-dns-0", "webshelf-browser-dns-1"}  # the pool's own threads only


def test_a_lookup_past_its_deadline_fails_naming_the_host_and_one_queued_behind_it_too(dns):
    pool = browser_dns.ResolverPool(threads=1, timeout_s=0.5, lookup=dns)

    async def go():
        return await asyncio.gather(pool.resolve("slow.test", 443), pool.resolve("queued.test", 80),
                                    return_exceptions=True)

    slow, queued = asyncio.run(go())
    assert isinstance(slow, TimeoutError)
    assert str(slow) == ("no DNS answer for 'slow.test' within 0.5 s (1 of the browser's 1 lookup threads were busy); "
                         "check the resolver in /etc/resolv.conf, or retry")
    assert isinstance(queued, TimeoutError) and "'queued.test'" in str(queued)
    assert isinstance(slow, OSError)  # the proxy's refusal path catches OSError
    dns.release()
    assert "queued.test" not in dns.asked  # given up while queued: never looked up


def test_the_pool_refuses_zero_threads():
    with pytest.raises(ValueError, match="at least one thread"):
        browser_dns.ResolverPool(threads=0)


def test_the_proxy_refuses_a_slow_name_with_its_reason_while_another_request_goes_through(dns):
    """The policy proxy with the pool as its resolver: CONNECT slow.test gets 403 and a blocked
    entry naming the host, and a request to a name that resolves (to the loopback server) is
    answered while slow.test's lookup is still held."""
    pool = browser_dns.ResolverPool(threads=2, timeout_s=1.0, lookup=dns)

    async def ask(proxy: PolicyProxy, request: str) -> bytes:
        host, port = proxy.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(request.encode())
        answer = await reader.read()
        writer.close()
        return answer

    with LoopbackServer() as site:
        url = site.route("/dns/ok", Response(b"<p>fine</p>"))
        port = int(url.split(":")[2].split("/")[0])

        async def go():
            proxy = await PolicyProxy(Policy(allow_private=True), resolver=pool.resolve).start()
            try:
                slow = asyncio.ensure_future(ask(proxy, "CONNECT slow.test:443 HTTP/1.1\r\n\r\n"))
                await asyncio.get_running_loop().run_in_executor(None, dns.slow_started.wait, 10)
                ok = await ask(proxy, f"GET http://fine.test:{port}/dns/ok HTTP/1.1\r\nHost: fine.test\r\n\r\n")
                held = not slow.done()
                return ok, held, await slow, list(proxy.blocked)
            finally:
                await proxy.close()

        ok, held, refused, blocked = asyncio.run(go())
    assert ok.startswith(b"HTTP/1.") and b"fine" in ok and held
    assert refused.startswith(b"HTTP/1.1 403")
    assert blocked == ["slow.test:443: cannot resolve (no DNS answer for 'slow.test' within 1 s "
                       "(1 of the browser's 2 lookup threads were busy); check the resolver in /etc/resolv.conf, "
                       "or retry)"]


def test_the_proxies_use_the_browser_pool_by_default():
    proxy = PolicyProxy(Policy())
    assert proxy.resolver is browser_dns.browser_resolver
