"""The fallback chain (``web.fallback``) against real pages: a loopback SPA whose text exists
only after JavaScript runs, a page that is 403 for webshelf's User-Agent, and the rules that keep
the chain from sending what it must not (hosted backends, a per-call backend)."""

from __future__ import annotations

import pytest

from tests.core.browser_fixtures import need_browser
from tests.loopback import Response
from webshelf.core.backends.browser.lifecycle import browser_available
from webshelf.core.backends.fallback import error_reason, page_reason
from webshelf.core.backends.selection import default_fallback, fallback_chain
from webshelf.core.config import Config
from webshelf.core.extract import EMPTY_NOTE, web_extract_sync
from webshelf.core.models import Page
from webshelf.errors import ConfigError, FetchTimeoutError, HTTPStatusError

pytestmark = pytest.mark.timeout(120)

SPA = b"""<!doctype html><html><head><title>App</title><script src="/fallback/bundle.js"></script></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"""
BUNDLE = b"""document.addEventListener('DOMContentLoaded', function () {
  setTimeout(function () {
    document.getElementById('root').innerHTML = '<main><h1>Rendered by JavaScript</h1><p>' +
      'This paragraph exists only after the bundle ran in a browser. '.repeat(12) + '</p></main>';
  }, 50);
});"""
JS = {"Content-Type": "application/javascript"}


@pytest.fixture
def spa(server) -> str:
    server.route("/fallback/bundle.js", Response(BUNDLE, headers=JS))
    return server.route("/fallback/spa", Response(SPA))


def test_an_spa_shell_falls_back_to_the_browser_and_says_why(spa, config):
    need_browser()
    config.web.fallback = None  # the default chain: [local, browser] when Chromium is installed
    [r] = web_extract_sync([spa], config=config)
    assert r.error is None
    assert r.backend == "browser"
    assert "# Rendered by JavaScript" in r.content and "exists only after the bundle ran" in r.content
    assert "local backend skipped: near-empty page" in r.notes[0] and "<script>" in r.notes[0]
    assert "produced by the browser backend" in r.notes[1]
    assert "local backend skipped" in r.content  # the notes are rendered inside the budget too


def test_a_page_that_is_403_for_webshelfs_user_agent_is_read_by_the_browser(server, config):
    need_browser()

    def by_agent(req):
        if "webshelf" in req.headers.get("User-Agent", ""):
            return Response(b"<html><body><h1>Access denied</h1></body></html>", 403)
        return Response(b"<html><body><h1>Welcome, browser</h1><p>" + b"Real article text. " * 30 + b"</p></body></html>")

    url = server.route("/fallback/bot-wall", by_agent)
    config.web.fallback = None  # the default chain
    [r] = web_extract_sync([url], config=config)
    assert r.error is None and r.backend == "browser"
    assert "Welcome, browser" in r.content
    assert "HTTP 403, which looks like bot blocking" in r.notes[0]


def test_a_page_that_times_out_for_the_local_backend_is_read_by_the_browser(server, config):
    """A server that goes silent for webshelf's User-Agent (a tarpit for bots) and answers a
    browser: the local backend's read times out (``web.read_timeout_s``: a lower bound, no
    race), the chain goes on, the browser reads it, and the notes say why."""
    import threading

    need_browser()
    done = threading.Event()

    def tarpit(req):
        if "webshelf" in req.headers.get("User-Agent", ""):
            done.wait(30)  # silent until the test ends
            return Response(b"late")
        return Response(b"<html><body><h1>Patient reader</h1><p>" + b"Text the browser reads. " * 30 + b"</p></body></html>")

    url = server.route("/fallback/tarpit", tarpit)
    config.web.fallback = ["local", "browser"]
    config.web.read_timeout_s = 1
    config.web.max_retries = 0
    try:
        [r] = web_extract_sync([url], config=config)
    finally:
        done.set()
    assert r.error is None and r.backend == "browser", r.error
    assert "Patient reader" in r.content
    assert "local backend skipped: timed out" in r.notes[0] and "trying browser" in r.notes[0]


def test_without_the_browser_in_the_chain_the_shell_stays_empty_with_its_note(spa, config):
    config.web.fallback = ["local"]
    [r] = web_extract_sync([spa], config=config)
    assert r.backend == "local" and EMPTY_NOTE in r.notes


def test_a_per_call_backend_is_exactly_that_backend(spa, config):
    [r] = web_extract_sync([spa], config=config, backend="local")
    assert r.backend == "local" and EMPTY_NOTE in r.notes
    assert fallback_chain(config, "local", "local") == ["local"]


def test_an_error_that_is_not_bot_blocking_is_final(server, config):
    config.web.fallback = ["local", "browser"]
    url = server.route("/fallback/gone", Response(b"gone", 404, {"Content-Type": "text/plain"}))
    [r] = web_extract_sync([url], config=config)
    assert r.error.code == "http_status" and r.backend == "local" and r.notes == []


def test_a_hosted_backend_in_the_chain_never_receives_a_private_url(spa, config, monkeypatch):
    """Loopback URLs stay on this machine along the whole chain (core/backends/routing.py)."""
    from tests.providers import FakeProvider

    config.web.fallback = ["local", "firecrawl"]
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test")
    with FakeProvider("firecrawl", key="fc-test", pages={spa: "# leaked"}) as provider:  # a real provider on loopback
        config.web.firecrawl.base_url = provider.base
        [r] = web_extract_sync([spa], config=config)
    assert provider.requests == []  # it counts every request: none
    assert r.backend == "local" and r.error is None
    assert "not sent to firecrawl" in r.notes[1] and "loopback" in r.notes[1]
    assert "no backend of web.fallback read more" in r.notes[1] and EMPTY_NOTE in r.notes


def test_the_default_chain_has_the_browser_only_where_it_can_run(config):
    assert default_fallback(config) == (["local", "browser"] if browser_available() else ["local"])
    config.web.browser.executable_path = "/nonexistent/chromium"
    assert default_fallback(config) == ["local"]
    config.web.fallback = ["local", "browser", "exa"]
    assert fallback_chain(config, "browser") == ["browser", "exa"]
    assert fallback_chain(config, "tavily") == ["tavily"]


def test_what_goes_on_to_the_next_backend():
    shell = Page(url="u", final_url="u", markdown="Loading…", content_type="text/html", scripts=2)
    short = Page(url="u", final_url="u", markdown="Short but complete.", content_type="text/html", scripts=0)
    config = Config()
    assert "near-empty page" in page_reason(shell, config)
    assert page_reason(short, config) is None  # short without scripts is simply short
    assert error_reason(HTTPStatusError("x", status=429)) and error_reason(FetchTimeoutError("x"))
    assert error_reason(HTTPStatusError("x", status=404)) is None


@pytest.mark.parametrize("value, message", [
    (["local", "local"], "names a backend twice"),
    (["local", "auto"], "web.fallback[1]: 'auto' is not one of the choices; choose one of: local, browser"),
])
def test_a_bad_fallback_chain_is_an_error_naming_the_key(home, value, message):
    import yaml

    (home / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"fallback": value}}))
    from webshelf.core.config import load_config

    with pytest.raises(ConfigError) as caught:
        load_config(home / "config.yaml")
    assert message in str(caught.value)
