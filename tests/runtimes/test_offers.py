"""What a runtime offers is declared by its class (``runtimes/base.py`` ``Offers``), never probed.

``webshelf sync`` syncs only a runtime that declares a full diff; ``open_running`` refuses only a
runtime that declares an attach setting and would create a sandbox; and no caller asks a runtime
object whether it happens to have an attribute (issue 13, item 4).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from webshelf.core.config import Config
from webshelf.core.sandbox import open_running, open_runtime
from webshelf.core.surfaces.live import run_sync
from webshelf.errors import ConfigError
from webshelf.runtimes.base import BindRuntime, Offers, Runtime, SyncRuntime
from webshelf.runtimes.local.runtime import LocalRuntime
from webshelf.runtimes.modal.config import ModalRuntimeConfig
from webshelf.runtimes.registry import runtime_class, types

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("core", "cache", "mounts", "runtimes", "webshelf")


def test_every_registered_runtime_declares_its_offers_consistently_with_its_base():
    for name in types():
        cls = runtime_class(name)
        assert isinstance(cls.offers, Offers), name
        assert cls.offers.bind_mount == issubclass(cls, BindRuntime), name
        assert cls.offers.full_sync == issubclass(cls, SyncRuntime), name
    assert {n for n in types() if runtime_class(n).offers.full_sync} == {"ssh"}
    assert {n: runtime_class(n).offers.attach_setting for n in types()} == \
        {"docker": "container", "modal": "sandbox_id", "local": None, "ssh": None}
    assert not runtime_class("ssh").offers.creates_sandbox


def test_attach_settings_name_real_settings_and_attached_follows_them(config: Config):
    docker = open_runtime("docker", config)  # not started: nothing is contacted
    assert not docker.attached
    config.runtimes.docker.container = "web-box"
    assert open_runtime("docker", config).attached
    assert "sandbox_id" in ModalRuntimeConfig.model_fields
    assert not open_runtime("local", config).attached  # a fresh bwrap per command


def test_open_running_refuses_only_a_runtime_that_would_create_a_sandbox_it_could_attach_to(config: Config):
    with pytest.raises(ConfigError) as err:
        open_running("docker", config)
    assert err.value.context["key"] == "runtimes.docker.container"
    assert "would start a new sandbox" in err.value.message and "runtimes.docker.container" in err.value.message
    config.runtimes.docker.container = "web-box"
    assert open_running("docker", config).attached
    assert isinstance(open_running("local", config), LocalRuntime)  # binds the host directory: publishing is a check


def test_a_runtime_without_a_full_sync_is_not_synced(config: Config, monkeypatch: pytest.MonkeyPatch):
    started: list[Runtime] = []
    monkeypatch.setattr(LocalRuntime, "start", lambda self: started.append(self))
    with pytest.raises(ConfigError) as err:
        run_sync(config, ["local"], once=True, echo=lambda line: None, stop=threading.Event())
    assert err.value.message == "runtime 'local' bind-mounts the cache and needs no sync; name an ssh runtime"
    assert started == []


def test_a_sync_runtime_must_implement_the_full_diff():
    class Half(SyncRuntime):
        kind = "half"

        def start(self) -> None: ...
        def stop(self) -> None: ...
        def is_alive(self) -> bool: return False
        def exec(self, argv, *, timeout, stdin=None): ...
        def publish(self, paths) -> None: ...
        def retract(self, paths) -> None: ...

    with pytest.raises(TypeError, match="needs_sync.*sync|sync.*needs_sync"):
        Half(None, None)  # type: ignore[arg-type]


PROBES = [
    re.compile(r"\bhasattr\("),  # capability by attribute probing
    re.compile(r"getattr\((?:self\.)?(?:runtime|rt|target|box)\b"),  # getattr(runtime, "attached", True) and kin
    re.compile(r"\battach_key\b"),
]


def test_no_source_file_probes_runtimes_for_attributes():
    found = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if any(p.search(line) for p in PROBES):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "declare it in runtimes/base.py Offers and read runtime.offers instead:\n" + "\n".join(found)
