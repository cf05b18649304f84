"""An unset ``${VAR}`` breaks only what reads its setting (issue 12, item 2).

The config file loads; the setting that names the variable raises a ConfigError naming the key
and the variable when something reads it — a Firecrawl key missing from the environment stops
the firecrawl backend, and nothing else: not ``webshelf read``, not ``webshelf cache …``, not a
local extract (here against the real loopback server).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.core.config import parse_config
from webshelf.errors import ConfigError

VAR = "WS_TEST_UNSET_FIRECRAWL_KEY"
NAMED = rf"web\.firecrawl\.api_key: environment variable {VAR} is not set"


@pytest.fixture
def config_with_unset_key(home: Path, monkeypatch) -> Path:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv("FIRECRAWL_API_KEY", raising=False)
    home.mkdir(parents=True, exist_ok=True)
    file = home / "config.yaml"
    file.write_text(f"web:\n  allow_private: true\n  firecrawl:\n    api_key: '${{{VAR}}}'\n")
    return file


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_an_unset_provider_key_breaks_only_the_provider(config_with_unset_key, server):
    url = server.url("/pydocs/library__os.html")
    extracted = run("extract", "--json", url)
    assert extracted.exit_code == 0, extracted.output  # the local backend never reads the key
    path = json.loads(extracted.stdout)[0]["path"]
    assert run("read", path, "--limit", "3").exit_code == 0
    for args in (("cache", "stats"), ("cache", "list"), ("cache", "verify")):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
    failed = run("extract", "--backend", "firecrawl", url)
    assert failed.exit_code == 2
    assert failed.output == (f"error[config_invalid]: {config_with_unset_key}: web.firecrawl.api_key: environment "
                             f"variable {VAR} is not set; export it or write ${{{VAR}:-default}}\n")


def test_backends_and_config_commands_name_the_unset_variable(config_with_unset_key):
    backends = run("backend", "list")
    assert backends.exit_code == 0, backends.output
    assert f"  firecrawl  unusable  {config_with_unset_key}: web.firecrawl.api_key: environment variable {VAR} " \
           "is not set" in backends.output
    checked = run("config", "check")
    assert checked.exit_code == 0
    assert f"warning: web.firecrawl.api_key: environment variable {VAR} is not set" in checked.output
    shown = run("config", "show")
    assert shown.exit_code == 0 and f"# unset: web.firecrawl.api_key (environment variable {VAR} is not set" \
        in shown.output


def test_the_error_comes_when_the_setting_is_read_and_names_key_and_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("WS_NOPE_A", raising=False)
    monkeypatch.delenv("WS_NOPE_B", raising=False)
    data = yaml.safe_load("web:\n  allow_hosts: [wiki.example, '${WS_NOPE_A}']\n  tavily:\n"
                          "    base_url: '${WS_NOPE_B}'\ncache:\n  max_age: 5m\n")
    config = parse_config(data, tmp_path / "c.yaml")
    assert config.cache.max_age == 300 and config.web.tavily.timeout_s == 60  # the rest is in force
    with pytest.raises(ConfigError, match=r"web\.allow_hosts\[1\]: environment variable WS_NOPE_A is not set"):
        config.web.allow_hosts  # noqa: B018
    with pytest.raises(ConfigError, match=r"web\.tavily\.base_url: environment variable WS_NOPE_B is not set"):
        config.web.tavily.base_url  # noqa: B018
    config.web.allow_hosts = ["wiki.example"]  # a value set in code replaces the unset one
    assert config.web.allow_hosts == ["wiki.example"]
    assert config.model_dump()["web"]["tavily"]["base_url"] == "https://api.tavily.com"


def test_a_required_setting_cannot_wait_and_an_unknown_key_is_still_named(tmp_path, monkeypatch):
    monkeypatch.delenv("WS_NOPE_HOST", raising=False)
    with pytest.raises(ConfigError, match=r"runtimes\.b1\.host: environment variable WS_NOPE_HOST"):
        parse_config(yaml.safe_load("runtimes:\n  b1:\n    type: ssh\n    host: '${WS_NOPE_HOST}'\n"),
                     tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"web\.firecrawl\.bogus: unknown key"):
        parse_config({"web": {"firecrawl": {"bogus": "${WS_NOPE_HOST}"}}}, tmp_path / "c.yaml")


def test_auto_skips_a_provider_whose_key_variable_is_unset(tmp_path, monkeypatch):
    from webshelf.core.backends import require_key, select_backend

    monkeypatch.delenv("WS_NOPE_KEY", raising=False)
    monkeypatch.setenv("EXA_API_KEY", "k")
    config = parse_config({"web": {"backend": "auto", "firecrawl": {"api_key": "${WS_NOPE_KEY}"}}}, tmp_path / "c.yaml")
    assert select_backend(config) == "exa"
    with pytest.raises(ConfigError, match="WS_NOPE_KEY is not set"):
        require_key("firecrawl", config)
