"""webshelf's side of the runtimes: build one from config, read inside it.

``runtimes`` may not import ``core``, so this is where a runtime meets the config models:
``open_runtime`` builds the adapter of instance ``runtimes.<name>`` (its ``type`` picks the
class), and ``read_file_in`` is the
agent-side ``read_file`` — run inside the sandbox with its own ``sh``/``awk`` — returning
exactly what host ``read_file`` returns, errors included. The adapters raise the runtime
classes of the one error tree (``webshelf.errors``) themselves, so nothing is converted here.
"""

from __future__ import annotations

import os
from pathlib import Path

from webshelf.cache.layout import PAGE_SUFFIX, CacheLayout
from webshelf.core.config import Config, load_config
from webshelf.errors import (
    CacheError, ConfigError, MountError, PathOutsideCacheError, RuntimeExecError, WebshelfError,
)
from webshelf.core.read import check_read_args, offset_past_end, page_not_found
from webshelf.mounts.spec import cache_mount
from webshelf.runtimes.base import Runtime
from webshelf.runtimes.owner import Orphan
from webshelf.runtimes.registry import runtime_class, types
from webshelf.runtimes.local.scratch import orphan_dirs


def open_runtime(name: str, config: Config | None = None) -> Runtime:
    """The runtime instance configured as ``runtimes.<name>``, not yet started (use ``with``).

    ``name`` is the instance's name; its ``type`` picks the adapter (runtimes/registry.py).
    Without any config, ``local`` and ``docker`` exist with their defaults."""
    config = config or load_config()
    settings = config.runtimes.instances().get(name)
    if settings is None:
        raise ConfigError(unknown_runtime(name, config), key=f"runtimes.{name}")
    cls = runtime_class(settings.type, name)
    try:
        mount = cache_mount(config.home)
    except CacheError as exc:
        raise MountError(f"runtime {name!r}: cannot create the cache directory under {config.home}: "
                         f"{exc.context.get('reason', exc)}", runtime=name, path=exc.context.get("path")) from None
    return cls(settings, mount, name=name)


def unknown_runtime(name: str, config: Config) -> str:
    """What to say about a runtime name that is not configured (the old ``ssh:web1`` included)."""
    configured = ", ".join(f"{n} ({s.type})" for n, s in config.runtimes.instances().items())
    kind, colon, host = name.partition(":")
    if colon and kind in types():
        return (f"unknown runtime {name!r}: runtime names no longer carry their type; configure runtimes.{host} with "
                f"type: {kind} and use --runtime {host}; configured runtimes: {configured}")
    return (f"unknown runtime {name!r}; configured runtimes: {configured}; add it under runtimes: with a type "
            f"({', '.join(types())})")


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
    result = runtime.exec(["sh", "-c", _READ, "sh", str(full), str(offset), str(offset + limit - 1), _AWK],
                          timeout=timeout)
    shown = str(path)
    if result.exit_code == 3:
        raise page_not_found(layout, full.name, shown)
    if result.exit_code == 4:
        raise offset_past_end(shown, offset, int(result.stdout.strip() or 0))
    if result.exit_code != 0:
        raise RuntimeExecError(f"reading {shown} inside failed (exit {result.exit_code}): "
                               f"{result.stderr.decode(errors='replace').strip()[:300]}", runtime=runtime.name, path=shown)
    return result.stdout.decode("utf-8", errors="replace")


def find_orphans(config: Config | None = None) -> tuple[list[Orphan], list[str]]:
    """Sandboxes whose owning process is gone: local scratch directories in the temp directory,
    and docker containers of this home. Also the notes on what could not be checked (no docker
    SDK, no daemon) — a machine without docker has no containers to leave behind."""
    config = config or load_config()
    found, notes = list(orphan_dirs()), []
    daemons: set[str | None] = set()
    for name in config.runtimes.of_type("docker"):  # each daemon once: several instances may share one
        daemon = config.runtimes.instances()[name].docker_host
        if daemon in daemons:
            continue
        daemons.add(daemon)
        try:
            docker = open_runtime(name, config)
            try:
                found += docker.orphans()
            finally:
                docker.stop()  # only closes the client: nothing was started
        except WebshelfError as exc:
            notes.append(f"docker containers not checked: {exc.message}")
    return found, notes
