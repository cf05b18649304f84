"""The browser backend's process budget and page hygiene against real Chromium: fresh contexts,
a crash that fails only its URL, downloads, dialogs, file://, byte caps, deadlines and
``web.browser.max_pages``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time

import pytest

from tests.core.browser_fixtures import need_browser, run
from tests.loopback import LoopbackServer, Response
from webshelf.core.backends.browser.backend import BrowserBackend
from webshelf.core.backends.browser.lifecycle import chromium_pids, rss_bytes
from webshelf.core.backends.browser.service import shutdown_all
from webshelf.core.extract import web_extract_sync
from webshelf.errors import BackendError, BlockedURLError, FetchTimeoutError, TooLargeError, UnsupportedContentError

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _browser():
    need_browser()
    yield
    shutdown_all()  # the browser outlives calls (service.py): launch counts and pids start afresh per test


def page(body: str) -> Response:
    return Response(f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>".encode())


def test_the_browser_backend_renders_javascript_through_the_same_conversion(server, config):
    url = server.route("/bb/js", page("<div id=r></div><script>document.getElementById('r').innerHTML="
                                      "'<main><h1>From script</h1><p>' + 'Words written by script. '.repeat(40) + '</p></main>';</script>"))
    config.web.backend = "browser"
    [r] = web_extract_sync([url], config=config)
    assert r.error is None and r.backend == "browser" and r.notes == []
    assert "# From script" in r.content and "Words written by script." in r.content and r.path  # stored like any page


def test_every_url_gets_a_fresh_context_without_cookies_or_storage(server, config):
    first = server.route("/bb/set", page("<h1>set</h1><script>document.cookie='seen=1; max-age=3600';"
                                         "localStorage.setItem('seen','1');</script>"))
    second = server.route("/bb/get", page("<h1 id=o>get</h1><script>document.getElementById('o').textContent="
                                          "'cookie=[' + document.cookie + '] storage=[' + localStorage.getItem('seen') + ']';"
                                          "</script>"))

    async def go():
        async with BrowserBackend(config) as backend:
            await backend.fetch(first)
            return await backend.fetch(second), backend._shared.launches
    got, launches = run(go())
    assert "cookie=[] storage=[null]" in got.markdown
    assert launches == 1  # one shared browser, two contexts


def test_a_crashed_browser_fails_only_its_url_and_is_restarted(server, config):
    """The kill comes once the server holds the page's request (an event, not a sleep: under load
    a fixed pause could end before the render began, and the page would then render fine)."""
    asked, release = threading.Event(), threading.Event()

    def held(req):
        asked.set()
        release.wait(60)
        return Response(b"<html><body><h1>never</h1></body></html>")

    slow = server.route("/bb/slow", held)
    ok = server.route("/bb/ok", page("<h1>after the crash</h1>"))

    async def go():
        async with BrowserBackend(config) as backend:
            await backend._browser()
            [main] = (await backend.pids())["browser"]
            rendering = asyncio.ensure_future(backend.fetch(slow))
            assert await asyncio.to_thread(asked.wait, 60), "the page's request never reached the server"
            os.kill(main, signal.SIGKILL)  # the browser process this test's backend started
            with pytest.raises(BackendError) as crashed:
                await rendering
            release.set()
            after = await backend.fetch(ok)
            return crashed.value, after, backend._shared.launches
    crashed, after, launches = run(go())
    assert "crashed" in crashed.message and "only this URL failed" in crashed.message
    assert "after the crash" in after.markdown and launches == 2


def test_a_crashed_tab_fails_only_its_url_and_the_browser_stays(server, config):
    """One page's renderer dies (CDP ``Page.crash``, as an out-of-memory tab would): that URL fails
    with a clear error, a page rendering at the same time on another site finishes, and the
    browser is not relaunched."""
    asked = {name: threading.Event() for name in ("a", "b")}
    release = threading.Event()

    def held(name, text):
        def handler(req):
            asked[name].set()
            release.wait(60)
            return Response(f"<html><body><h1>{text}</h1><p>{'Words of the page. ' * 20}</p></body></html>".encode())
        return handler

    pages = []  # the Playwright pages in the order their renders began (the service's loop appends)
    second_layer = BrowserBackend._second_layer

    async def spy(self, context, page, proxy):
        pages.append(page)
        await second_layer(self, context, page, proxy)

    async def crash(page):
        session = await page.context.new_cdp_session(page)
        with contextlib.suppress(Exception):  # the renderer may die before it answers
            await session.send("Page.crash")

    with LoopbackServer(host="127.0.0.2") as other:
        # the doomed page's document has arrived and its script is held: Chromium refuses
        # Page.crash while a navigation is pending, so the tab dies mid-load, not mid-navigation
        server.route("/bb/held.js", held("a", "never run"))
        doomed = server.route("/bb/doomed", page("<h1>never shown</h1><script src=/bb/held.js></script>"))
        survivor = other.route("/bb/survivor", held("b", "the other page"))
        ok = server.route("/bb/next", page("<h1>the next page</h1>"))

        async def go():
            async with BrowserBackend(config) as backend:
                rendering = asyncio.ensure_future(backend.fetch(doomed))
                assert await asyncio.to_thread(asked["a"].wait, 60), "the first page's script was never asked for"
                beside = asyncio.ensure_future(backend.fetch(survivor))
                assert await asyncio.to_thread(asked["b"].wait, 60), "the second page's request never came"
                await backend._use_service().run(crash(pages[0]))
                with pytest.raises(BackendError) as crashed:
                    await rendering
                release.set()
                return crashed.value, await beside, await backend.fetch(ok), backend._shared.launches
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(BrowserBackend, "_second_layer", spy)
            crashed, other_page, after, launches = run(go())
    assert "/bb/doomed" in crashed.message and "crashed in the browser" in crashed.message and "only this URL failed" in crashed.message
    assert "the other page" in other_page.markdown and "the next page" in after.markdown
    assert launches == 1  # a tab's crash is not the browser's: nothing relaunched


def test_downloads_are_refused(server, config):
    url = server.route("/bb/download", Response(b"PK\x03\x04 binary", headers={
        "Content-Type": "application/octet-stream", "Content-Disposition": "attachment; filename=x.zip"}))

    async def go():
        async with BrowserBackend(config) as backend:
            return await backend.fetch(url)
    with pytest.raises(UnsupportedContentError) as caught:
        run(go())
    assert "downloads are refused" in caught.value.message


def test_dialogs_are_dismissed_and_permissions_denied(server, config):
    """Dialogs are dismissed (confirm is false), and permissions are not merely un-granted but
    denied when a page asks: the query says denied, geolocation fails with PERMISSION_DENIED (1),
    notifications and the clipboard are refused. (The old assertion accepted "prompt", by
    operator precedence: ``a and b or c``.)"""
    url = server.route("/bb/dialogs", page(
        "<h1 id=o>dialogs</h1><script>alert('hi'); var c = confirm('sure?'); var out = ['confirm=' + c];"
        "function show() { document.getElementById('o').textContent = out.join(' '); }"
        "navigator.permissions.query({name: 'geolocation'}).then(function (p) { out.push('query=' + p.state); show(); });"
        "navigator.geolocation.getCurrentPosition(function () { out.push('geo=granted'); show(); },"
        " function (e) { out.push('geo=error' + e.code); show(); });"
        "Notification.requestPermission().then(function (r) { out.push('notify=' + r); show(); });"
        "navigator.clipboard.readText().then(function () { out.push('clip=granted'); show(); },"
        " function (e) { out.push('clip=' + e.name); show(); });</script>"))

    async def go():
        async with BrowserBackend(config) as backend:
            return await backend.fetch(url)
    got = run(go())
    for expected in ("confirm=false", "query=denied", "geo=error1", "notify=denied", "clip=NotAllowedError"):
        assert expected in got.markdown, got.markdown


def test_no_file_urls_neither_as_page_nor_from_a_page(server, config, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-FILE")
    config.web.allow_file_urls, config.web.file_dirs = True, [str(tmp_path)]
    url = server.route("/bb/file", page(f"<h1 id=o>file</h1><iframe src='file://{secret}'></iframe><script>"
                                        f"fetch('file://{secret}').then(r => r.text()).then(t => "
                                        "document.getElementById('o').textContent = t).catch(() => {});</script>"))

    async def go():
        async with BrowserBackend(config) as backend:
            with pytest.raises(BlockedURLError):
                await backend.fetch(f"file://{secret}")
            return await backend.fetch(url)
    got = run(go())
    assert "TOP-SECRET-FILE" not in got.markdown


def test_a_page_pulling_more_than_max_bytes_is_too_large(server, config):
    config.web.max_bytes = 50_000
    server.route("/bb/big.js", Response(b"/*" + b"x" * 200_000 + b"*/", headers={"Content-Type": "application/javascript"}))
    url = server.route("/bb/big", page("<h1>big</h1><script src='/bb/big.js'></script>"))

    async def go():
        async with BrowserBackend(config) as backend:
            return await backend.fetch(url)
    with pytest.raises(TooLargeError) as caught:
        run(go())
    assert "web.max_bytes" in caught.value.message


def test_the_deadline_covers_the_whole_render(server, config):
    config.web.timeout_s = 1
    url = server.route("/bb/stuck", Response(b"<html><body>late</body></html>", delay=4))

    async def go():
        async with BrowserBackend(config) as backend:
            return await backend.fetch(url)
    with pytest.raises(FetchTimeoutError) as caught:
        run(go())
    assert "web.timeout_s" in caught.value.message


def test_at_most_max_pages_render_at_once(server, config):
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def counted(req):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(1.0)
        with lock:
            state["now"] -= 1
        return Response(b"<html><body><h1>counted</h1></body></html>")

    urls = [server.route(f"/bb/count{i}", counted) for i in range(6)]
    config.web.browser.max_pages = 2
    config.web.backend = "browser"
    results = web_extract_sync(urls, config=config)
    assert all(r.error is None for r in results)
    assert state["max"] == 2  # two renders overlapped (the limit is used), never a third


def test_the_browser_processes_are_ours_and_measurable(config):
    config.web.browser.idle_s = 0  # closed as soon as the last call using it ends

    async def go():
        async with BrowserBackend(config) as backend:
            await backend._browser()
            for _ in range(5):  # Chromium starts and ends short-lived helpers: compare two snapshots that agree
                kinds = await backend.pids()
                pids = [p for group in kinds.values() for p in group]
                descendants = set(chromium_pids())
                if set(pids) <= descendants:
                    break
                await asyncio.sleep(0.2)
            return kinds, pids, rss_bytes(pids), descendants
    kinds, pids, rss, descendants = run(go())
    assert len(kinds["browser"]) == 1 and rss > 0
    assert set(pids) <= descendants  # every one of them was started by this process
    def alive() -> list[int]:
        out = []
        for p in pids:
            try:
                with open(f"/proc/{p}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                        out.append(p)
            except OSError:
                pass
        return out
    deadline = time.monotonic() + 15  # Chromium's children exit just after close() returns; wait for them
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive() == []


def test_the_browser_takes_the_hosts_slot_like_the_local_backend(server, config):
    """web.per_host_concurrency holds for rendered pages too: four pages, four browser pages at
    once allowed, one slot for the host — the server never serves two of them at once."""
    lock, state = threading.Lock(), {"now": 0, "max": 0, "served": 0}

    def counted(req):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
            state["served"] += 1
        return Response(b"<html><body><h1>polite</h1></body></html>")

    urls = [server.route(f"/bb/polite{i}", counted) for i in range(4)]
    config.web.browser.max_pages = 4
    config.web.per_host_concurrency = 1
    config.web.backend = "browser"
    results = web_extract_sync(urls, config=config)
    assert all(r.error is None for r in results), [r.error for r in results]
    assert state["served"] == 4 and state["max"] == 1


def test_robots_txt_obey_holds_for_the_browser_backend(server, config):
    from webshelf.core.fetch import robots

    robots.forget()
    hits = {"private": 0}

    def private(req):
        hits["private"] += 1
        return Response(b"<html><body><h1>private</h1></body></html>")

    server.route("/robots.txt", Response(b"User-agent: *\nDisallow: /bb/private\n", headers={"Content-Type": "text/plain"}))
    blocked = server.route("/bb/private", private)
    allowed = server.route("/bb/public", page("<h1>public</h1>"))
    config.web.robots_txt = "obey"
    config.web.backend = "browser"
    try:
        results = web_extract_sync([blocked, allowed], config=config)
    finally:
        robots.forget()
    assert results[0].error.code == "blocked_by_robots" and "Disallow: /bb/private" in results[0].error.message
    assert results[1].error is None and "public" in results[1].content
    assert hits["private"] == 0  # the browser never asked for it


def test_the_browser_sends_web_headers_and_languages_but_its_own_user_agent(server, config):
    """web.languages as Accept-Language on every request; web.headers on the page's own request
    (and its redirect hops), as the local backend sends them — not on its sub-resources, which
    may come from any host; the User-Agent is Chromium's (pages that refuse webshelf's name must read)."""
    seen: dict[str, dict[str, str]] = {}

    def recorded(name, body=b"<html><body><h1>headers</h1></body></html>", ctype="text/html"):
        def handler(req):
            seen[name] = {k.lower(): v for k, v in req.headers.items()}
            return Response(body, headers={"Content-Type": ctype})
        return handler

    server.route("/bb/h-script.js", recorded("script", b"document.title = 'scripted';", "application/javascript"))
    server.route("/bb/h-page", recorded("page", b"<html><body><h1>headers</h1><script src='/bb/h-script.js'></script>"
                                        b"</body></html>"))
    config.web.headers = {"X-Team": "shelf"}
    config.web.languages = ["de-DE", "en"]

    async def go():
        async with BrowserBackend(config) as backend:
            return await backend.fetch(server.url("/bb/h-page"))
    run(go())
    page, script = seen["page"], seen["script"]
    assert page["x-team"] == "shelf" and page["accept-language"] == "de-DE,en;q=0.9"
    assert "x-team" not in script and script["accept-language"] == "de-DE,en;q=0.9"
    assert "webshelf" not in page["user-agent"].lower() and "Chrome/" in page["user-agent"]
