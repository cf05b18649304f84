"""Which backend a call uses (override > web.extract_backend > web.backend, default local; keys
matter only with ``auto``), ``webshelf backend list``' exact output, and that a chosen backend
without its key fails the same way whether the page is cached or not (issue 12, item 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from webshelf.core.backends import select_backend, selection
from webshelf.core.surfaces.cli import main
from webshelf.core.config import Config, load_config
from webshelf.errors import ConfigError
from webshelf.core.extract import web_extract_sync
from tests.providers import ENV_VARS


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch):
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)


def test_without_keys_or_settings_it_is_local():
    assert select_backend(Config()) == "local"


def test_a_key_in_the_environment_never_changes_the_default_backend(monkeypatch, config, server):
    """Regression (issue 12): FIRECRAWL_API_KEY exported and no web.backend sent every page to Firecrawl."""
    from tests.providers import FakeProvider

    for var in ENV_VARS.values():
        monkeypatch.setenv(var, "exported-for-another-tool")
    assert select_backend(Config()) == "local"
    with FakeProvider("firecrawl", key="exported-for-another-tool") as fake:
        config.web.firecrawl.base_url = fake.base
        [result] = web_extract_sync([server.url("/pydocs/library__re.html")], config=config)
    assert result.ok and result.backend == "local" and not fake.requests
    assert not any("not sent to" in n for n in result.notes)  # local by default, not by the routing rule


def test_auto_picks_the_first_provider_with_a_key_in_order(monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "k1")
    monkeypatch.setenv("PARALLEL_API_KEY", "k2")
    assert select_backend(Config()) == "local"
    assert select_backend(Config.model_validate({"web": {"backend": "auto"}})) == "exa"
    config = Config.model_validate({"web": {"backend": "auto", "tavily": {"api_key": "k3"}}})
    assert select_backend(config) == "tavily"
    assert select_backend(Config.model_validate({"web": {"extract_backend": "auto"}})) == "exa"
    monkeypatch.delenv("EXA_API_KEY")
    monkeypatch.delenv("PARALLEL_API_KEY")
    assert selection(Config.model_validate({"web": {"backend": "auto"}})).name == "local"


def test_settings_and_the_per_call_override_win_in_order(monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "k")
    config = Config.model_validate({"web": {"backend": "auto"}})
    assert select_backend(config) == "firecrawl"
    config = Config.model_validate({"web": {"backend": "local"}})
    assert select_backend(config) == "local"
    config.web.extract_backend = "exa"
    assert select_backend(config) == "exa"
    assert select_backend(config, "parallel") == "parallel"
    assert select_backend(config, "auto") == "firecrawl"
    assert select_backend(Config.model_validate({"web": {"backend": None}})) == "local"


def test_an_empty_key_counts_as_no_key(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "  ")
    assert select_backend(Config.model_validate({"web": {"backend": "auto", "firecrawl": {"api_key": ""}}})) == "local"


def test_backends_lists_what_is_usable_and_why(home, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "secret-in-env")
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  exa:\n    api_key: secret-in-file\n    base_url: http://127.0.0.1:9\n"
                                      "  browser:\n    executable_path: /nonexistent/chromium\n")
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 0, result.output
    assert result.output == (
        "* local      usable    fetches and converts on this machine; no key needed\n"
        "  browser    unusable  the browser backend needs Chromium: web.browser.executable_path '/nonexistent/chromium' "
        "is not an executable; install Chromium from the OS packages (Debian/Ubuntu: apt-get install chromium) or set "
        "web.browser.executable_path\n"
        "  firecrawl  unusable  no API key: set web.firecrawl.api_key or FIRECRAWL_API_KEY\n"
        "  tavily     usable    key from TAVILY_API_KEY; API https://api.tavily.com\n"
        "  exa        usable    key from web.exa.api_key; API http://127.0.0.1:9\n"
        "  parallel   unusable  no API key: set web.parallel.api_key or PARALLEL_API_KEY\n"
        "extract uses: local — web.backend is local (the default); a provider key alone never changes the backend: "
        "set web.backend: auto or name a provider to use one\n"
        "auto would pick: tavily — the first of firecrawl, tavily, exa, parallel with a key (from TAVILY_API_KEY)\n"
    )
    assert "secret" not in result.output


def test_backends_explains_auto_and_the_never_sent_rule(home, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "secret-in-env")
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  backend: auto\n")
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[4] == "* exa        usable    key from EXA_API_KEY; API https://api.exa.ai"
    assert result.output.splitlines()[-3:] == [
        "extract uses: exa — web.backend is auto: the first of firecrawl, tavily, exa, parallel with a key "
        "(from EXA_API_KEY)",
        "auto would pick: exa — the first of firecrawl, tavily, exa, parallel with a key (from EXA_API_KEY)",
        "never sent to exa: private, allow-listed, loopback and file:// URLs — fetched with local "
        "(web.private_urls: local)",
    ]
    monkeypatch.delenv("EXA_API_KEY")
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-2:] == [
        "extract uses: local — web.backend is auto: none of firecrawl, tavily, exa, parallel has a key",
        "auto would pick: local — none of firecrawl, tavily, exa, parallel has a key",
    ]


def test_backends_says_when_the_configured_backend_cannot_be_used(home):
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  backend: parallel\n")
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 1
    assert "extract uses: parallel (unusable: set its API key) — web.backend is parallel\n" in result.output
    (home / "config.yaml").write_text("web:\n  backend: scrapy\n")  # issue 13: a validated choice
    result = CliRunner().invoke(main, ["backend", "list"])
    assert result.exit_code == 2
    assert result.stderr == (f"error[config_invalid]: {home / 'config.yaml'}: web.backend: 'scrapy' is not one of the "
                             "choices; choose one of: auto, local, browser, firecrawl, tavily, exa, parallel\n")


def test_a_backend_without_its_key_fails_the_same_way_cached_or_not(home_config_allows_loopback, server):
    """Regression (issue 12): --backend NAME without the key served a cached page silently but
    failed an uncached one with a config error."""
    cached, uncached = server.url("/pydocs/library__re.html"), server.url("/pydocs/library__os.html")
    first = CliRunner().invoke(main, ["extract", cached])
    assert first.exit_code == 0, first.output
    outcomes = [CliRunner().invoke(main, ["extract", "--backend", "firecrawl", url]) for url in (cached, uncached)]
    assert [o.exit_code for o in outcomes] == [2, 2]
    assert outcomes[0].output == outcomes[1].output == (
        "error[config_invalid]: the firecrawl backend needs an API key: set web.firecrawl.api_key "
        "(e.g. '${FIRECRAWL_API_KEY}') or the environment variable FIRECRAWL_API_KEY\n")
    hits = server.hits.get("/pydocs/library__os.html", 0)
    config = load_config().with_home(home_config_allows_loopback.parent)
    for url in (cached, uncached):
        with pytest.raises(ConfigError, match="the tavily backend needs an API key"):
            web_extract_sync([url], config=config, backend="tavily")
    assert server.hits.get("/pydocs/library__os.html", 0) == hits  # nothing was fetched either way


def test_config_show_never_prints_a_key(home):
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  firecrawl:\n    api_key: fc-very-secret\n")
    result = CliRunner().invoke(main, ["config", "show"])
    assert result.exit_code == 0 and "fc-very-secret" not in result.output and "api_key: '**********'" in result.output


def test_extract_backend_option_overrides_the_config(home):
    from tests.providers import FakeProvider

    home.mkdir(parents=True)
    with FakeProvider("tavily", key="tv-key", pages={"https://a.example/p": "# A\n\ntext\n"}) as fake:
        (home / "config.yaml").write_text(f"web:\n  backend: local\n  tavily:\n    api_key: tv-key\n    base_url: {fake.base}\n")
        result = CliRunner().invoke(main, ["extract", "--backend", "tavily", "https://a.example/p"])
        assert result.exit_code == 0, result.output
        assert result.output == "# A\n\ntext\n"
        result = CliRunner().invoke(main, ["extract", "--backend", "nope", "https://a.example/p"])
    assert result.exit_code == 2 and "unknown backend 'nope'" in result.output
