"""web.per_host_concurrency and web.per_host_delay_ms across calls and processes; web.robots_txt.

A loopback server counts the requests it is serving at once; two separate processes sharing one
home fetch from it together, and the count never passes ``web.per_host_concurrency``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from webshelf.core.config import Config
from webshelf.core.extract import web_extract_sync
from webshelf.core.fetch import politeness, robots
from tests.loopback import LoopbackServer, Response

PAGE = b"<html><body><main><h1>Polite</h1>" + b"<p>some words. </p>" * 30 + b"</main></body></html>"


class Counting:
    """A handler that records how many requests it serves at once, and when each started."""

    def __init__(self, hold: float) -> None:
        self.hold, self.now, self.most, self.starts = hold, 0, 0, []
        self._lock = threading.Lock()

    def __call__(self, req) -> Response:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.starts.append(time.monotonic())
        time.sleep(self.hold)
        with self._lock:
            self.now -= 1
        return Response(PAGE)


def cfg(home, **web) -> Config:
    return Config.model_validate({"web": {"allow_private": True, **web}}).with_home(home)


def test_two_processes_sharing_a_home_never_pass_per_host_concurrency(home, tmp_path):
    counter = Counting(hold=0.3)
    with LoopbackServer() as srv:
        urls = [srv.route(f"/polite/{i}", counter) for i in range(12)]
        script = tmp_path / "run.py"
        script.write_text(textwrap.dedent("""
            import sys
            from webshelf.core.config import Config
            from webshelf.core.extract import web_extract_sync
            config = Config.model_validate({"web": {"allow_private": True, "concurrency": 8}}).with_home(sys.argv[1])
            results = web_extract_sync(sys.argv[2:], config=config)
            bad = [r.error.message for r in results if r.error]
            print("errors:", bad)
            sys.exit(1 if bad else 0)
        """))
        procs = [subprocess.Popen([sys.executable, str(script), str(home), *urls[i::2]],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert len(counter.starts) == 12
    assert counter.most == 2  # the default: two at once, though each process allowed 8


def test_calls_in_one_process_share_the_limit(home):
    counter = Counting(hold=0.2)
    with LoopbackServer() as srv:
        urls = [srv.route(f"/polite/t{i}", counter) for i in range(6)]
        config = cfg(home, per_host_concurrency=1)
        threads = [threading.Thread(target=web_extract_sync, args=(urls[i::3],), kwargs={"config": config})
                   for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert len(counter.starts) == 6 and counter.most == 1


def test_per_host_delay_spaces_request_starts(home, monkeypatch):
    """Not a benchmark, and immune to load: start k (0-based) is booked at least k delays after
    the first booking, and a request can only reach the server after its booked start — so the
    k-th request the server sees arrived at least k × 150 ms after the first booking, however
    late any request is (lower bounds only; the server runs in this process). Without the delay
    all five arrive within milliseconds of the first booking."""
    counter = Counting(hold=0.0)
    delay_s = 0.150
    booked: list[float] = []
    reserve = politeness.HostSlots._reserve_start

    def recorded(self, key):  # noqa: ANN001, ANN202
        booked.append(time.monotonic())  # before the booking: a lower bound of its start time
        return reserve(self, key)
    monkeypatch.setattr(politeness.HostSlots, "_reserve_start", recorded)
    with LoopbackServer() as srv:
        urls = [srv.route(f"/polite/d{i}", counter) for i in range(5)]
        results = web_extract_sync(urls, config=cfg(home, per_host_delay_ms=150, per_host_concurrency=4))
    assert all(r.error is None for r in results)
    assert len(booked) == 5 and len(counter.starts) == 5
    after = [start - min(booked) for start in sorted(counter.starts)]
    slack = 0.005  # the booking reads the wall clock, the server the monotonic one: rounding, not jitter
    assert all(t >= k * delay_s - slack for k, t in enumerate(after)), after


@pytest.fixture
def site():
    robots.forget()
    with LoopbackServer() as srv:
        yield srv
    robots.forget()


def test_robots_txt_obey_refuses_a_disallowed_url_naming_the_rule(home, site):
    site.route("/robots.txt", Response(b"User-agent: *\nDisallow: /\n\nUser-agent: webshelf\nAllow: /public/\n"
                                       b"Disallow: /private/\n", headers={"Content-Type": "text/plain"}))
    urls = [site.route("/private/secret", Response(PAGE)), site.route("/public/a", Response(PAGE)),
            site.route("/public/b", Response(PAGE))]
    results = web_extract_sync(urls, config=cfg(home, robots_txt="obey"))
    assert [r.error.code if r.error else None for r in results] == ["blocked_by_robots", None, None]
    message = results[0].error.message
    assert "'Disallow: /private/'" in message and "user-agent 'webshelf'" in message
    assert "robots.txt" in message and "web.robots_txt" in message
    assert site.hits["/robots.txt"] == 1  # cached per host within cache.max_age
    assert "/private/secret" not in site.hits  # never requested


def test_robots_txt_is_not_read_when_ignored(home, site):
    site.route("/robots.txt", Response(b"User-agent: *\nDisallow: /\n", headers={"Content-Type": "text/plain"}))
    [result] = web_extract_sync([site.route("/any", Response(PAGE))], config=cfg(home))
    assert result.error is None and "/robots.txt" not in site.hits


def test_robots_txt_missing_allows_and_a_5xx_disallows(home, site):
    url = site.route("/page", Response(PAGE))
    [ok] = web_extract_sync([url], config=cfg(home, robots_txt="obey"))  # 404: no rules
    assert ok.error is None
    robots.forget()
    site.route("/robots.txt", Response(b"down", 500, {"Content-Type": "text/plain"}))
    [refused] = web_extract_sync([url], config=cfg(home, robots_txt="obey", max_retries=0), fresh=True)
    assert refused.error.code == "blocked_by_robots" and "HTTP 500" in refused.error.message


def test_a_home_where_slot_files_cannot_be_written_still_fetches(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "cache").mkdir()
    (home / "cache" / "hosts").write_text("a file where the slot directory belongs")
    counter = Counting(hold=0.1)
    with LoopbackServer() as srv:
        urls = [srv.route(f"/polite/ro{i}", counter) for i in range(4)]
        results = web_extract_sync(urls, config=cfg(home, per_host_concurrency=1))
    assert all(r.error is None for r in results) and counter.most == 1  # limited within the process


class Redirecting:
    """A handler that answers 302 to ``target`` (another server: another host)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __call__(self, req) -> Response:
        return Response(b"", 302, {"Location": self.target, "Content-Type": "text/plain"})


def test_a_redirect_to_another_host_takes_that_hosts_slot(home):
    """Three first hosts, each with its own slot, all redirect to one host B: B still sees one request at a time
    (slots are keyed on the host name, the port ignored: README "Polite fetching")."""
    counter = Counting(hold=0.2)
    with LoopbackServer(host="127.0.0.2") as b, LoopbackServer(host="127.0.0.1") as a1, \
            LoopbackServer(host="127.0.0.3") as a2, LoopbackServer(host="127.0.0.4") as a3:
        urls = [a.route(f"/hop/{i}", Redirecting(b.route(f"/landing/{n}{i}", counter)))
                for n, a in enumerate((a1, a2, a3)) for i in range(2)]
        results = web_extract_sync(urls, config=cfg(home, per_host_concurrency=1, concurrency=8))
    assert [r.error for r in results] == [None] * 6
    assert len(counter.starts) == 6 and counter.most == 1


def test_a_redirect_hop_waits_for_that_hosts_delay(home):
    """Not a benchmark: B's request starts are booked 150 ms apart though they come from four hosts' redirects."""
    counter = Counting(hold=0.0)
    servers = [LoopbackServer(host=f"127.0.0.{i}") for i in (2, 3, 4, 5, 6)]
    with servers[0] as b, servers[1], servers[2], servers[3], servers[4]:
        urls = [a.route("/hop", Redirecting(b.route(f"/landing/d{i}", counter))) for i, a in enumerate(servers[1:])]
        results = web_extract_sync(urls, config=cfg(home, per_host_delay_ms=150, per_host_concurrency=4))
    assert [r.error for r in results] == [None] * 4
    starts = sorted(counter.starts)
    assert len(starts) == 4 and all(y - x >= 0.075 for x, y in zip(starts, starts[1:])), starts


def test_redirects_back_and_forth_between_two_hosts_do_not_deadlock(home):
    with LoopbackServer(host="127.0.0.1") as a, LoopbackServer(host="127.0.0.2") as b:
        urls = []
        for i in range(4):  # a/i → b/i → a/end-i, and b/j → a/j → b/end-j, all at once with one slot per host
            urls.append(a.route(f"/x{i}", Redirecting(b.route(f"/x{i}", Redirecting(a.route(f"/end{i}", Response(PAGE)))))))
            urls.append(b.route(f"/y{i}", Redirecting(a.route(f"/y{i}", Redirecting(b.route(f"/end{i}", Response(PAGE)))))))
        results = web_extract_sync(urls, config=cfg(home, per_host_concurrency=1, concurrency=8))
    assert [r.error for r in results] == [None] * 8


def test_robots_txt_obey_applies_to_the_host_a_redirect_goes_to(home):
    robots.forget()
    try:
        with LoopbackServer(host="127.0.0.1") as a, LoopbackServer(host="127.0.0.2") as b:
            b.route("/robots.txt", Response(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}))
            landing = b.route("/private/page", Response(PAGE))
            public = b.route("/public/page", Response(PAGE))
            urls = [a.route("/to-private", Redirecting(landing)), a.route("/to-public", Redirecting(public))]
            results = web_extract_sync(urls, config=cfg(home, robots_txt="obey"))
            hits = dict(b.hits)
            a_hits = dict(a.hits)
        refused, allowed = results
        assert refused.error.code == "blocked_by_robots"
        assert "redirect to" in refused.error.message and "Disallow: /private/" in refused.error.message
        assert f"{b.base}/robots.txt" in refused.error.message
        assert allowed.error is None
        assert "/private/page" not in hits and hits["/robots.txt"] == 1 and hits["/public/page"] == 1
        assert a_hits["/robots.txt"] == 1  # the first host's own robots.txt was read too (a 404: no rules)
    finally:
        robots.forget()


def test_robots_txt_obey_applies_to_a_redirect_within_the_same_site(home, site):
    site.route("/robots.txt", Response(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}))
    landing = site.route("/private/page", Response(PAGE))
    [result] = web_extract_sync([site.route("/public/moved", Redirecting(landing))], config=cfg(home, robots_txt="obey"))
    assert result.error.code == "blocked_by_robots" and "redirect to" in result.error.message
    assert "/private/page" not in site.hits and site.hits["/robots.txt"] == 1


def test_slots_this_process_holds_are_skipped_but_the_flock_still_decides(tmp_path):
    """_try_take tries the slots this process does not hold first (a hint); a released slot is
    found again, and another caller in the process never gets a slot that is taken."""
    from webshelf.core.fetch.politeness import HostSlots, host_key

    a, b = HostSlots(tmp_path / "hosts", 4, 0), HostSlots(tmp_path / "hosts", 4, 0)
    key = host_key("http://example.test/")
    fds = [a._try_take(key) for _ in range(4)]
    assert None not in fds and a._try_take(key) is None and b._try_take(key) is None
    a._release(key, fds[2])
    again = b._try_take(key)
    assert again is not None and a._try_take(key) is None
    for fd in (fds[0], fds[1], fds[3], again):
        a._release(key, fd)
    assert sorted(p.name for p in (tmp_path / "hosts").iterdir()) == [f"{key}.{i}.slot" for i in range(4)]


def test_robots_txt_is_cached_per_origin_within_cache_max_age(home, site, monkeypatch):
    """Across calls: read once while ``cache.max_age`` has not passed, read again once it has
    (robots.py's clock moved forward instead of waiting)."""
    import types

    site.route("/robots.txt", Response(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}))
    urls = [site.route("/public/c1", Response(PAGE)), site.route("/public/c2", Response(PAGE))]
    config = cfg(home, robots_txt="obey")
    config.cache.max_age = 3600
    for url in urls:  # two calls within max_age: one robots.txt request
        [result] = web_extract_sync([url], config=config, fresh=True)
        assert result.error is None
    assert site.hits["/robots.txt"] == 1
    real = robots.time.monotonic
    monkeypatch.setattr(robots, "time", types.SimpleNamespace(monotonic=lambda: real() + 3601))
    [result] = web_extract_sync([urls[0]], config=config, fresh=True)
    assert result.error is None and site.hits["/robots.txt"] == 2  # older than max_age: read again


def test_host_key_memo_gives_the_uncached_key_and_stays_bounded():
    """``host_key`` hashes each host once (``_key_of_host``, an LRU memo): the same key as hashing
    the lower-case host without its trailing dot, the port ignored, and a bounded memo."""
    import hashlib

    from webshelf.core.fetch.politeness import _key_of_host, host_key

    expected = hashlib.sha256(b"example.test").hexdigest()[:20]
    assert host_key("http://Example.TEST.:8080/a") == host_key("https://example.test/b") == expected
    for i in range(3000):
        host_key(f"http://h{i}.test/")
    assert _key_of_host.cache_info().currsize <= _key_of_host.cache_info().maxsize == 1024
    assert host_key("http://example.test/") == expected
