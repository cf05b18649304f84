"""Sandbox adapters: one ``Runtime`` per sandbox kind (local = bubblewrap, docker, …).

    from webshelf.runtimes.registry import runtime_class
    from webshelf.mounts.spec import cache_mount
    with runtime_class("docker")(settings, cache_mount(home)) as rt:
        rt.verify(); print(rt.exec(["ls", str(rt.mount.path)], timeout=10).text())

``core.sandbox.open_runtime(name, config)`` does the same from a webshelf config. Adapters raise
the runtime classes of the one error tree (``webshelf.errors.RuntimeAdapterError`` and below).
"""

from webshelf.runtimes.base import BindRuntime, ExecResult, Runtime, VerifyReport

__all__ = ["BindRuntime", "ExecResult", "Runtime", "VerifyReport"]
