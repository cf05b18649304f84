"""HTTPS through a CONNECT proxy with real TLS, and ``web.ca_bundle``.

A loopback HTTPS server (tests/loopback.py ``tls=``) has a certificate from a ``trustme`` test CA
(tests/tlsserver.py) for the name ``shelf-tls.test``; the real CONNECT proxy (tests/proxyserver.py)
records every CONNECT and the address it connected to. webshelf resolves the name through the
resolver seam (no DNS), checks the address, and hands the name to the proxy: with the CA in
``web.ca_bundle`` the page arrives over TLS verified end to end; without it the error is a TLS
error naming the setting — never a silent fallback to unverified TLS.
"""

from __future__ import annotations

import asyncio

import pytest

from webshelf.core.backends.local import LocalBackend
from webshelf.core.config import Config
from webshelf.errors import ConfigError, FetchError
from tests.loopback import LoopbackServer, Response
from tests.proxyserver import ForwardProxy

pytest.importorskip("trustme", reason="trustme makes the test CA (pip install 'webshelf[test]')")
from tests.tlsserver import TLS_NAME, TestCA  # noqa: E402

PAGE = b"<html><head><title>Secure</title></head><body><main><h1>Over real TLS</h1>" + b"<p>verified words. </p>" * 40 + b"</main></body></html>"


async def test_resolver(host: str, port: int) -> list[str]:
    assert host == TLS_NAME, f"only the test name is resolved here, not {host!r}"
    return ["127.0.0.1"]

test_resolver.__test__ = False  # type: ignore[attr-defined]


def cfg(home, **web: object) -> Config:
    return Config.model_validate({"web": {"allow_hosts": ["127.0.0.1"], "max_retries": 0, **web}}).with_home(home)


def fetch(config: Config, url: str):
    async def run():
        async with LocalBackend(config, resolver=test_resolver) as backend:
            return await backend.fetch(url)

    return asyncio.run(run())


@pytest.fixture
def ca(tmp_path):
    return TestCA(tmp_path)


@pytest.fixture
def site(ca):
    with LoopbackServer(tls=ca.server_context(), name=TLS_NAME) as srv:
        yield srv


def test_https_through_a_connect_proxy_with_the_ca_bundle(home, ca, site):
    url = site.route("/secure/page", Response(PAGE))
    port = url.split(":")[2].split("/")[0]
    with ForwardProxy(hosts={TLS_NAME: "127.0.0.1"}) as proxy:
        page = fetch(cfg(home, proxy=proxy.url(), ca_bundle=str(ca.pem)), url)
    assert "Over real TLS" in page.markdown and page.final_url == url
    assert [(r["method"], r["target"], r.get("connected")) for r in proxy.requests] == \
        [("CONNECT", f"{TLS_NAME}:{port}", "127.0.0.1")]  # one tunnel, to the address webshelf checked
    assert site.hits == {"/secure/page": 1}


def test_without_the_ca_the_tls_error_names_the_setting(home, site):
    url = site.route("/secure/untrusted", Response(PAGE))
    with ForwardProxy(hosts={TLS_NAME: "127.0.0.1"}) as proxy:
        with pytest.raises(FetchError) as err:
            fetch(cfg(home, proxy=proxy.url()), url)
    assert err.value.code == "fetch_failed"  # not proxy_failed: the tunnel worked, the certificate did not verify
    message = err.value.message
    assert "TLS certificate verification failed" in message and "web.ca_bundle" in message
    assert "unable to get local issuer certificate" in message or "self-signed" in message or "self signed" in message
    assert [r["method"] for r in proxy.requests] == ["CONNECT"]
    assert "/secure/untrusted" not in site.hits  # no request was sent over an unverified connection


def test_the_ca_bundle_works_without_a_proxy_too(home, ca, site):
    page = fetch(cfg(home, ca_bundle=str(ca.pem)), site.route("/secure/direct", Response(PAGE)))
    assert "Over real TLS" in page.markdown


def test_the_ca_bundle_is_added_to_the_default_roots_not_a_replacement(home, ca):
    from webshelf.core.fetch.tls import ssl_context

    default = len(ssl_context(cfg(home), "local").get_ca_certs())
    with_ca = len(ssl_context(cfg(home, ca_bundle=str(ca.pem)), "local").get_ca_certs())
    assert default > 50 and with_ca == default + 1


def test_a_per_backend_bundle_overrides_the_general_one(home, ca, site, tmp_path):
    (tmp_path / "other").mkdir()
    other = TestCA(tmp_path / "other").pem  # another CA: the site's certificate does not chain to it
    config = cfg(home, ca_bundle=str(other), ca_bundle_by_backend={"local": str(ca.pem)})
    assert "Over real TLS" in fetch(config, site.route("/secure/per-backend", Response(PAGE))).markdown


@pytest.mark.parametrize("content", [None, b"not a certificate\n"])
def test_an_unreadable_ca_bundle_is_a_config_error_naming_the_key(home, tmp_path, content):
    path = tmp_path / "bundle.pem"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError) as err:
        LocalBackend(cfg(home, ca_bundle=str(path)))
    assert err.value.context.get("key") == "web.ca_bundle" and str(path) in err.value.message
    assert "PEM" in err.value.message


def test_per_backend_bundles_name_known_backends(home):
    with pytest.raises(Exception) as err:
        cfg(home, ca_bundle_by_backend={"lcoal": "/x.pem"})
    assert "'lcoal' is not a backend" in str(err.value)


@pytest.mark.parametrize("trusted", [True, False])
def test_hosted_clients_use_the_ca_bundle(home, ca, trusted):
    """A hosted provider behind a TLS-inspecting proxy: its API answers with a certificate of the test CA."""
    from webshelf.core.extract import web_extract_sync
    from tests.core.test_hosted_backends import KEY, PAGES, hosted_config
    from tests.providers import FakeProvider

    url = next(iter(PAGES))
    with FakeProvider("firecrawl", key=KEY, pages=PAGES) as fake:
        fake._server.socket = ca.server_context().wrap_socket(fake._server.socket, server_side=True,
                                                              do_handshake_on_connect=False)
        base = fake.base.replace("http://", "https://")
        web = {"ca_bundle": str(ca.pem)} if trusted else {}
        [result] = web_extract_sync([url], config=hosted_config(home, "firecrawl", base, max_retries=0, **web))
    if trusted:
        assert result.error is None and "Body of page 0" in result.content
    else:
        assert result.error.code == "backend_error"
        assert "TLS certificate verification failed" in result.error.message and "web.ca_bundle" in result.error.message
