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

from webshelf.runtimes.base import BindRuntime, ExecResult, Runtime, VerifyReport

__all__ = ["BindRuntime", "ExecResult", "Runtime", "VerifyReport"]
