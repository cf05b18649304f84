"""Errors raised by runtime adapters.

``runtimes`` sits below ``core`` and may not import it, so it raises its own small family;
``core.sandbox`` converts each into the matching class of the one tree in ``core.errors``
(``RuntimeAdapterError`` / ``MountError``) where webshelf's API and CLI call in. Every error
names the runtime and says what to do. SDK exceptions (docker) are converted where they enter.

    SandboxError                  code
    ├── SandboxUnavailableError   runtime_unavailable  (binary, SDK, daemon or image missing)
    ├── SandboxExecError          runtime_exec_failed  (could not run a command; sandbox died)
    │   └── SandboxTimeoutError   runtime_timeout
    ├── MountCheckError           mount_error          (verify/publish found the mount wrong)
    └── SandboxConfigError        config_invalid       (settings the sandbox kind cannot run with)
"""

from __future__ import annotations

import importlib
from types import ModuleType


class SandboxError(Exception):
    code = "runtime_error"

    def __init__(self, runtime: str, message: str) -> None:
        super().__init__(f"runtime {runtime!r}: {message}")
        self.runtime = runtime
        self.detail = message


class SandboxUnavailableError(SandboxError):
    code = "runtime_unavailable"


class SandboxExecError(SandboxError):
    code = "runtime_exec_failed"


class SandboxTimeoutError(SandboxExecError):
    code = "runtime_timeout"


class MountCheckError(SandboxError):
    code = "mount_error"


class SandboxConfigError(SandboxError):
    """The runtime's settings cannot work (e.g. a mount path the sandbox kind forbids)."""

    code = "config_invalid"


def import_sdk(kind: str, runtime: str, sdk: str, extra: str, *modules: str) -> ModuleType:
    """Import an optional SDK only when its runtime is used (the first of ``modules`` is
    returned, the rest are submodules it needs); a missing one names the package to install."""
    try:
        loaded = [importlib.import_module(m) for m in modules]
    except ImportError:
        raise SandboxUnavailableError(runtime, f"the {kind} runtime needs {sdk}: pip install 'webshelf[{extra}]'") from None
    return loaded[0]
