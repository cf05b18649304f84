"""Runtime types → adapter classes, imported only when a runtime of that type is opened.

A config names instances (``runtimes.gpu-box: {type: docker, …}``); the ``type`` picks the
adapter here, and the instance's name is only a name. Adding a runtime type is one line here
(or a ``register`` call from a plugin) plus its options model; its optional SDK stays
unimported until an instance of that type is opened.
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


def register(kind: str, target: str) -> None:
    """Map the runtime type ``kind`` to ``"module:Class"`` (a ``Runtime`` subclass)."""
    _RUNTIMES[kind] = target


def types() -> list[str]:
    """The runtime types an instance's ``type`` may name."""
    return sorted(_RUNTIMES)


def runtime_class(kind: str, name: str | None = None) -> type[Runtime]:
    """The adapter class of runtime type ``kind`` (``name``: the instance, for the error)."""
    target = _RUNTIMES.get(kind)
    if target is None:
        raise RuntimeUnavailableError(f"unknown runtime type {kind!r}; known types: {', '.join(types())}", runtime=name or kind)
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
