"""Which backend a call uses (override > web.extract_backend > web.backend > first key > local),
and ``webshelf backends``' exact output."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core.backends import select_backend
from core.cli import main
from core.config import Config
from tests.providers import ENV_VARS


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch):
    for var in ENV_VARS.values():
        monkeypatch.delenv(var, raising=False)


def test_without_keys_or_settings_it_is_local():
    assert select_backend(Config()) == "local"


def test_the_first_provider_with_a_key_is_chosen_in_order(monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "k1")
    monkeypatch.setenv("PARALLEL_API_KEY", "k2")
    assert select_backend(Config()) == "exa"
    config = Config.model_validate({"web": {"tavily": {"api_key": "k3"}}})
    assert select_backend(config) == "tavily"


def test_settings_and_the_per_call_override_win_in_order(monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "k")
    config = Config.model_validate({"web": {"backend": "local"}})
    assert select_backend(config) == "local"
    config.web.extract_backend = "exa"
    assert select_backend(config) == "exa"
    assert select_backend(config, "parallel") == "parallel"


def test_an_empty_key_counts_as_no_key(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "  ")
    assert select_backend(Config.model_validate({"web": {"firecrawl": {"api_key": ""}}})) == "local"


def test_backends_lists_what_is_usable_and_why(home, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "secret-in-env")
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  exa:\n    api_key: secret-in-file\n    base_url: http://127.0.0.1:9\n")
    result = CliRunner().invoke(main, ["backends"])
    assert result.exit_code == 0, result.output
    assert result.output == (
        "  local      usable    fetches and converts on this machine; no key needed\n"
        "  firecrawl  unusable  no API key: set web.firecrawl.api_key or FIRECRAWL_API_KEY\n"
        "* tavily     usable    key from TAVILY_API_KEY; API https://api.tavily.com\n"
        "  exa        usable    key from web.exa.api_key; API http://127.0.0.1:9\n"
        "  parallel   unusable  no API key: set web.parallel.api_key or PARALLEL_API_KEY\n"
        "extract uses: tavily\n"
    )
    assert "secret" not in result.output


def test_backends_says_when_the_configured_backend_cannot_be_used(home):
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("web:\n  backend: parallel\n")
    result = CliRunner().invoke(main, ["backends"])
    assert result.exit_code == 1
    assert result.output.endswith("extract uses: parallel (unusable: set its API key)\n")
    (home / "config.yaml").write_text("web:\n  backend: scrapy\n")
    result = CliRunner().invoke(main, ["backends"])
    assert result.output.endswith(
        "extract uses: scrapy (unknown backend; choose one of: local, firecrawl, tavily, exa, parallel)\n")


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
