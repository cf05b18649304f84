"""Resource limits against a real loopback server: byte caps (bombs too), deadlines, per-read
timeouts, retries, status errors. Each test names the case it proves (README "Security")."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import tracemalloc
import zlib

import brotli
import pytest

from webshelf.core.extract import web_extract_sync
from tests.loopback import Response

TEXT = {"Content-Type": "text/plain"}


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    """Tiny bodies that decode to hundreds of megabytes of zeros."""
    c = brotli.Compressor(quality=5)
    br = b"".join([c.process(b"\0" * (1 << 20)) for _ in range(512)] + [c.finish()])  # 512 MB
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    gz = b"".join([z.compress(b"\0" * (1 << 20)) for _ in range(128)] + [z.flush()])  # 128 MB
    return {"br": br, "gzip": gz}



@pytest.fixture
def config(config):
    """These tests are about the local backend alone: no fallback chain (that is
    tests/core/test_browser_fallback.py), so a timeout, a 403 or a shell stays local."""
    config.web.fallback = ["local"]
    return config


def test_body_over_max_bytes_is_refused_with_the_cap_and_how_to_raise_it(server, config):
    config.web.max_bytes = 100_000
    declared = server.route("/limits/big", Response(b"a" * 200_000, headers=TEXT))
    streamed = server.route("/limits/big-unannounced", Response(b"a" * 200_000, headers=TEXT, length=False))
    fits = server.route("/limits/fits", Response((b"a" * 99 + b"\n") * 1_000, headers=TEXT))  # exactly the cap
    a, b, c = web_extract_sync([declared, streamed, fits], config=config)
    for r in (a, b):
        assert r.error.code == "too_large"
        assert "web.max_bytes (100,000 bytes" in r.error.message and "raise web.max_bytes" in r.error.message
    assert c.ok and c.total_chars == 100_000


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_compression_bombs_stop_at_the_cap_without_inflating(server, config, bombs, encoding):
    config.web.max_bytes = 1_000_000
    url = server.route(f"/limits/bomb-{encoding}",
                       Response(bombs[encoding], headers={"Content-Type": "text/plain", "Content-Encoding": encoding}))
    tracemalloc.start()
    try:
        [r] = web_extract_sync([url], config=config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.error.code == "too_large", r
    assert peak < 40_000_000, f"decoding held {peak:,} bytes at once"  # the bomb is 128-512 MB decoded


def test_compressed_pages_within_the_cap_decode(server, config):
    text = b"compressed page\n" * 1000
    g = server.route("/limits/gz", Response(gzip.compress(text), headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}))
    b = server.route("/limits/br", Response(brotli.compress(text), headers={"Content-Type": "text/plain", "Content-Encoding": "br"}))
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    d = server.route("/limits/deflate", Response(raw_deflate.compress(text) + raw_deflate.flush(),
                                                 headers={"Content-Type": "text/plain", "Content-Encoding": "deflate"}))
    for r in web_extract_sync([g, b, d], config=config):
        assert r.ok, r.error
        assert r.total_chars == len(text)


def test_corrupt_compressed_body_is_a_clear_error(server, config):
    url = server.route("/limits/corrupt", Response(b"not gzip at all", headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}))
    [r] = web_extract_sync([url], config=config)
    assert r.error.code == "fetch_failed" and "corrupt compressed body" in r.error.message


def test_deadline_stops_a_server_that_trickles_a_byte_at_a_time(server, config):
    config.web.timeout_s = 1.5
    config.web.read_timeout_s = 5  # every single read is quick: only the per-URL deadline can stop it
    url = server.route("/limits/trickle", Response(b"x" * 1000, headers=TEXT, trickle=0.05))
    started = time.monotonic()
    [r] = web_extract_sync([url], config=config)
    assert r.error.code == "timeout" and "within 1.5 s (web.timeout_s" in r.error.message
    assert time.monotonic() - started < 5


def test_per_read_timeout_stops_a_server_that_goes_silent(server, config):
    config.web.read_timeout_s = 0.5
    url = server.route("/limits/silent", Response(b"late\n", headers=TEXT, delay=3))
    [r] = web_extract_sync([url], config=config)
    assert r.error.code == "timeout" and "nothing for 0.5 s" in r.error.message and "web.read_timeout_s" in r.error.message


def test_deadline_covers_a_tls_handshake_that_never_finishes(config):
    """A listener that accepts TCP and never speaks TLS: the https fetch ends at the deadline."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    config.web.timeout_s = 1.0
    try:
        started = time.monotonic()
        [r] = web_extract_sync([f"https://127.0.0.1:{listener.getsockname()[1]}/"], config=config)
        assert r.error.code == "timeout", r
        assert time.monotonic() - started < 4
        assert held, "the TCP connection was made; the TLS handshake is what hung"
    finally:
        stop.set()
        for s in held:
            s.close()
        listener.close()


def test_deadline_covers_slow_dns(server, config):
    import asyncio

    from webshelf.core.backends.local import LocalBackend
    from webshelf.errors import FetchTimeoutError

    async def slow(host, port):
        await asyncio.sleep(10)
        return ["127.0.0.1"]

    async def go():
        async with LocalBackend(config, resolver=slow) as backend:
            return await backend.fetch(f"http://slow-dns.test:{server.base.rsplit(':', 1)[1]}/")

    config.web.timeout_s = 0.5
    with pytest.raises(FetchTimeoutError):
        asyncio.run(go())


def _flaky(status: int, failures: int, retry_after: str | None):
    hits = []

    def handler(req):
        hits.append(time.monotonic())
        if len(hits) <= failures:
            headers = {"Content-Type": "text/plain", **({"Retry-After": retry_after} if retry_after is not None else {})}
            return Response(b"busy\n", status, headers)
        return Response(b"served\n", headers=TEXT)

    return handler, hits


@pytest.mark.parametrize("status", [429, 503])
def test_429_and_503_are_retried_honouring_retry_after(server, config, status):
    handler, hits = _flaky(status, 2, "1")
    url = server.route(f"/limits/flaky-{status}", handler)
    [r] = web_extract_sync([url], config=config)
    assert r.content == "served\n" and len(hits) == 3
    assert hits[1] - hits[0] >= 0.9 and hits[2] - hits[1] >= 0.9  # waited as asked


def test_retries_stop_at_max_retries_with_the_status(server, config):
    config.web.max_retries = 2
    handler, hits = _flaky(503, 99, "0")
    url = server.route("/limits/always-503", handler)
    [r] = web_extract_sync([url], config=config)
    assert r.error.code == "http_status" and "HTTP 503" in r.error.message
    assert "gave up after 2 retries (web.max_retries)" in r.error.message
    assert len(hits) == 3


def test_a_retry_after_beyond_the_wait_cap_is_not_waited_for(server, config):
    config.web.max_retry_wait_s = 2
    handler, hits = _flaky(429, 99, "120")
    url = server.route("/limits/retry-later", handler)
    started = time.monotonic()
    [r] = web_extract_sync([url], config=config)
    assert time.monotonic() - started < 2
    assert r.error.code == "http_status" and "HTTP 429" in r.error.message
    assert "retry after 120 s" in r.error.message and "web.max_retry_wait_s" in r.error.message
    assert len(hits) == 1


@pytest.mark.parametrize("status", [400, 403, 404, 410, 500, 502])
def test_other_error_statuses_are_per_url_errors_carrying_the_status(server, config, status):
    handler, hits = _flaky(status, 99, None)
    url = server.route(f"/limits/status-{status}", handler)
    ok = server.route("/limits/neighbour", Response(b"fine\n", headers=TEXT))
    r, neighbour = web_extract_sync([url, ok], config=config)
    assert r.error.code == "http_status" and f"HTTP {status}" in r.error.message
    assert len(hits) == 1  # not retried
    assert neighbour.content == "fine\n"
