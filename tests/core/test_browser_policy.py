"""The browser backend's address policy, proven by hostile pages (README "Security").

A page on an allowed host (127.0.0.1, allowed by ``web.allow_hosts: [127.0.0.1/32]``) runs
scripts that aim at a SECOND loopback server on 127.0.0.2 — not allowed — with fetch, XHR,
WebSocket, images, an iframe, and names that resolve there; that server counts every TCP
connection it accepts, and must count 0. Redirects to it and DNS answers that change between
the page's lookup and a script's lookup are refused the same way."""

from __future__ import annotations

import asyncio

import pytest

from tests.core.browser_fixtures import CountingServer, need_browser, run, target  # noqa: F401
from tests.loopback import Response
from webshelf.core.backends.browser.backend import BrowserBackend
from webshelf.core.backends.browser.proxy import PolicyProxy
from webshelf.core.config import Config
from webshelf.core.fetch.netpolicy import Policy
from webshelf.errors import BlockedURLError

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _browser():
    need_browser()


def allow_only_127_0_0_1(home) -> Config:
    config = Config().with_home(home)
    config.web.allow_hosts = ["127.0.0.1/32"]
    config.web.browser.wait_ms = 3000
    return config


def names_to(mapping: dict[str, str]):
    async def resolver(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise OSError(f"no such name {host}")
        return [mapping[host]]
    return resolver


def render(config: Config, url: str, resolver=None):
    async def go():
        async with BrowserBackend(config, resolver=resolver) as backend:
            try:
                return await backend.fetch(url), backend.blocked[url]
            except BlockedURLError as exc:
                return exc, backend.blocked.get(url, [])
    return run(go())


def hostile_page(t: CountingServer) -> bytes:
    base, port = t.base, t.port
    targets = [f"{base}/fetch", f"http://evil.test:{port}/named", f"http://localhost:{port}/localhost",
               f"http://169.254.169.254/latest/meta-data/", f"http://2130706434:{port}/decimal"]
    script = "".join(f"fetch({u!r}).catch(()=>{{}});" for u in targets)
    return f"""<!doctype html><html><head><title>hostile</title></head><body>
<h1>A page with an agenda</h1><p>{'Readable text of the hostile page. ' * 10}</p>
<img src="{base}/img.png"><iframe src="{base}/frame"></iframe><link rel=stylesheet href="{base}/style.css">
<script>
{script}
var x = new XMLHttpRequest(); x.open('GET', '{base}/xhr'); x.send();
try {{ new WebSocket('ws://127.0.0.2:{port}/ws'); }} catch (e) {{}}
try {{ new WebSocket('ws://evil.test:{port}/ws'); }} catch (e) {{}}
navigator.sendBeacon && navigator.sendBeacon('{base}/beacon', 'x');
if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(()=>{{}});
document.querySelector('h1').textContent += ' (script ran)';
</script></body></html>""".encode()


def test_a_hostile_pages_requests_to_a_second_loopback_server_never_reach_it(server, home, target):
    url = server.route("/browser/hostile", Response(hostile_page(target)))
    page, blocked = render(allow_only_127_0_0_1(home), url, names_to({"evil.test": "127.0.0.2"}))
    assert "A page with an agenda" in page.markdown and "script ran" in page.markdown
    assert target.connections == 0
    assert blocked, "the proxy records what it refused"
    assert any("127.0.0.2" in b for b in blocked)


def test_a_redirect_to_a_blocked_host_is_refused_and_never_followed(server, home, target):
    url = server.route("/browser/redirect", Response(b"", 302, {"Location": f"{target.base}/after-redirect"}))
    result, blocked = render(allow_only_127_0_0_1(home), url)
    assert isinstance(result, BlockedURLError)
    assert "127.0.0.2" in result.message and "loopback" in result.message
    assert target.connections == 0


def test_dns_answers_that_change_between_lookups_get_no_second_chance(server, home, target):
    """rebind.test answers the allowed 127.0.0.1 for the page, then 127.0.0.2 for the script."""
    answers = iter(["127.0.0.1"])

    async def rebinding(host: str, port: int) -> list[str]:
        return [next(answers, "127.0.0.2")] if host == "rebind.test" else []

    page_port = server.base.rsplit(":", 1)[1]
    body = f"""<html><body><h1>Rebinding</h1><p>{'Text of the rebinding page. ' * 10}</p>
<script>fetch('http://rebind.test:{target.port}/steal').catch(()=>{{}});
var i = new Image(); i.src = 'http://rebind.test:{target.port}/img';</script></body></html>""".encode()
    server.route("/browser/rebind", Response(body))
    page, blocked = render(allow_only_127_0_0_1(home), f"http://rebind.test:{page_port}/browser/rebind", rebinding)
    assert "Rebinding" in page.markdown
    assert target.connections == 0
    assert any("rebind.test" in b and "127.0.0.2" in b for b in blocked)


def test_the_page_itself_on_a_blocked_address_is_refused(home, target):
    async def go():
        async with BrowserBackend(allow_only_127_0_0_1(home), resolver=names_to({"evil.test": "127.0.0.2"})) as b:
            with pytest.raises(BlockedURLError):
                await b.fetch(f"http://evil.test:{target.port}/")
    run(go())
    assert target.connections == 0


def test_the_proxy_alone_refuses_blocked_targets_and_pins_the_checked_address(target):
    """The proxy without a browser: CONNECT and absolute-URI requests to blocked addresses get
    403 and never connect; an allowed name connects to the address its one lookup returned."""

    async def resolver(host, port):
        return ["127.0.0.2"]

    async def ask(proxy: PolicyProxy, request: str) -> bytes:
        host, port = proxy.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(request.encode())
        answer = await reader.read(300)
        writer.close()
        return answer

    async def go():
        allowed = await PolicyProxy(Policy.from_config(type("W", (), {"allow_hosts": ["127.0.0.2/32"]})()),
                                    resolver=resolver).start()
        refusing = await PolicyProxy(Policy(), resolver=resolver).start()
        try:
            tunnel = await ask(refusing, f"CONNECT 127.0.0.2:{target.port} HTTP/1.1\r\n\r\n")
            plain = await ask(refusing, f"GET http://named.test:{target.port}/ HTTP/1.1\r\nHost: named.test\r\n\r\n")
            reached_before = target.connections
            ok = await ask(allowed, f"GET http://named.test:{target.port}/ HTTP/1.1\r\nHost: named.test\r\n\r\n")
            return tunnel, plain, reached_before, ok, refusing.blocked
        finally:
            await allowed.close()
            await refusing.close()

    tunnel, plain, reached_before, ok, blocked = run(go())
    assert tunnel.startswith(b"HTTP/1.1 403") and plain.startswith(b"HTTP/1.1 403")
    assert b"X-Webshelf-Blocked" in tunnel
    assert reached_before == 0
    assert len(blocked) == 2 and all("127.0.0.2" in b and "loopback" in b for b in blocked)
    assert ok.startswith(b"HTTP/1.1 200") and ok.endswith(b"secret")
    assert target.connections == 1


def test_a_websocket_passes_the_policy_with_its_own_lookup(server, home, target):
    """Only the WebSocket uses the name ws-evil.test (it resolves to the blocked 127.0.0.2): the
    proxy's record of that name shows the socket went through the policy, and the target counts 0."""
    body = f"""<html><body><h1 id=o>Sockets</h1><p>{'Text of the socket page. ' * 10}</p><script>
var ws = new WebSocket('ws://ws-evil.test:{target.port}/ws');
ws.onerror = function () {{ document.getElementById('o').textContent = 'Sockets: refused'; }};
ws.onopen = function () {{ document.getElementById('o').textContent = 'Sockets: OPEN'; }};
</script></body></html>""".encode()
    url = server.route("/browser/ws", Response(body))
    page, blocked = render(allow_only_127_0_0_1(home), url, names_to({"ws-evil.test": "127.0.0.2"}))
    assert "Sockets: refused" in page.markdown and "OPEN" not in page.markdown
    assert target.connections == 0
    assert any("ws-evil.test" in b and "127.0.0.2" in b for b in blocked), blocked


def test_service_workers_never_run(server, home, target):
    """A page that registers a service worker (which would fetch the blocked target from outside
    the page): the worker script is never even requested, so no worker runs, and the target
    counts 0. (Playwright's ``service_workers="block"`` lets ``register()`` resolve — a page
    cannot tell — but Chromium never fetches the script.)"""
    worker = f"fetch('{target.base}/from-worker');".encode()
    server.route("/browser/sw.js", Response(worker, headers={"Content-Type": "application/javascript"}))
    body = b"""<html><body><h1 id=o>Workers</h1><p>""" + b"Text of the worker page. " * 10 + b"""</p><script>
navigator.serviceWorker.register('/browser/sw.js').then(
  function () { document.getElementById('o').textContent = 'Workers: asked'; },
  function (e) { document.getElementById('o').textContent = 'Workers: asked, ' + e.name; });
</script></body></html>"""
    url = server.route("/browser/sw", Response(body))
    page, _ = render(allow_only_127_0_0_1(home), url)
    assert "Workers: asked" in page.markdown  # the script ran and asked
    assert server.hits.get("/browser/sw") == 1 and "/browser/sw.js" not in server.hits
    assert target.connections == 0
