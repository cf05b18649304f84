"""Shared fixtures: a throwaway webshelf home and a real loopback HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from webshelf.core.config import Config
from tests import corpus
from tests.loopback import LoopbackServer


def pytest_report_header() -> str:
    """Say which pages the run uses: a fresh clone without ../shared runs on the sample."""
    return f"webshelf test pages: {corpus.SOURCE}"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test ever touches the real ~/.webshelf."""
    home = tmp_path / "home"
    monkeypatch.setenv("WEBSHELF_HOME", str(home))
    monkeypatch.delenv("WEBSHELF_CONFIG", raising=False)
    return home


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def config(home: Path) -> Config:
    """Default config, except that the loopback test server may be reached (web.allow_private;
    tests/core/test_fetch_policy.py proves loopback is refused without it) and the fallback chain is
    the local backend alone: a real corpus page that looks like an SPA shell would otherwise go to
    the browser, whose sub-resource requests ask DNS for the page's CDNs — off loopback. The browser
    tests set ``web.fallback`` themselves."""
    config = Config().with_home(home)
    config.web.allow_private = True
    config.web.fallback = ["local"]
    return config


@pytest.fixture
def home_config_allows_loopback(home: Path) -> Path:
    """A config.yaml in the test home letting the CLI (which loads its own config) reach loopback."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("web:\n  allow_private: true\n")
    return home / "config.yaml"


@pytest.fixture(scope="session")
def server():
    """Serves the full corpora when ../shared/corpora is present, else tests/corpus (tests.corpus)."""
    with LoopbackServer() as srv:
        yield srv
