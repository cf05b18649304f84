"""The address policy over real sockets: the loopback server stands in for every internal service
an attacker would aim at. Each test names the case it proves (README "Security")."""

from __future__ import annotations

import asyncio
import os

import pytest

from webshelf.core.backends.local import LocalBackend
from webshelf.core.config import Config
from webshelf.errors import BlockedURLError, TooManyRedirectsError
from webshelf.core.extract import web_extract_sync
from tests.loopback import Response

TEXT = {"Content-Type": "text/plain"}


def fetch(config: Config, url: str, resolver=None):
    async def go():
        async with LocalBackend(config, resolver=resolver) as backend:
            return await backend.fetch(url)
    return asyncio.run(go())


@pytest.fixture
def strict(home) -> Config:
    """The default policy: nothing private is allowed."""
    return Config().with_home(home)


def test_loopback_is_refused_without_an_opt_in_and_never_contacted(server, strict):
    url = server.route("/policy/secret-admin", Response(b"admin panel\n", headers=TEXT))
    [r] = web_extract_sync([url], config=strict)
    assert r.error.code == "blocked_url"
    assert "127.0.0.1 is a loopback address" in r.error.message and "web.allow_hosts" in r.error.message
    assert server.hits.get("/policy/secret-admin", 0) == 0


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]", "localhost"])
def test_odd_spellings_of_loopback_are_refused_before_any_connection(server, strict, host):
    path = f"/policy/odd-{host.strip('[]').replace(':', '_')}"
    server.route(path, Response(b"x\n", headers=TEXT))
    port = server.base.rsplit(":", 1)[1]
    [r] = web_extract_sync([f"http://{host}:{port}{path}"], config=strict)
    assert r.error.code == "blocked_url", r
    assert server.hits.get(path, 0) == 0


def test_allow_private_and_allow_hosts_reach_the_loopback_server(server, strict):
    url = server.route("/policy/opt-in", Response(b"reachable\n", headers=TEXT))
    strict.web.allow_hosts = ["127.0.0.1"]
    assert web_extract_sync([url], config=strict)[0].content == "reachable\n"
    strict.web.allow_hosts = []
    strict.web.allow_private = True
    # fresh: really reach the server again (a cached copy would carry its note in the content)
    assert web_extract_sync([url], config=strict, fresh=True)[0].content == "reachable\n"


def test_a_name_resolving_to_loopback_via_real_dns_is_refused(server, strict):
    """The system resolver (here /etc/hosts) answers with 127.0.0.1 for this machine's name."""
    import socket

    name = socket.gethostname()
    addresses = {i[4][0] for i in socket.getaddrinfo(name, None)}
    assert addresses, f"{name} does not resolve"
    port = server.base.rsplit(":", 1)[1]
    server.route("/policy/by-name", Response(b"x\n", headers=TEXT))
    [r] = web_extract_sync([f"http://{name}:{port}/policy/by-name"], config=strict)
    if all(a.startswith("127.") or a == "::1" for a in addresses):
        assert r.error.code == "blocked_url" and "resolves to 127." in r.error.message
        assert server.hits.get("/policy/by-name", 0) == 0
    else:  # a public address for this host: the check still ran on every answer
        assert r.error is None or r.error.code != "internal_error"


def test_every_address_dns_returns_is_checked(server, strict):
    """One public and one loopback answer: the loopback one refuses the host."""
    calls = []

    async def resolver(host, port):
        calls.append(host)
        return ["93.184.216.34", "127.0.0.1"]

    port = server.base.rsplit(":", 1)[1]
    with pytest.raises(BlockedURLError, match=r"site\.test resolves to 127\.0\.0\.1, a loopback address"):
        fetch(strict, f"http://site.test:{port}/policy/mixed", resolver)
    assert calls == ["site.test"]


def test_dns_rebinding_gets_no_second_lookup(server, strict):
    """A rebinding resolver answers the allowed 127.0.0.1 once, then 127.0.0.2 (not allowed):
    the fetch must connect to the address it checked, with one lookup."""
    strict.web.allow_hosts = ["127.0.0.1/32"]
    calls = []

    async def rebinding(host, port):
        calls.append(host)
        return ["127.0.0.1"] if len(calls) == 1 else ["127.0.0.2"]

    server.route("/policy/rebind", Response(b"checked address\n", headers=TEXT))
    port = server.base.rsplit(":", 1)[1]
    page = fetch(strict, f"http://rebind.test:{port}/policy/rebind", rebinding)
    assert page.markdown == "checked address\n"
    assert calls == ["rebind.test"]


def test_the_host_header_keeps_the_name_while_connecting_to_the_checked_ip(server, strict):
    strict.web.allow_hosts = ["127.0.0.1"]
    seen = {}

    def handler(req):
        seen["host"] = req.headers["Host"]
        return Response(b"ok\n", headers=TEXT)

    async def resolver(host, port):
        return ["127.0.0.1"]

    server.route("/policy/host-header", handler)
    port = server.base.rsplit(":", 1)[1]
    fetch(strict, f"http://named.test:{port}/policy/host-header", resolver)
    assert seen["host"] == f"named.test:{port}"


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://localhost/admin",
                                    "http://[::1]/", "http://10.0.0.1/", "file:///etc/passwd", "ftp://example.com/"])
def test_every_redirect_hop_is_rechecked(server, strict, target):
    strict.web.allow_hosts = ["127.0.0.1"]  # the first hop is allowed; the redirect target is not
    path = f"/policy/redirect-{abs(hash(target))}"
    url = server.route(path, Response(b"", 302, {"Location": target}))
    [r] = web_extract_sync([url], config=strict)
    assert r.error.code == "blocked_url", r
    assert "redirect to" in r.error.message


def test_redirects_are_followed_up_to_max_redirects(server, config):
    for i in range(7):
        server.route(f"/policy/hop{i}", Response(b"", 302, {"Location": f"/policy/hop{i + 1}"}))
    server.route("/policy/hop7", Response(b"arrived\n", headers=TEXT))
    config.web.max_redirects = 7
    [ok] = web_extract_sync([server.url("/policy/hop0")], config=config)
    assert ok.content == "arrived\n" and ok.final_url.endswith("/policy/hop7")
    config.web.max_redirects = 5
    [r] = web_extract_sync([server.url("/policy/hop0")], config=config, fresh=True)
    assert r.error.code == TooManyRedirectsError.code
    assert "more than 5 redirects (web.max_redirects)" in r.error.message


def test_file_urls_are_off_by_default(strict, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read\n")
    [r] = web_extract_sync([secret.as_uri()], config=strict)
    assert r.error.code == "blocked_url" and "web.allow_file_urls: true" in r.error.message


def test_file_urls_read_only_under_listed_directories(strict, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Local page\n\ntext\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("private\n")
    os.symlink(outside, docs / "escape.txt")
    strict.web.allow_file_urls = True
    strict.web.file_dirs = [str(docs)]
    ok, out, link, dots = web_extract_sync([(docs / "page.md").as_uri(), outside.as_uri(), (docs / "escape.txt").as_uri(),
                                            f"file://{docs}/../outside.txt"], config=strict)
    assert ok.content == "# Local page\n\ntext\n"
    for r in (out, link, dots):
        assert r.error.code == "blocked_url" and "outside the directories" in r.error.message, r


def test_a_file_page_is_not_served_from_the_cache_once_its_directory_is_no_longer_listed(strict, tmp_path):
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "n.md").write_text("# secret notes\n")
    strict.web.allow_file_urls = True
    strict.web.file_dirs = [str(docs)]
    [first] = web_extract_sync([(docs / "n.md").as_uri()], config=strict)
    assert first.content == "# secret notes\n"
    strict.web.file_dirs = [str(tmp_path / "elsewhere")]
    [again] = web_extract_sync([(docs / "n.md").as_uri()], config=strict)
    assert again.error.code == "blocked_url" and not again.cached


def test_urls_with_credentials_are_refused_unless_allowed(server, config):
    url = server.route("/policy/creds", Response(b"fine\n", headers=TEXT))
    with_token = url + "?token=hunter2"
    with_user = url.replace("http://", "http://agent:hunter2@")
    results = web_extract_sync([with_token, with_user], config=config)
    for r in results:
        assert r.error.code == "blocked_url" and "carries a credential" in r.error.message
        assert "hunter2" not in r.error.message
    assert server.hits.get("/policy/creds", 0) == 0
    config.web.allow_secret_urls = True
    assert [r.content for r in web_extract_sync([with_token], config=config)] == ["fine\n"]
