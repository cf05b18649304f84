"""web.proxy, web.trust_env_proxy, web.headers, web.languages — against a real loopback forward proxy.

The proxy (tests/proxyserver.py) listens on 127.0.0.2 and records every request line and header;
the target pages are on 127.0.0.1, which the tests allow by ``web.allow_hosts``. So the proxy's
own loopback address is *not* allowed by the policy and must still work (operator configuration),
while every target still passes the policy — a refused target never reaches the proxy.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import SecretStr

from webshelf.core.backends.local import LocalBackend
from webshelf.core.config import Config, parse_config
from webshelf.core.extract import web_extract_sync
from webshelf.core.fetch.proxy import browser_proxy, proxy_for
from webshelf.errors import ConfigError
from tests.loopback import Response
from tests.proxyserver import ForwardProxy

PAGE = b"<html><head><title>Through</title></head><body><main><h1>Through the proxy</h1>" + b"<p>words here. </p>" * 40 + b"</main></body></html>"


def cfg(home, **web: object) -> Config:
    return Config.model_validate({"web": {"allow_hosts": ["127.0.0.1"], **web}}).with_home(home)


def fetch(config: Config, url: str, **kw):
    async def run():
        async with LocalBackend(config, **kw) as backend:
            return await backend.fetch(url)

    return asyncio.run(run())


@pytest.fixture
def page_url(server):
    return server.route("/proxy/page", Response(PAGE))


def test_http_target_goes_through_the_http_proxy_with_the_configured_headers(home, page_url):
    with ForwardProxy() as proxy:
        config = cfg(home, proxy=proxy.url(), user_agent="test-agent/1.0", languages=["en-GB", "en", "fr"],
                     headers={"X-Team": "research"})
        page = fetch(config, page_url)
    assert "Through the proxy" in page.markdown
    [asked] = proxy.requests
    assert (asked["method"], asked["target"]) == ("GET", page_url)  # absolute-form: a forward proxy
    assert asked["headers"]["user-agent"] == "test-agent/1.0"
    assert asked["headers"]["accept-language"] == "en-GB,en;q=0.9,fr;q=0.8"
    assert asked["headers"]["x-team"] == "research"


def test_headers_are_sent_without_a_proxy_too(home, server):
    seen = {}

    def handler(req):
        seen.update({k.lower(): v for k, v in req.headers.items()})
        return Response(PAGE)

    url = server.route("/proxy/headers", handler)
    fetch(cfg(home, languages=["de"], headers={"X-Team": "a"}), url)
    assert (seen["accept-language"], seen["x-team"]) == ("de", "a")
    assert seen["user-agent"].startswith("webshelf/")


def test_https_target_goes_through_a_connect_tunnel(home, server):
    port = server.base.rsplit(":", 1)[1]
    with ForwardProxy() as proxy:
        results = web_extract_sync([f"https://127.0.0.1:{port}/proxy/tls"], config=cfg(home, proxy=proxy.url()))
    assert [(r["method"], r["target"]) for r in proxy.requests] == [("CONNECT", f"127.0.0.1:{port}")]
    assert results[0].error is not None  # the loopback server speaks no TLS: the handshake inside the tunnel fails


def test_socks5_proxy_with_credentials(home, page_url, monkeypatch):
    monkeypatch.setenv("SOCKS_PW", "s3cret-pw")
    with ForwardProxy(auth=("alice", "s3cret-pw")) as proxy:
        config = parse_config({"web": {"allow_hosts": ["127.0.0.1"],
                                       "proxy": f"socks5://alice:${{SOCKS_PW}}@127.0.0.2:{proxy.port}"}},
                              home / "c.yaml").with_home(home)
        page = fetch(config, page_url)
    assert "Through the proxy" in page.markdown
    port = page_url.split(":")[2].split("/")[0]
    assert [(r["method"], r["target"]) for r in proxy.requests] == [("SOCKS5 CONNECT", f"127.0.0.1:{port}")]


def test_a_blocked_target_never_reaches_the_proxy(home, server):
    port = server.base.rsplit(":", 1)[1]
    with ForwardProxy() as proxy:
        results = web_extract_sync([f"http://127.0.0.3:{port}/x", "http://169.254.169.254/latest/meta-data/"],
                                   config=cfg(home, proxy=proxy.url()))
    assert [r.error.code for r in results] == ["blocked_url", "blocked_url"]
    assert proxy.requests == []


def test_the_target_name_is_resolved_and_checked_here_before_the_proxy_gets_it(home):
    async def resolver(host, port):
        return ["10.1.2.3"] if host == "intranet.example.com" else ["93.184.215.14"]

    with ForwardProxy() as proxy:
        config = cfg(home, proxy=proxy.url())
        with pytest.raises(Exception) as err:
            fetch(config, "http://intranet.example.com/wiki", resolver=resolver)
    assert getattr(err.value, "code", None) == "blocked_url"
    assert "10.1.2.3" in str(err.value) and "a private address" in str(err.value)
    assert proxy.requests == []


def test_wrong_proxy_credentials_are_a_proxy_error_that_never_shows_them(home, page_url, monkeypatch, caplog):
    monkeypatch.setenv("PROXY_PW", "wrong-pa55")
    caplog.set_level(logging.DEBUG)
    with ForwardProxy(auth=("alice", "right")) as proxy:
        config = parse_config({"web": {"allow_hosts": ["127.0.0.1"],
                                       "proxy": f"http://alice:${{PROXY_PW}}@127.0.0.2:{proxy.port}"}},
                              home / "c.yaml").with_home(home)
        [result] = web_extract_sync([page_url], config=config)
        assert proxy.requests[0]["headers"]["proxy-authorization"].startswith("Basic ")
    assert result.error.code == "proxy_failed"
    assert "407" in result.error.message and f"http://***@127.0.0.2:{proxy.port}" in result.error.message
    for text in (result.error.message, caplog.text, repr(config), config.model_dump_json()):
        assert "wrong-pa55" not in text


def test_an_unreachable_proxy_is_named(home, page_url):
    with ForwardProxy() as proxy:
        dead = proxy.url()
    [result] = web_extract_sync([page_url], config=cfg(home, proxy=dead))
    assert result.error.code == "proxy_failed" and "cannot reach the proxy" in result.error.message


def test_trust_env_proxy_honours_http_proxy_and_no_proxy(home, page_url, monkeypatch):
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url())
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        fetch(cfg(home), page_url)
        assert proxy.requests == []  # off by default: the environment is not read
        fetch(cfg(home, trust_env_proxy=True), page_url)
        assert len(proxy.requests) == 1
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        fetch(cfg(home, trust_env_proxy=True), page_url)
        assert len(proxy.requests) == 1


def test_per_backend_override_and_the_browser_settings(home, page_url):
    with ForwardProxy() as proxy:
        config = cfg(home, proxy=proxy.url(userinfo="u:p%40ss"), proxy_by_backend={"local": "direct"})
        fetch(config, page_url)
        assert proxy.requests == []
    assert proxy_for(config, "local") is None
    assert browser_proxy(config) == {"server": f"http://127.0.0.2:{proxy.port}", "username": "u", "password": "p@ss"}


def test_hosted_clients_use_the_proxy(home):
    from tests.core.test_hosted_backends import KEY, PAGES, hosted_config
    from tests.providers import FakeProvider

    url = next(iter(PAGES))
    with FakeProvider("firecrawl", key=KEY, pages=PAGES) as fake, ForwardProxy() as proxy:
        config = hosted_config(home, "firecrawl", fake.base, proxy=proxy.url())
        [result] = web_extract_sync([url], config=config)
    assert result.error is None
    assert [(r["method"], r["target"]) for r in proxy.requests] == [("POST", fake.base + "/v2/scrape")]


@pytest.mark.parametrize("web, words", [
    ({"proxy": "ftp://p:21"}, "web.proxy: proxy scheme 'ftp' is not supported"),
    ({"proxy": "http://p:3128/path"}, "scheme://[user:password@]host:port and nothing else"),
    ({"proxy_by_backend": {"lcoal": "direct"}}, "'lcoal' is not a backend"),
    ({"headers": {"Host": "x"}}, "header 'Host' cannot be set"),
    ({"headers": {"User-Agent": "x"}}, "set User-Agent with web.user_agent"),
    ({"headers": {"X-A": "a\r\nB: c"}}, "must be one line"),
    ({"languages": ["en_GB"]}, "'en_GB' is not a language tag"),
])
def test_bad_proxy_and_header_settings_name_the_key(tmp_path, web, words):
    with pytest.raises(ConfigError) as err:
        parse_config({"web": web}, tmp_path / "c.yaml")
    assert words in str(err.value)


def test_the_proxy_url_is_a_secret_in_the_config(home):
    config = cfg(home, proxy="http://u:pw-123@127.0.0.2:3128")
    assert isinstance(config.web.proxy, SecretStr) and "pw-123" not in repr(config)
    assert repr(proxy_for(config, "local")) == "ProxySettings('http://***@127.0.0.2:3128')"
