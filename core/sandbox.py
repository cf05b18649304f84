"""webshelf's side of the runtimes: build one from config, convert its errors, read inside it.

``runtimes`` may not import ``core``, so this is where a runtime meets the config models and
the one error tree: ``open_runtime`` builds an adapter from ``runtimes.<name>``, every
``SandboxError`` becomes the matching ``RuntimeAdapterError``, and ``read_file_in`` is the
agent-side ``read_file`` — run inside the sandbox with its own ``sh``/``awk`` — returning
exactly what host ``read_file`` returns, errors included.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from webshelf.cache.layout import PAGE_SUFFIX, CacheLayout
from webshelf.core.config import Config, load_config
from webshelf.errors import (
    ConfigError, MountError, WebshelfError, PathOutsideCacheError,
    RuntimeAdapterError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError,
)
from webshelf.core.read import check_read_args, offset_past_end, page_not_found
from webshelf.mounts.spec import cache_mount
from webshelf.runtimes.base import Runtime
from webshelf.runtimes.errors import (
    MountCheckError, SandboxConfigError, SandboxError, SandboxExecError, SandboxTimeoutError, SandboxUnavailableError,
)
from webshelf.runtimes.owner import Orphan
from webshelf.runtimes.registry import kind_of, names, runtime_class
from webshelf.runtimes.local.scratch import orphan_dirs

_CONVERT = [(MountCheckError, MountError), (SandboxTimeoutError, RuntimeTimeoutError),
            (SandboxExecError, RuntimeExecError), (SandboxUnavailableError, RuntimeUnavailableError)]


def convert(exc: SandboxError) -> RuntimeAdapterError | ConfigError:
    if isinstance(exc, SandboxConfigError):
        return ConfigError(str(exc), key=f"runtimes.{exc.runtime}")
    cls = next((ours for theirs, ours in _CONVERT if isinstance(exc, theirs)), RuntimeAdapterError)
    return cls(str(exc), runtime=exc.runtime)


@contextlib.contextmanager
def converted() -> Iterator[None]:
    """Re-raise runtime adapter errors as webshelf errors (``core.errors``)."""
    try:
        yield
    except SandboxError as exc:
        raise convert(exc) from None


def open_runtime(name: str, config: Config | None = None) -> Runtime:
    """The runtime configured under ``runtimes.<name>``, not yet started (use ``with``)."""
    config = config or load_config()
    kind = kind_of(name)  # "ssh:web1" → the runtimes.ssh section, host web1
    settings = getattr(config.runtimes, kind, None) if kind in names() else None
    if not isinstance(settings, BaseModel):
        raise ConfigError(f"unknown runtime {name!r}; known runtimes: {', '.join(names())}", key=f"runtimes.{name}")
    with converted():
        cls = runtime_class(name)
        try:
            mount = cache_mount(config.home)
        except OSError as exc:
            raise MountError(f"runtime {name!r}: cannot create the cache directory under {config.home}: "
                             f"{exc.strerror or exc}", runtime=name) from None
        return cls(settings, mount, name=name)


def open_running(name: str, config: Config | None = None) -> Runtime:
    """A runtime to publish to from a one-off command: it must name an already running sandbox
    (``runtimes.docker.container``) — starting a fresh container just to publish is pointless."""
    runtime = open_runtime(name, config)
    key = runtime.offers.attach_setting  # declared by the adapter (runtimes/base.py Offers)
    if key is not None and not runtime.attached:
        raise ConfigError(f"runtime {name!r} would start a new sandbox; to publish into a running one, set "
                          f"runtimes.{name}.{key} to its name or id", key=f"runtimes.{name}.{key}")
    return runtime


# Prints "N|line" for lines s..e; when none exist, prints the line count and exits 4.
_AWK = 'NR >= s { print NR "|" $0; n++ } NR >= e { exit } END { if (!n) { print NR; exit 4 } }'
_READ = '[ -f "$1" ] || exit 3; exec awk -v s="$2" -v e="$3" "$4" "$1"'


def read_file_in(runtime: Runtime, path: str | os.PathLike[str], offset: int = 1, limit: int = 500, *,
                 config: Config | None = None, timeout: float = 30.0) -> str:
    """``read_file`` executed inside ``runtime`` with the sandbox's own tools (``sh``, ``awk``)."""
    check_read_args(offset, limit)
    config = config or load_config()
    layout = CacheLayout(config.home)
    raw = Path(path).expanduser()
    full = Path(os.path.normpath(raw if raw.is_absolute() else runtime.mount.path / raw))
    if not runtime.mount.contains(full) or not full.name.endswith(PAGE_SUFFIX) or full.name.startswith("."):
        raise PathOutsideCacheError(
            f"{path}: read_file only reads pages stored in {layout.web_dir}; use the path from a webshelf footer",
            path=str(path))
    with converted():
        result = runtime.exec(["sh", "-c", _READ, "sh", str(full), str(offset), str(offset + limit - 1), _AWK],
                              timeout=timeout)
    shown = str(path)
    if result.exit_code == 3:
        raise page_not_found(layout, full.name, shown)
    if result.exit_code == 4:
        raise offset_past_end(shown, offset, int(result.stdout.strip() or 0))
    if result.exit_code != 0:
        raise RuntimeExecError(f"runtime {runtime.name!r}: reading {shown} inside failed (exit {result.exit_code}): "
                               f"{result.stderr.decode(errors='replace').strip()[:300]}", runtime=runtime.name, path=shown)
    return result.stdout.decode("utf-8", errors="replace")


def find_orphans(config: Config | None = None) -> tuple[list[Orphan], list[str]]:
    """Sandboxes whose owning process is gone: local scratch directories in the temp directory,
    and docker containers of this home. Also the notes on what could not be checked (no docker
    SDK, no daemon) — a machine without docker has no containers to leave behind."""
    config = config or load_config()
    found, notes = list(orphan_dirs()), []
    try:
        docker = open_runtime("docker", config)
        with converted():
            try:
                found += docker.orphans()
            finally:
                docker.stop()  # only closes the client: nothing was started
    except WebshelfError as exc:
        notes.append(f"docker containers not checked: {exc.message}")
    return found, notes
