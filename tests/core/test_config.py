"""Configuration: the README example loads, bad keys and values are named, env vars interpolate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from webshelf.core.config import load_config, parse_config
from webshelf.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_config_yaml() -> str:
    """The YAML block under README's "Configuration" heading."""
    section = README.read_text().split("## Configuration", 1)[1]
    return re.search(r"```yaml\n(web:\n.*?)```", section, re.S).group(1)


def test_the_readme_example_is_valid_and_lists_every_default(tmp_path):
    file = tmp_path / "config.yaml"
    file.write_text(readme_config_yaml())
    config = load_config(file)
    assert config.source == file
    # The reference shows the defaults: loading it changes nothing, except that it also shows an
    # instance of each runtime type that does not exist by default (modal, and an ssh host).
    shown = config.model_dump()
    assert [shown["runtimes"].pop(n)["type"] for n in ("modal", "build1")] == ["modal", "ssh"]
    assert shown == parse_config({}, file).model_dump()


def test_defaults_apply_without_a_file(home):
    config = load_config()
    assert (config.web.extract_char_limit, config.web.head_ratio, config.web.max_line_chars) == (15_000, 0.75, 1_000)
    assert config.home == home and config.source is None


def test_the_home_config_file_is_used(home):
    home.mkdir()
    (home / "config.yaml").write_text("web:\n  extract_char_limit: 5000\n")
    assert load_config().web.extract_char_limit == 5_000


def test_webshelf_config_env_var_names_the_file(tmp_path, monkeypatch):
    file = tmp_path / "other.yaml"
    file.write_text("web: {concurrency: 3}\n")
    monkeypatch.setenv("WEBSHELF_CONFIG", str(file))
    assert load_config().web.concurrency == 3


def test_a_named_file_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_keys_are_rejected_with_their_path(tmp_path):
    with pytest.raises(ConfigError, match=r"web\.extract_char_limt: unknown key"):
        parse_config({"web": {"extract_char_limt": 100}}, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"webb: unknown key"):
        parse_config({"webb": {}}, tmp_path / "c.yaml")


def test_out_of_range_values_name_the_key_and_the_range_not_clamped(tmp_path):
    with pytest.raises(ConfigError) as err:
        parse_config({"web": {"extract_char_limit": 10, "head_ratio": 2}}, tmp_path / "c.yaml")
    message = str(err.value)
    assert str(tmp_path / "c.yaml") in message
    assert "web.extract_char_limit: 10 is out of range; allowed: ≥ 2000" in message
    assert "web.head_ratio: 2 is out of range; allowed: ≤ 0.95" in message


def test_wrong_types_and_bad_yaml_are_explained(tmp_path):
    with pytest.raises(ConfigError) as err:  # issue 13: webshelf's wording, not pydantic's
        parse_config({"web": {"concurrency": "many"}}, tmp_path / "c.yaml")
    assert str(err.value) == f"{tmp_path / 'c.yaml'}: web.concurrency: must be a whole number (got 'many')"
    bad = tmp_path / "bad.yaml"
    bad.write_text("web: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        parse_config(["web"], tmp_path / "c.yaml")


def test_env_vars_are_interpolated_and_a_missing_one_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("WS_UA", "my-agent/1.0")
    config = parse_config(yaml.safe_load("web:\n  user_agent: '${WS_UA} (+${WS_SITE:-none})'\n"), tmp_path / "c.yaml")
    assert config.web.user_agent == "my-agent/1.0 (+none)"
    config = parse_config({"web": {"user_agent": "${WS_MISSING}"}}, tmp_path / "c.yaml")  # deferred: loads
    with pytest.raises(ConfigError, match=r"web\.user_agent: environment variable WS_MISSING is not set"):
        config.web.user_agent  # noqa: B018 — the error comes when the setting is read


def test_the_home_is_normalised_so_footer_paths_match_the_sandbox_mount(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBSHELF_HOME", f"{tmp_path}/sub/../home")
    assert load_config().home == tmp_path / "home"


# issue 13: config errors read like the rest of webshelf's ------------------------------------------------------


@pytest.mark.parametrize("data, message", [
    ({"web": 5}, "web: must be a mapping of settings (got 5)"),
    ({"web": {"firecrawl": "key"}}, "web.firecrawl: must be a mapping of settings (got 'key')"),
    ({"web": {"backend": "firecrawll"}},
     "web.backend: 'firecrawll' is not one of the choices; choose one of: auto, local, browser, firecrawl, tavily, exa, parallel"),
    ({"web": {"extract_backend": "chrome"}},
     "web.extract_backend: 'chrome' is not one of the choices; choose one of: auto, local, browser, firecrawl, tavily, exa, parallel"),
    ({"web": {"tavily": {"base_url": "api.tavily.com"}}},
     "web.tavily.base_url: base_url 'api.tavily.com' must be an absolute http(s) URL like https://api.example.com"),
    ({"web": {"user_agent": ""}}, "web.user_agent: must not be empty"),
    ({"web": {"allow_private": "maybe"}}, "web.allow_private: must be true or false (got 'maybe')"),
    ({"web": {"allow_hosts": "a.example"}}, "web.allow_hosts: must be a list (got 'a.example')"),
])
def test_config_errors_have_no_pydantic_wording(tmp_path, data, message):
    with pytest.raises(ConfigError) as err:
        parse_config(data, tmp_path / "c.yaml")
    assert str(err.value) == f"{tmp_path / 'c.yaml'}: {message}"
    for pydantic in ("Value error", "Input should be", "Field required", "For further information"):
        assert pydantic not in str(err.value)


def test_the_backend_choices_are_the_registered_backends():
    from webshelf.core.backends import CHOICES
    from webshelf.core.config import BACKEND_CHOICES

    assert BACKEND_CHOICES == CHOICES


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text("web:\n  backend: local\n  timeout_s: 5: 6\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert str(err.value) == (f"{bad}: line 3, column 15: not valid YAML: mapping values are not allowed here; check "
                              "the indentation, and quote values that contain ': ' or start with a special character")
    assert err.value.context == {"path": str(bad)}


def test_an_empty_section_means_its_defaults(tmp_path):
    file = tmp_path / "config.yaml"
    file.write_text("web:\ncache:\nruntimes:\n  sync:\n  local:\n")
    assert load_config(file).model_dump() == parse_config({}, file).model_dump()
    file.write_text("web:\n  firecrawl:\n  concurrency: 3\n")
    config = load_config(file)
    assert config.web.concurrency == 3 and config.web.firecrawl.base_url == "https://api.firecrawl.dev"


def test_config_check_fails_on_a_misspelt_backend_and_names_the_choices(tmp_path, home):
    from click.testing import CliRunner

    from webshelf.core.surfaces.cli import main

    file = tmp_path / "config.yaml"
    file.write_text("web:\n  backend: firecrawll\n")
    result = CliRunner().invoke(main, ["--config", str(file), "config", "check"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"error[config_invalid]: {file}: web.backend: 'firecrawll' is not one of the choices; "
                             "choose one of: auto, local, browser, firecrawl, tavily, exa, parallel\n")
