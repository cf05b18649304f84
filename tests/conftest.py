"""Shared fixtures: a throwaway webshelf home and a real loopback HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Config
from tests.loopback import CORPORA, LoopbackServer


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
    return Config().with_home(home)


@pytest.fixture(scope="session")
def server():
    if not CORPORA.is_dir():
        pytest.fail(f"shared corpora not found at {CORPORA}; tests expect ../shared/corpora beside the repo")
    with LoopbackServer() as srv:
        yield srv
