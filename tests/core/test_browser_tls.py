"""HTTPS in the browser through webshelf's policy proxy, with ``web.ca_bundle`` trusted (real TLS).

A loopback HTTPS server has a certificate from a ``trustme`` test CA for ``shelf-tls.test``; the
browser's CONNECT goes to the policy proxy, which resolves the name through the test resolver
(no DNS), checks the address and tunnels the bytes — TLS stays end to end between Chromium and
the server. With the CA in ``web.ca_bundle`` Chromium accepts the chain (its SPKI allow-list
holds exactly that CA's key); without it the page is a certificate error naming the setting,
and a certificate from another CA is refused even with a bundle set.
"""

from __future__ import annotations

import pytest

from tests.core.browser_fixtures import fresh_browser_services, run, spa_page  # noqa: F401 — a fixture
from tests.loopback import LoopbackServer, Response
from webshelf.core.backends.browser import service as browser_service
from webshelf.core.backends.browser.backend import BrowserBackend
from webshelf.core.config import Config
from webshelf.errors import BackendError, WebshelfError

pytest.importorskip("trustme", reason="trustme makes the test CA (pip install 'webshelf[test]')")
from tests.tlsserver import TLS_NAME, TestCA  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PAGE = spa_page("tls", "Rendered over TLS", "Verified words.")
pytestmark = [pytestmark, pytest.mark.usefixtures("fresh_browser_services")]


async def resolver(host: str, port: int) -> list[str]:
    if host != TLS_NAME:
        raise OSError(f"no such name {host}")
    return ["127.0.0.1"]


def cfg(home, **web) -> Config:
    return Config.model_validate({"web": {"allow_hosts": ["127.0.0.1/32"], **web}}).with_home(home)


def render(config: Config, url: str):
    async def go():
        async with BrowserBackend(config, resolver=resolver) as backend:
            try:
                return await backend.fetch(url)
            except BackendError as exc:
                return exc
    return run(go())


@pytest.fixture
def ca(tmp_path):
    return TestCA(tmp_path)


def test_an_https_page_renders_through_the_policy_proxy_with_the_ca_trusted(home, ca):
    with LoopbackServer(tls=ca.server_context(present_ca=True), name=TLS_NAME) as site:
        url = site.route("/tls/page", Response(PAGE))
        page = render(cfg(home, ca_bundle=str(ca.pem)), url)
        hits = dict(site.hits)
    assert not isinstance(page, Exception), page
    assert "# Rendered over TLS" in page.markdown and page.final_url == url
    assert hits == {"/tls/page": 1}


def test_without_the_ca_the_certificate_error_names_the_setting(home, ca):
    with LoopbackServer(tls=ca.server_context(present_ca=True), name=TLS_NAME) as site:
        error = render(cfg(home), site.route("/tls/untrusted", Response(PAGE)))
        hits = dict(site.hits)
    assert isinstance(error, BackendError)
    assert "TLS certificate verification failed" in error.message and "web.ca_bundle" in error.message
    assert "/tls/untrusted" not in hits


def test_the_bundle_trusts_only_its_own_ca(home, ca, tmp_path):
    (tmp_path / "other").mkdir()
    other = TestCA(tmp_path / "other")
    with LoopbackServer(tls=other.server_context(present_ca=True), name=TLS_NAME) as site:  # signed by a CA not in the bundle
        error = render(cfg(home, ca_bundle=str(ca.pem)), site.route("/tls/other", Response(PAGE)))
        hits = dict(site.hits)
    assert isinstance(error, BackendError) and "TLS certificate verification failed" in error.message
    assert "/tls/other" not in hits


def test_a_server_presenting_only_its_leaf_is_not_trusted_by_the_browser(home, ca):
    """Chromium's SPKI allow-list matches the chain the server sends (README says so): an https
    server that omits the CA certificate is a certificate error in the browser, though the local
    backend (which has the CA as a trust anchor) reads it."""
    with LoopbackServer(tls=ca.server_context(), name=TLS_NAME) as site:
        error = render(cfg(home, ca_bundle=str(ca.pem)), site.route("/tls/leaf-only", Response(PAGE)))
    assert isinstance(error, BackendError) and "TLS certificate verification failed" in error.message


def test_the_browser_goes_through_web_proxy_after_the_policy(home, ca, server):
    """web.proxy for the browser: the policy proxy checks each target, then tunnels through the
    configured proxy (a real loopback CONNECT proxy recording what it was asked for) — an http
    page and an https one (real TLS, the CA trusted); a blocked target never reaches the proxy."""
    from tests.proxyserver import ForwardProxy

    hostile = PAGE.replace(b"</body>", b"<script>fetch('http://127.0.0.3:9/secret').catch(()=>{});"
                                       b"fetch('http://169.254.169.254/latest/').catch(()=>{});</script></body>")
    http_url = server.route("/tls/plain", Response(hostile))
    with LoopbackServer(tls=ca.server_context(present_ca=True), name=TLS_NAME) as site, \
            ForwardProxy(hosts={TLS_NAME: "127.0.0.1"}) as proxy:
        https_url = site.route("/tls/proxied", Response(PAGE))
        config = cfg(home, ca_bundle=str(ca.pem), proxy=proxy.url())
        pages = [render(config, https_url), render(config, http_url)]
    assert all(not isinstance(p, Exception) and "# Rendered over TLS" in p.markdown for p in pages), pages
    asked = [(r["method"], r["target"]) for r in proxy.requests]
    https_port, http_port = https_url.split(":")[2].split("/")[0], http_url.split(":")[2].split("/")[0]
    assert asked == [("CONNECT", f"{TLS_NAME}:{https_port}"), ("CONNECT", f"127.0.0.1:{http_port}")]  # no more:
    # the script's fetches of 127.0.0.3 and the metadata address were refused before any proxy


def test_the_browser_goes_through_a_socks5_proxy_with_credentials(home, server):
    from tests.proxyserver import ForwardProxy

    url = server.route("/tls/socks", Response(PAGE))
    with ForwardProxy(auth=("alice", "s3cret-pw")) as proxy:
        page = render(cfg(home, proxy=proxy.url("socks5", "alice:s3cret-pw")), url)
    assert not isinstance(page, Exception) and "# Rendered over TLS" in page.markdown, page
    port = url.split(":")[2].split("/")[0]
    assert [(r["method"], r["target"]) for r in proxy.requests] == [("SOCKS5 CONNECT", f"127.0.0.1:{port}")]


def test_a_certificate_error_is_one_whatever_the_port_or_chromium_s_own_probes():
    """Playwright says "net::ERR_CERT_… at URL"; the URL's port 40363 held "403", the proxy's refusal
    marker, and a captive-portal probe Chromium sends on certificate errors (connectivitycheck.
    gstatic.com, refused by the page's proxy) made the page "refused" (a CI run of the test above)."""
    from types import SimpleNamespace

    url = "https://shelf-tls.test:40363/tls/other"
    proxy = SimpleNamespace(blocked=["connectivitycheck.gstatic.com:80: cannot resolve"], proxy_failed=[], over_cap=False)
    browser = SimpleNamespace(is_connected=lambda: True)
    error = BrowserBackend._goto_error(SimpleNamespace(), url, Exception(f"net::ERR_CERT_AUTHORITY_INVALID at {url}"),
                                       proxy, browser)
    assert isinstance(error, BackendError) and "TLS certificate verification failed" in error.message
    refused = BrowserBackend._goto_error(SimpleNamespace(), url, Exception(f"net::ERR_TUNNEL_CONNECTION_FAILED at {url}"),
                                         proxy, browser)
    assert type(refused).__name__ == "BlockedURLError"


@pytest.mark.parametrize("scheme", ["http", "socks5"])
def test_wrong_proxy_credentials_in_the_browser_never_show_them(home, server, caplog, monkeypatch, scheme):
    """The browser's upstream proxy refuses the credentials (a real loopback proxy): the error
    and the refusal the proxy recorded name the proxy as scheme://***@host:port, and neither
    they, the log (DEBUG) nor the config's repr hold the password from ``${ENV}``."""
    import logging

    from tests.proxyserver import ForwardProxy
    from webshelf.core.config import parse_config

    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("PROXY_PW", "wrong-pa55")
    url = server.route("/tls/creds", Response(PAGE))
    with ForwardProxy(auth=("alice", "right")) as proxy:
        config = parse_config({"web": {"allow_hosts": ["127.0.0.1/32"],
                                       "proxy": f"{scheme}://alice:${{PROXY_PW}}@127.0.0.2:{proxy.port}"}},
                              home / "c.yaml").with_home(home)

        async def go():
            async with BrowserBackend(config, resolver=resolver) as backend:
                try:
                    return await backend.fetch(url), backend.blocked
                except WebshelfError as exc:
                    return exc, backend.blocked
        result, blocked = run(go())
    assert isinstance(result, WebshelfError) and result.code == "proxy_failed", result  # as for the local backend
    shown = f"{scheme}://***@127.0.0.2:{proxy.port}"
    assert shown in result.message and "credentials" in result.message
    assert any(shown in b for b in blocked[url]), blocked
    for text in (result.message, *blocked[url], caplog.text, repr(config)):
        assert "wrong-pa55" not in text
