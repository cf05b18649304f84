"""Each URL is validated exactly once per call (issue 13, item 4).

Before, a cache miss passed two different ``check_url`` functions five times. Now
``core/fetch/checked.validate`` judges the string once and the ``CheckedURL`` goes on to the
cache lookup, routing and the backend. The calls are counted with a profiler hook on the code
objects, so a caller that imported a validator under another name is counted too; the pages
come from the real loopback server and a loopback fake of a hosted provider.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from webshelf.core.backends import get_backend
from webshelf.core.config import Config
from webshelf.core.extract import web_extract_sync
from webshelf.core.fetch import checked, netpolicy
from webshelf.core.fetch.checked import CheckedURL, validate
from webshelf.errors import BlockedURLError, InvalidURLError
from tests.loopback import Response
from tests.providers import FakeProvider

MD = {"Content-Type": "text/markdown; charset=utf-8"}
VALIDATORS = {checked.validate.__code__: "validate", netpolicy.check_url.__code__: "policy",
              checked._syntax.__code__: "syntax"}


@contextmanager
def counted() -> Iterator[Counter]:
    """Calls of the validators in this thread (the event loop of ``web_extract_sync`` runs here)."""
    calls: Counter = Counter()
    previous = sys.getprofile()

    def hook(frame, event, arg):  # noqa: ANN001 — the sys.setprofile signature
        if event == "call" and frame.f_code in VALIDATORS:
            calls[VALIDATORS[frame.f_code]] += 1

    sys.setprofile(hook)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def page(server) -> str:
    return server.route(f"/once/{uuid.uuid4().hex}", Response(b"# Once\n\nchecked once\n", headers=MD))


def test_a_cache_miss_and_a_hit_are_each_validated_once(server, config: Config):
    url = page(server)
    with counted() as miss:
        [fetched] = web_extract_sync([url], config=config)
    assert fetched.ok and not fetched.cached
    assert miss == {"validate": 1, "syntax": 1, "policy": 1}
    with counted() as hit:
        [reused] = web_extract_sync([url], config=config)
    assert reused.cached and server.hits[url.removeprefix(server.base)] == 1
    assert hit == {"validate": 1, "syntax": 1, "policy": 1}


def test_fresh_and_repeated_urls_are_validated_once_each(server, config: Config):
    a, b = page(server), page(server)
    with counted() as calls:
        results = web_extract_sync([a, b, a], config=config, fresh=True)
    assert all(r.ok for r in results)
    assert calls == {"validate": 2, "syntax": 2, "policy": 2}


def test_a_hosted_backend_sends_a_url_validated_once(home):
    public = "https://93.184.215.14/once"  # a public IP literal: no DNS anywhere
    with FakeProvider("tavily", key="sk-once", pages={public: "# Public\n"}) as fake:
        config = Config.model_validate({"web": {"backend": "tavily",
                                                "tavily": {"api_key": "sk-once", "base_url": fake.base}}}).with_home(home)
        with counted() as calls:
            [result] = web_extract_sync([public], config=config)
    assert result.ok and result.backend == "tavily"
    assert calls == {"validate": 1, "syntax": 1, "policy": 1}


def test_a_refused_url_is_judged_once_and_never_reaches_a_backend(server, home):
    url = page(server)
    config = Config().with_home(home)  # loopback not allowed
    with counted() as calls:
        [result] = web_extract_sync([url], config=config)
    assert result.error.code == "blocked_url" and server.hits.get(url.removeprefix(server.base), 0) == 0
    assert calls == {"validate": 1, "syntax": 1, "policy": 1}


def test_a_backend_used_directly_validates_a_plain_string_once_and_a_checked_url_not_again(server, config: Config):
    url = page(server)

    async def fetch(value: str | CheckedURL):
        async with get_backend("local", config) as backend:
            return await backend.fetch(value)

    with counted() as calls:
        assert asyncio.run(fetch(url)).markdown.startswith("# Once")
    assert calls["validate"] == 1 and calls["policy"] == 1
    value = validate(url, netpolicy.Policy.from_config(config.web))
    with counted() as calls:
        assert asyncio.run(fetch(value)).markdown.startswith("# Once")
    assert calls["validate"] == 0 and calls["policy"] == 0


@pytest.mark.parametrize("url, error, text", [
    ("not a url", InvalidURLError, "is not an absolute http(s) URL"),
    ("http://example.com:99999/", InvalidURLError, "is not a valid URL"),
    ("ftp://example.com/", InvalidURLError, "is not an absolute http(s) URL"),
    ("http://127.0.0.1/", BlockedURLError, "loopback"),
    ("file:///etc/passwd", BlockedURLError, "file:// URLs are off"),
])
def test_validate_checks_syntax_before_the_policy(url: str, error: type, text: str):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        validate(url, netpolicy.Policy())


def test_the_checked_value_carries_what_later_stages_read():
    value = validate("HTTPS://Example.COM./a?b=1", netpolicy.Policy())
    assert (value.url, value.scheme, value.host, value.is_file, str(value)) == \
        ("HTTPS://Example.COM./a?b=1", "https", "example.com", False, "HTTPS://Example.COM./a?b=1")
    local = validate("file:///srv/a.md", netpolicy.Policy(allow_file_urls=True, file_dirs=("/srv",)))
    assert local.is_file and local.host is None
