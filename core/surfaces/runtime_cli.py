"""``webshelf runtime …``: the sandboxes webshelf starts, checks, runs commands in and cleans up.

    webshelf runtime list                       the configured runtimes and what each one is
    webshelf runtime check NAME                 start, verify the read-only same-path mount from inside, stop
    webshelf runtime run NAME [--timeout S] [--stdin/--no-stdin] -- CMD…
    webshelf runtime prune [--dry-run]          remove sandboxes whose webshelf process is gone
    webshelf runtime image [--busybox PATH] [--tag NAME]   build the docker sandbox image offline

``webshelf sandbox run --runtime NAME -- CMD…`` is the old spelling of ``runtime run`` (hidden;
it prints a one-line deprecation note on stderr). Runtime names are passed through to
``core.sandbox.open_runtime`` as given; resolving them is the config's business.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

import click

from webshelf.core.config import Config
from webshelf.core.surfaces.cli_common import config_of, deprecated, fail
from webshelf.core.surfaces.shutdown import Stopped, stopping_on_signals
from webshelf.errors import ConfigError, RuntimeTimeoutError, RuntimeUnavailableError, WebshelfError

#: exit codes of ``runtime run`` besides the command's own (as timeout(1), docker run and a shell use them)
EXIT_TIMEOUT, EXIT_NO_SANDBOX, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND = 124, 125, 126, 127


@click.group("runtime")
def runtime_group() -> None:
    """List, check and use the configured sandboxes; remove ones left behind; build an image."""


# list --------------------------------------------------------------------------------------
def _what(settings) -> str:
    """One line saying what an instance of each type is."""
    if settings.type == "local":
        return ("commands on the host, no sandbox (sandbox: none)" if settings.sandbox == "none"
                else f"bubblewrap sandbox ({settings.bwrap}), network {'shared' if settings.network else 'off'}")
    if settings.type == "docker":
        return (f"attach to running container {settings.container!r}" if settings.container
                else f"new container from image {settings.image}, network {settings.network}")
    if settings.type == "modal":
        return (f"attach to sandbox {settings.sandbox_id}" if settings.sandbox_id
                else f"new Modal sandboxes (app {settings.app}, volume {settings.volume})")
    return f"{settings.user}@{settings.host}:{settings.port}, mirror read-only by {settings.readonly}"


def configured_runtimes(config: Config) -> list[tuple[str, str, str]]:
    """(name, type, what it is) for every runtime instance a command can name, in config order;
    ``(defaults)`` marks an instance the config file does not set (``local`` and ``docker``
    always exist)."""
    return [(name, s.type, _what(s) + (" (defaults)" if s.model_fields_set <= {"type"} else ""))
            for name, s in config.runtimes.instances().items()]


@runtime_group.command("list")
@click.pass_context
def runtime_list(ctx: click.Context) -> None:
    """The runtimes you can name with --runtime, check or run: name, type, what it is."""
    rows = configured_runtimes(config_of(ctx))
    width = max(len(name) for name, _, _ in rows)
    for name, kind, what in rows:
        click.echo(f"{name:<{width}}  {kind:<6}  {what}")


# check and run -----------------------------------------------------------------------------
def _stopped(stop: Stopped, what: str) -> None:
    click.echo(f"error[stopped]: {stop.name} received; {what}", err=True)
    sys.exit(stop.exit_code)


@runtime_group.command("check")
@click.argument("name")
@click.pass_context
def runtime_check(ctx: click.Context, name: str) -> None:
    """Start the sandbox, verify the read-only same-path mount from inside, stop it."""
    from webshelf.core.sandbox import open_runtime

    config = config_of(ctx)
    try:
        with stopping_on_signals():
            runtime = open_runtime(name, config)
            with runtime:
                report = runtime.verify()
    except Stopped as stop:
        _stopped(stop, "the sandbox was stopped and removed")
    except ConfigError as exc:
        fail(exc, 2)
    except WebshelfError as exc:
        fail(exc, 1)
    click.echo("\n".join(report.lines()))
    click.echo("result: ok")


def _stdin_for(forward: bool | None) -> BinaryIO | None:
    """What ``runtime run`` gives the command as standard input: ours, as a stream the runtime
    copies while the command runs (runtimes/stdin.py: ``yes | … -- head -1`` ends, a large
    input never sits whole in memory), when it is a pipe or a file; nothing when it is a
    terminal (so an interactive shell never blocks waiting for input nobody will type) or
    ``--no-stdin``."""
    if forward is False:
        return None
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return None  # no usable stdin (none, or closed)
    if tty and forward is None:
        return None
    return stream


def run_in_sandbox(ctx: click.Context, name: str, timeout: float, forward_stdin: bool | None,
                   command: tuple[str, ...]) -> None:
    """Start ``name``, run ``command``, pass its output through, stop; exit with its code."""
    from webshelf.core.sandbox import open_runtime

    config = config_of(ctx)
    stdin = _stdin_for(forward_stdin)
    try:
        with stopping_on_signals():
            runtime = open_runtime(name, config)
            with runtime:
                result = runtime.exec(list(command), timeout=timeout, stdin=stdin)
    except Stopped as stop:
        _stopped(stop, "the sandbox was stopped and removed")
    except ConfigError as exc:
        fail(exc, 2)
    except RuntimeTimeoutError as exc:
        fail(exc, EXIT_TIMEOUT)
    except WebshelfError as exc:
        fail(exc, EXIT_NO_SANDBOX)
    click.echo(result.stdout, nl=False)  # bytes pass through undecoded
    click.echo(result.stderr, nl=False, err=True)
    sys.exit(result.exit_code)


_RUN_OPTIONS = [
    click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
                 help="Seconds before the command is killed."),
    click.option("--stdin/--no-stdin", "forward_stdin", default=None,
                 help="Send standard input to the command (default: yes unless it is a terminal)."),
]


def _with_run_options(f):
    for option in reversed(_RUN_OPTIONS):
        f = option(f)
    return f


@runtime_group.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@_with_run_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def runtime_run(ctx: click.Context, name: str, timeout: float, forward_stdin: bool | None,
                command: tuple[str, ...]) -> None:
    """Start sandbox NAME, run COMMAND in it, print its output, stop it; exit with its exit code.

    Exit codes besides the command's own: 124 timeout, 125 the sandbox could not start (or died),
    126 the command is not executable, 127 not found, 128+N stopped by signal N (the sandbox is
    removed first), 2 bad usage or config.
    """
    run_in_sandbox(ctx, name, timeout, forward_stdin, command)


@click.group("sandbox", hidden=True)
def sandbox_group() -> None:
    """Old spelling of `webshelf runtime run`."""


@sandbox_group.command("run", context_settings={"ignore_unknown_options": True})
@click.option("--runtime", "name", required=True, metavar="NAME", help="The runtime to use (local, docker, …).")
@_with_run_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def sandbox_run(ctx: click.Context, name: str, timeout: float, forward_stdin: bool | None,
                command: tuple[str, ...]) -> None:
    """Deprecated: use `webshelf runtime run NAME -- COMMAND…`."""
    deprecated("sandbox run --runtime NAME", "runtime run NAME")
    run_in_sandbox(ctx, name, timeout, forward_stdin, command)


# prune and image ---------------------------------------------------------------------------
@runtime_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.pass_context
def runtime_prune(ctx: click.Context, dry_run: bool) -> None:
    """Remove sandboxes whose webshelf process is gone: docker containers of this home and local
    temp dirs (each start of those runtimes does the same)."""
    from webshelf.core.sandbox import find_orphans

    config = config_of(ctx)
    found, notes = find_orphans(config)
    for orphan in found:
        if not dry_run:
            orphan.remove()
        click.echo(f"{'would remove' if dry_run else 'removed'} {orphan.describe()}")
    for note in notes:
        click.echo(f"note: {note}", err=True)
    n = f"{len(found)} orphan{'' if len(found) == 1 else 's'}"
    click.echo("no orphans" if not found else f"{n} found (dry run: nothing removed)" if dry_run else f"{n} removed")


@runtime_group.command("image")
@click.option("--busybox", "busybox", metavar="PATH", help="The static busybox to build from (default: the one on PATH).")
@click.option("--tag", "tag", metavar="NAME", help="Image name (default: webshelf-busybox:<hash of the busybox binary>).")
@click.pass_context
def runtime_image(ctx: click.Context, busybox: str | None, tag: str | None) -> None:
    """Build the docker sandbox image offline (docker import of a static busybox: no registry,
    no base image) and print the config line that makes the docker runtime use it."""
    from webshelf.core.sandbox import open_runtime
    from webshelf.runtimes.docker import image

    config = config_of(ctx)
    try:
        source = image.find_busybox(busybox)
        image.applets(source)
    except ValueError as exc:
        fail(RuntimeUnavailableError(f"cannot build the sandbox image: {exc}", runtime="docker"), 1)
    try:
        docker = open_runtime("docker", config)
        client = docker._connect()
    except ConfigError as exc:
        fail(exc, 2)
    except WebshelfError as exc:
        fail(exc, 1)
    try:
        built = image.ensure_image(client, source, tag)
    except docker._docker.errors.DockerException as exc:  # the SDK's errors enter here: name them
        fail(RuntimeUnavailableError(f"cannot build the sandbox image: docker import failed: {exc}", runtime="docker"), 1)
    finally:
        client.close()
    click.echo(f"{'built' if built.created else 'already present'}: {built.name} (docker import of {built.busybox}; "
               "no registry needed)")
    click.echo("use it: add to the config file (webshelf config path):")
    click.echo(f"runtimes:\n  docker:\n    type: docker\n    image: {built.name}")
