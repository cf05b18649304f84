"""Runtime names → adapter classes, imported only when a runtime is used.

The name is the section under ``runtimes:`` in the YAML. Adding a runtime kind is one line
here (or a ``register`` call from a plugin); its optional SDK stays unimported until then.
"""

from __future__ import annotations

import importlib

from webshelf.runtimes.base import Runtime
from webshelf.errors import RuntimeUnavailableError

_RUNTIMES: dict[str, str] = {
    "local": "webshelf.runtimes.local.runtime:LocalRuntime",
    "docker": "webshelf.runtimes.docker.runtime:DockerRuntime",
    "modal": "webshelf.runtimes.modal.runtime:ModalRuntime",
    "ssh": "webshelf.runtimes.ssh.runtime:SshRuntime",
}


def register(name: str, target: str) -> None:
    """Map ``name`` to ``"module:Class"`` (a ``Runtime`` subclass)."""
    _RUNTIMES[name] = target


def names() -> list[str]:
    return sorted(_RUNTIMES)


def kind_of(name: str) -> str:
    """``ssh:web1`` → ``ssh``: a runtime name may pick one instance of a kind after a colon."""
    return name.partition(":")[0]


def runtime_class(name: str) -> type[Runtime]:
    target = _RUNTIMES.get(kind_of(name))
    if target is None:
        raise RuntimeUnavailableError(f"unknown runtime; known runtimes: {', '.join(names())}", runtime=name)
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
