"""A URL only this machine should fetch is never sent to a hosted provider (issue 12, item 2).

The targets are pages of the real loopback server (tests/loopback.py) and real files; the
providers are the loopback fakes of tests/providers.py, which record every request — so "never
sent" is checked on the provider's side. The rule is about the target URL: the provider's own
``base_url`` is on loopback here too, and is of course still used for public targets.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from click.testing import CliRunner

from webshelf.core.backends import get_backend
from webshelf.core.backends.routing import local_only_reason
from webshelf.core.surfaces.cli import main
from webshelf.core.config import Config
from webshelf.errors import NotSentToProviderError
from webshelf.core.extract import web_extract_sync
from webshelf.core.fetch.netpolicy import Policy
from tests.loopback import Response
from tests.providers import FakeProvider

KINDS = ["firecrawl", "tavily", "exa", "parallel"]
KEY = "sk-test-routing-key"
PUBLIC = "https://93.184.215.14/public-page"  # a public IP literal: no DNS lookup, sent to the provider
TEXT = {"Content-Type": "text/markdown; charset=utf-8"}


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


def hosted(home, kind: str, base: str, **web: object) -> Config:
    return Config.model_validate({"web": {"backend": kind, kind: {"api_key": KEY, "base_url": base}, **web}}).with_home(home)


def sent(fake: FakeProvider) -> list[str]:
    return [u for b in fake.bodies() for u in (b.get("urls") or [b.get("url")])]


def test_allowed_private_urls_are_fetched_locally_with_a_note_and_never_sent(kind, home, server):
    page = server.route(f"/routing/{kind}/private", Response(b"# Intranet\n\nonly here\n", headers=TEXT))
    with FakeProvider(kind, key=KEY, pages={PUBLIC: "# Public\n\nfrom the provider\n"}) as fake:
        config = hosted(home, kind, fake.base, allow_private=True)
        local, public = web_extract_sync([page, PUBLIC], config=config)
    assert sent(fake) == [PUBLIC]  # the provider got the public URL and nothing else
    assert local.ok and local.backend == "local" and local.content == "# Intranet\n\nonly here\n"
    assert server.hits[f"/routing/{kind}/private"] == 1
    assert local.notes[0] == (f"fetched on this machine with the local backend, not sent to {kind}: 127.0.0.1 is a "
                              "loopback address (hosted backends never receive private, allow-listed, loopback or "
                              "file:// URLs; web.private_urls)")
    assert public.ok and public.backend == kind and public.content == "# Public\n\nfrom the provider\n"


def test_allow_listed_hosts_are_fetched_locally_and_never_sent(kind, home, server):
    page = server.route(f"/routing/{kind}/listed", Response(b"listed\n", headers=TEXT))
    with FakeProvider(kind, key=KEY) as fake:
        [result] = web_extract_sync([page], config=hosted(home, kind, fake.base, allow_hosts=["127.0.0.0/8"]))
    assert not fake.requests
    assert result.ok and result.backend == "local" and "127.0.0.1 is listed in web.allow_hosts" in result.notes[0]


def test_file_urls_are_read_locally_and_never_sent(kind, home, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nprivate file\n")
    with FakeProvider(kind, key=KEY) as fake:
        config = hosted(home, kind, fake.base, allow_file_urls=True, file_dirs=[str(docs)])
        [result] = web_extract_sync([(docs / "notes.md").as_uri()], config=config)
    assert not fake.requests
    assert result.ok and result.backend == "local" and result.content == "# Notes\n\nprivate file\n"
    assert "it is a file:// URL" in result.notes[0]


def test_refuse_mode_fails_them_with_not_sent_to_provider(kind, home, server, tmp_path):
    page = server.route(f"/routing/{kind}/refused", Response(b"x\n", headers=TEXT))
    (tmp_path / "f.md").write_text("x\n")
    with FakeProvider(kind, key=KEY, pages={PUBLIC: "# Public\n"}) as fake:
        config = hosted(home, kind, fake.base, allow_private=True, private_urls="refuse", allow_file_urls=True,
                        file_dirs=[str(tmp_path)])
        results = web_extract_sync([page, (tmp_path / "f.md").as_uri(), PUBLIC], config=config)
    assert sent(fake) == [PUBLIC] and results[2].ok
    assert [r.error.code for r in results[:2]] == ["not_sent_to_provider"] * 2
    assert results[0].error.message.startswith(f"{page}: not sent to {kind}: 127.0.0.1 is a loopback address; "
                                               "only this machine fetches it (web.private_urls: refuse)")
    assert "web.private_urls: local" in results[0].error.message
    assert server.hits.get(f"/routing/{kind}/refused", 0) == 0


def test_without_an_opt_in_private_urls_stay_blocked(kind, home, server):
    """No opt-in: the address policy refuses them as before (blocked_url), nothing is contacted."""
    page = server.route(f"/routing/{kind}/blocked", Response(b"x\n", headers=TEXT))
    with FakeProvider(kind, key=KEY) as fake:
        [result] = web_extract_sync([page], config=hosted(home, kind, fake.base))
    assert result.error.code == "blocked_url" and not fake.requests
    assert server.hits.get(f"/routing/{kind}/blocked", 0) == 0


def test_a_name_resolving_to_a_private_address_stays_local_when_private_is_allowed(home, server):
    """With web.allow_private the name is looked up here (the system resolver: /etc/hosts)."""
    name = socket.gethostname()
    addresses = {i[4][0] for i in socket.getaddrinfo(name, None)}
    if not all(a.startswith("127.") or a == "::1" for a in addresses):
        pytest.skip(f"{name} resolves to {addresses}, not only loopback")
    port = server.base.rsplit(":", 1)[1]
    server.route("/routing/by-name", Response(b"by name\n", headers=TEXT))
    url = f"http://{name}:{port}/routing/by-name"
    assert local_only_reason(url, Policy(allow_private=True)) is None  # only the lookup shows it
    with FakeProvider("tavily", key=KEY) as fake:
        [result] = web_extract_sync([url], config=hosted(home, "tavily", fake.base, allow_private=True))
    assert not fake.requests
    assert result.ok and result.backend == "local" and f"{name} resolves to 127." in result.notes[0]


def test_a_hosted_backend_used_directly_never_sends_them(kind, home, server):
    page = server.url("/pydocs/library__re.html")

    async def direct() -> None:
        async with get_backend(kind, config) as backend:
            await backend.fetch(page)

    with FakeProvider(kind, key=KEY) as fake:
        config = hosted(home, kind, fake.base, allow_private=True)
        with pytest.raises(NotSentToProviderError, match=rf"not sent to {kind}: 127\.0\.0\.1 is a loopback address; "
                           r"a hosted backend never sends such URLs"):
            asyncio.run(direct())
    assert not fake.requests


@pytest.mark.parametrize("url, reason", [
    ("http://10.1.2.3/wiki", "10.1.2.3 is a private address"),
    ("http://[::1]:8080/", "::1 is a "),
    ("http://169.254.169.254/latest", "169.254.169.254 is a link-local"),
    ("http://wiki.internal/page", "'wiki.internal' is a local or internal name"),
    ("http://localhost:3000/", "'localhost' is a local or internal name"),
    ("file:///etc/hostname", "it is a file:// URL"),
    ("https://docs.example.com/", None),
    ("https://8.8.8.8/", None),
])
def test_which_urls_never_go_to_a_provider(url, reason):
    found = local_only_reason(url, Policy(allow_private=True))
    assert (found is None) if reason is None else found.startswith(reason)
    assert local_only_reason("https://intranet.example.com/x", Policy(allow_hosts=("*.example.com",))) \
        == "intranet.example.com is listed in web.allow_hosts"


def test_backends_shows_the_refuse_mode(home, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "k")
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  backend: tavily\n  private_urls: refuse\n")
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == ("never sent to tavily: private, allow-listed, loopback and file:// URLs "
                                              "— refused with not_sent_to_provider (web.private_urls: refuse)")
