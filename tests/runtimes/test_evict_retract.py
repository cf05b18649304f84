"""Eviction retracts exactly ``PruneReport.paths`` from the call's runtimes — no hooks bus.

A real bubblewrap sandbox is attached to a series of ``web_extract`` calls against the real
loopback server under a small ``cache.max_total_bytes``: the eviction pass at the end of each
call removes older pages, and ``web_extract`` retracts those paths (and only those) from the
sandbox, which then cannot see them; the pages of the last call stay readable inside.
"""

from __future__ import annotations

import importlib.util
import logging
import uuid
from pathlib import Path

import pytest

from webshelf.core.config import Config
from webshelf.core.extract import web_extract_sync
from webshelf.core.sandbox import open_runtime
from tests.loopback import Response

MD = {"Content-Type": "text/markdown; charset=utf-8"}


def doc(tag: str) -> bytes:  # ≈ 40 KB of Markdown
    return "".join(f"## Section {i} {tag}\n\n" + f"text {i} {'w' * 70}\n" * 12 + "\n" for i in range(40)).encode()


@pytest.fixture
def local(bwrap_ready, config: Config):
    with open_runtime("local", config) as rt:
        yield rt


def test_evicted_pages_are_retracted_from_an_attached_sandbox(local, server, config: Config,
                                                               monkeypatch: pytest.MonkeyPatch, caplog):
    config.cache.max_total_bytes = 1 << 20
    retracted: list[str] = []
    real_retract = local.retract

    def recording_retract(paths):
        retracted.extend(paths)
        real_retract(paths)  # the real check: the files are gone on the host, so gone inside

    monkeypatch.setattr(local, "retract", recording_retract)
    tag = uuid.uuid4().hex[:8]
    urls = [server.route(f"/evict-retract/{tag}/{i}", Response(doc(f"{tag}-{i}"), headers=MD)) for i in range(30)]
    handed_out: list[str] = []
    with caplog.at_level(logging.WARNING, logger="webshelf"):
        for start in range(0, 30, 5):
            results = web_extract_sync(urls[start:start + 5], config=config, runtimes=[local])
            assert all(r.ok and r.notes == [] for r in results)  # published: no note
            handed_out += [r.path for r in results]
    evicted = [p for p in handed_out if not Path(p).exists()]
    assert evicted, "the cap should have evicted some pages"
    assert sorted(retracted) == sorted(evicted)  # exactly what the passes removed, each once
    assert not [r for r in caplog.records if "retract" in r.getMessage()]
    for path in evicted:
        assert local.exec(["test", "-e", path], timeout=30).exit_code == 1
    for path in handed_out[-5:]:
        inside = local.exec(["head", "-1", path], timeout=30)
        assert inside.ok and inside.text().startswith("## Section 0")


def test_there_is_no_process_wide_eviction_bus():
    assert importlib.util.find_spec("webshelf.cache.hooks") is None
