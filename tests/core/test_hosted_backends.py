"""Hosted backends against loopback servers that implement each provider's documented endpoint.

Every test runs for all four providers: the request each client sends is checked by the fake
(method, path, auth, body fields — see tests/providers.py), and the answers are the documented
success, partial-failure, 401, 429-with-Retry-After and 500 responses.
"""

from __future__ import annotations

import logging
import re
import httpx
import pytest

from webshelf.core.config import Config
from webshelf.errors import ConfigError
from webshelf.core.extract import web_extract_sync
from tests.providers import ENV_VARS, PATHS, FakeProvider, Scripted, error_body

KINDS = ["firecrawl", "tavily", "exa", "parallel"]
KEY = "sk-test-5ecret-value-9d1f"
PAGES = {f"https://docs.example.com/page{i}": f"# Page {i}\n\nBody of page {i}.\n" for i in range(30)}


def hosted_config(home, kind: str, base: str, *, key: str | None = KEY, **web: object) -> Config:
    section: dict[str, object] = {"base_url": base}
    if key is not None:
        section["api_key"] = key
    return Config.model_validate({"web": {"backend": kind, kind: section, **web}}).with_home(home)


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


def test_pages_come_back_through_the_pipeline_and_the_request_is_what_the_api_documents(kind, home):
    urls = list(PAGES)[:3]
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        results = web_extract_sync(urls, config=hosted_config(home, kind, fake.base))
    assert [r.url for r in results] == urls
    assert all(r.ok and r.backend == kind and not r.truncated for r in results), [r.error for r in results]
    assert results[0].content == "# Page 0\n\nBody of page 0.\n"
    assert results[0].path and open(results[0].path).read() == results[0].content
    assert {r["path"] for r in fake.requests} == {PATHS[kind]}
    body = fake.bodies()[0]
    if kind == "firecrawl":
        assert len(fake.requests) == 3 and body["formats"] == ["markdown"]
        assert body["onlyMainContent"] is True and body["removeBase64Images"] is True
        assert body["maxAge"] == 15 * 60 * 1000 and body["timeout"] == 60_000
        assert body["parsers"] == [{"type": "pdf", "mode": "auto", "maxPages": 200}] and "waitFor" not in body
        assert results[0].title == "Title of page0"
    elif kind == "tavily":
        assert len(fake.requests) == 1 and body["urls"] == urls
        assert (body["format"], body["extract_depth"], body["timeout"]) == ("markdown", "basic", 60)
    elif kind == "exa":
        assert len(fake.requests) == 1 and body["urls"] == urls
        assert body["text"] == {"includeHtmlTags": False} and body["maxAgeHours"] == 0
    else:
        assert len(fake.requests) == 1 and body["urls"] == urls
        assert body["advanced_settings"] == {"full_content": True, "fetch_policy": {
            "max_age_seconds": 900, "timeout_seconds": 60, "disable_cache_fallback": False}}


def test_fresh_is_sent_explicitly_as_each_providers_freshest(kind, home):
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        [result] = web_extract_sync([next(iter(PAGES))], config=hosted_config(home, kind, fake.base), fresh=True)
    assert result.ok
    body = fake.bodies()[0]
    sent = {"firecrawl": lambda b: b["maxAge"], "tavily": lambda b: "no freshness parameter",
            "exa": lambda b: b["maxAgeHours"], "parallel": lambda b: b["advanced_settings"]["fetch_policy"]["max_age_seconds"]}
    assert sent[kind](body) == {"firecrawl": 0, "tavily": "no freshness parameter", "exa": 0, "parallel": 600}[kind]


def test_a_url_failed_inside_an_http_200_is_an_error_for_that_url_only(kind, home):
    urls = [list(PAGES)[0], "https://docs.example.com/missing", list(PAGES)[1]]
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        results = web_extract_sync(urls, config=hosted_config(home, kind, fake.base))
    assert [r.ok for r in results] == [True, False, True]
    error = results[1].error
    expected = "backend_error" if kind == "tavily" else "http_status"
    assert error.code == expected and kind in error.message and "docs.example.com/missing" in error.message


def test_a_refused_key_fails_every_url_naming_the_provider_and_never_showing_the_key(kind, home, caplog):
    caplog.set_level(logging.DEBUG)
    wrong = "sk-wrong-key-77aa"
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        results = web_extract_sync(list(PAGES)[:2], config=hosted_config(home, kind, fake.base, key=wrong))
    assert [r.error.code for r in results] == ["backend_error", "backend_error"]
    message = results[0].error.message
    assert f"{kind} refused the API key (HTTP 401" in message and f"web.{kind}.api_key" in message
    assert "invalid API key" in message  # the provider's own words are quoted …
    assert all(wrong not in r.error.message for r in results)  # … with the key it echoed scrubbed
    assert wrong not in caplog.text


def test_429_with_retry_after_is_retried_after_the_wait(kind, home):
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        fake.script.append(Scripted(429, error_body(kind, "Rate limit exceeded"), {"Retry-After": "1"}))
        [result] = web_extract_sync([next(iter(PAGES))], config=hosted_config(home, kind, fake.base))
    assert result.ok, result.error
    assert len(fake.requests) == 2
    assert fake.requests[1]["at"] - fake.requests[0]["at"] >= 0.95  # Retry-After honoured


def test_500_is_retried_then_reported_with_the_providers_message(kind, home):
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        fake.script.append(Scripted(500, error_body(kind, "internal hiccup"), {"Retry-After": "0"}))
        [ok] = web_extract_sync([next(iter(PAGES))], config=hosted_config(home, kind, fake.base))
        fake.script.extend(Scripted(500, error_body(kind, "engine exploded"), {"Retry-After": "0"}) for _ in range(2))
        [failed] = web_extract_sync([list(PAGES)[1]], config=hosted_config(home, kind, fake.base, max_retries=1))
    assert ok.ok
    assert failed.error.code == "backend_error"
    assert f"{kind} answered HTTP 500: engine exploded; gave up after 1 retries" in failed.error.message


def test_a_provider_that_does_not_answer_in_time_is_a_timeout_naming_it(home):
    for kind in KINDS:
        with FakeProvider(kind, key=KEY, pages=PAGES, latency=3.0) as fake:
            config = hosted_config(home, kind, fake.base)
            getattr(config.web, kind).timeout_s = 1
            [result] = web_extract_sync([next(iter(PAGES))], config=config)
        assert result.error.code == "timeout" and f"{kind}: no answer from {fake.base}" in result.error.message


def test_urls_are_batched_as_each_provider_allows(kind, home):
    urls = list(PAGES)[:25]
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        results = web_extract_sync(urls, config=hosted_config(home, kind, fake.base, max_urls=25))
    assert all(r.ok for r in results)
    sizes = sorted(len(b["urls"]) if "urls" in b else 1 for b in fake.bodies())
    assert sizes == {"firecrawl": [1] * 25, "tavily": [5, 20], "exa": [25], "parallel": [5, 20]}[kind]


def test_private_addresses_and_secret_urls_are_refused_before_anything_is_sent(kind, home):
    blocked = ["http://127.0.0.1/admin", "http://169.254.169.254/latest/meta-data/", "http://localhost:8080/",
               "http://db.internal/", "http://2130706433/", "https://example.com/?api_key=abc"]
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        results = web_extract_sync(blocked + [next(iter(PAGES))], config=hosted_config(home, kind, fake.base))
    assert [r.error.code for r in results[:-1]] == ["blocked_url"] * len(blocked)
    assert results[-1].ok
    sent = [u for b in fake.bodies() for u in (b.get("urls") or [b.get("url")])]
    assert sent == [next(iter(PAGES))]  # only the allowed URL reached the provider
    assert "abc" not in results[-2].error.message


def test_a_name_is_not_looked_up_for_a_hosted_backend(kind, home, monkeypatch):
    """The provider resolves the target, not us: only the provider's own address is looked up."""
    import socket

    from webshelf.core.backends.browser import service

    service.shutdown_all()  # a browser an earlier test left idling would resolve in this process too
    real = socket.getaddrinfo
    looked_up: list[str] = []

    def recording(host, *args, **kwargs):
        looked_up.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    target = "https://only-the-provider-resolves.example/"
    with FakeProvider(kind, key=KEY, pages={target: "# hi\n"}) as fake:
        [result] = web_extract_sync([target], config=hosted_config(home, kind, fake.base))
    assert result.ok, result.error
    assert "only-the-provider-resolves.example" not in looked_up and set(looked_up) <= {"127.0.0.1"}


def test_keys_from_env_vars_never_reach_logs_errors_or_stored_files(kind, home, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(ENV_VARS[kind], KEY)
    urls = [list(PAGES)[0], "https://docs.example.com/missing", "http://10.0.0.1/"]
    with FakeProvider(kind, key=KEY, pages=PAGES) as fake:
        config = hosted_config(home, kind, fake.base, key=None)
        results = web_extract_sync(urls, config=config)
        fake.script.append(Scripted(500, error_body(kind, f"boom {KEY}"), {"Retry-After": "0"}))
        fake.script.append(Scripted(500, error_body(kind, f"boom {KEY}"), {"Retry-After": "0"}))
        fake.script.append(Scripted(500, error_body(kind, f"boom {KEY}"), {"Retry-After": "0"}))
        results += web_extract_sync([list(PAGES)[2]], config=config)
    assert results[0].ok and not results[1].ok and not results[2].ok and not results[3].ok
    assert fake.requests[0]["headers"].get("authorization", fake.requests[0]["headers"].get("x-api-key", "")).endswith(KEY)
    assert "boom ***" in results[3].error.message
    for r in results:
        assert KEY not in r.model_dump_json()
    assert KEY not in caplog.text
    files = [p for p in home.rglob("*") if p.is_file()]
    assert files and all(KEY.encode() not in p.read_bytes() for p in files)
    assert KEY not in repr(config) and KEY not in config.model_dump_json()


def test_a_chosen_provider_without_a_key_is_a_config_error_naming_the_variable(kind, home, monkeypatch):
    monkeypatch.delenv(ENV_VARS[kind], raising=False)
    config = hosted_config(home, kind, "http://127.0.0.1:9", key=None)
    with pytest.raises(ConfigError, match=rf"web\.{kind}\.api_key.*{ENV_VARS[kind]}"):
        web_extract_sync(["https://example.com/"], config=config)


def test_the_fakes_reject_what_the_real_apis_reject(kind):
    """The fake servers are strict: a wrong path, a missing key, an unknown field all fail."""
    auth = {"authorization": f"Bearer {KEY}"} if kind in ("firecrawl", "tavily") else {"x-api-key": KEY}
    good = {"firecrawl": {"url": "https://a.example/", "formats": ["markdown"]}}.get(kind, {"urls": ["https://a.example/"]})
    with FakeProvider(kind, key=KEY, pages={"https://a.example/": "x"}) as fake, httpx.Client(base_url=fake.base) as http:
        assert http.post(PATHS[kind], json=good, headers=auth).status_code == 200
        assert http.post(PATHS[kind], json=good).status_code == 401
        assert http.post("/v0/wrong", json=good, headers=auth).status_code == 404
        assert http.get(PATHS[kind], headers=auth).status_code == 405
        assert http.post(PATHS[kind], json={**good, "surprise": 1}, headers=auth).status_code == 400
        if kind in ("tavily", "parallel"):
            many = {"urls": [f"https://a.example/{i}" for i in range(21)]}
            assert http.post(PATHS[kind], json=many, headers=auth).status_code == 400
        if kind == "parallel":
            young = {**good, "advanced_settings": {"fetch_policy": {"max_age_seconds": 60}}}
            assert http.post(PATHS[kind], json=young, headers=auth).status_code == 422


def test_base_url_must_be_an_http_url(home):
    with pytest.raises(Exception, match="must be an absolute http"):
        Config.model_validate({"web": {"tavily": {"base_url": "api.tavily.com"}}})


def test_env_var_keys_are_used_when_the_config_has_none(home, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", KEY)
    with FakeProvider("exa", key=KEY, pages=PAGES) as fake:
        [result] = web_extract_sync([next(iter(PAGES))], config=hosted_config(home, "exa", fake.base, key=None))
    assert result.ok and fake.requests[0]["headers"]["x-api-key"] == KEY


def test_a_long_pydocs_page_from_a_provider_is_truncated_with_a_valid_footer_and_stored(kind, home):
    """End to end: the provider's Markdown goes through clean → store → truncate like a local page."""
    import html_to_markdown

    from webshelf.core.clean import clean_markdown
    from tests.core.test_extract import CALL, FOOTER, read_all
    from tests import corpus

    url = "https://docs.python.org/3/library/re.html"
    markdown = html_to_markdown.convert(corpus.pydocs_text("library__re.html")).content
    with FakeProvider(kind, key=KEY, pages={url: markdown}) as fake:
        config = hosted_config(home, kind, fake.base)
        [r] = web_extract_sync([url], config=config)
    assert r.ok and r.truncated and r.backend == kind and len(r.content) <= 15_000
    stored = open(r.path, encoding="utf-8").read()
    assert stored == clean_markdown(markdown, config.web.max_line_chars)
    assert (r.total_chars, r.total_lines) == (len(stored), stored.count("\n"))
    footer = r.content[r.content.index(FOOTER):]
    assert f"Full text: {r.path}\n" in footer
    call = CALL.search(footer)
    first, last = int(call["offset"]), int(re.search(r"Omitted: lines [\d,]+–([\d,]+)\.", footer).group(1).replace(",", ""))
    lines = stored.splitlines(keepends=True)
    head, tail = "".join(lines[: first - 1]), "".join(lines[last:])
    assert r.content.startswith(head) and r.content[: r.content.index(FOOTER)].endswith(tail)
    assert head + read_all(r.path, config, first, last) + tail == stored


def test_fresh_is_an_argument_of_each_call_not_state_of_the_backend(home):
    """One backend, two calls: ``fetch_many(..., fresh=True)`` then a plain one; each request
    carries its own freshness (the backend has no ``fresh`` attribute to leave set)."""
    import asyncio

    from webshelf.core.backends import get_backend

    url = next(iter(PAGES))

    async def twice() -> None:
        async with get_backend("firecrawl", config) as backend:
            assert not hasattr(backend, "fresh")
            await backend.fetch_many([url], fresh=True)[url]
            await backend.fetch(url)

    with FakeProvider("firecrawl", key=KEY, pages=PAGES) as fake:
        config = hosted_config(home, "firecrawl", fake.base)
        asyncio.run(twice())
    assert [b["maxAge"] for b in fake.bodies()] == [0, 15 * 60 * 1000]
