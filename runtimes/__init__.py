"""Sandbox adapters: one ``Runtime`` per sandbox type (local = bubblewrap, docker, ssh, modal),
each with its options model beside it (``runtimes/<type>/config.py``).

    from webshelf.runtimes.registry import runtime_class
    from webshelf.runtimes.docker.config import DockerRuntimeConfig
    from webshelf.mounts.spec import cache_mount
    with runtime_class("docker")(DockerRuntimeConfig(), cache_mount(home), name="box") as rt:
        rt.verify(); print(rt.exec(["ls", str(rt.mount.path)], timeout=10).text())

``core.sandbox.open_runtime(name, config)`` does the same for the instance ``runtimes.<name>``
of a webshelf config. Adapters raise the runtime classes of the one error tree
(``webshelf.errors.RuntimeAdapterError`` and below).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webshelf._lazy import lazy_getattr

# name -> module; imported on first use (PEP 562), so importing one submodule — a runtime's
# config model, which every config load needs — does not import the adapters' base and the mounts room (issue 15)
_LAZY = {
    "BindRuntime": "webshelf.runtimes.base",
    "ExecResult": "webshelf.runtimes.base",
    "Runtime": "webshelf.runtimes.base",
    "VerifyReport": "webshelf.runtimes.base",
}

if TYPE_CHECKING:
    from webshelf.runtimes.base import BindRuntime, ExecResult, Runtime, VerifyReport

__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
