"""The ``webshelf`` command: nouns and verbs over the same Python API.

    webshelf extract URL… [--limit N] [--fresh] [--json] [--backend NAME]
    webshelf backends
    webshelf read PATH [--offset N] [--limit N]
    webshelf config show|check|path
    webshelf sandbox run --runtime NAME -- CMD…
    webshelf runtime check NAME
    webshelf runtime prune [--dry-run]
    webshelf sync [--runtime NAME…] [--once]
    webshelf tools [--format openai|anthropic|json-schema]
    webshelf mcp
    webshelf cache stats|list|prune|clear|verify   (core/surfaces/cache_cli.py)

Output is plain and stable (tests assert it exactly); progress goes to stderr only when
several URLs are fetched on a terminal. Exit codes: 0 ok, 1 some URL or read failed,
2 bad usage or config; ``sandbox run`` passes the command's own (see its help).
"""

from __future__ import annotations

import contextlib
import json
import sys

import click
import yaml

from webshelf.core.surfaces.cache_cli import cache_group
from webshelf.core.config import config_path, load_config
from webshelf.core.config_env import unset_settings
from webshelf.errors import ConfigError, InputError, RuntimeTimeoutError, WebshelfError
from webshelf.core.extract import web_extract_sync
from webshelf.core.models import ExtractResult
from webshelf.core.read import MAX_LIMIT, read_file
from webshelf.core.sandbox import converted, find_orphans, open_running, open_runtime
from webshelf.core.surfaces.shutdown import Stopped, stopping_on_signals


def _fail(exc: WebshelfError, code: int) -> None:
    click.echo(f"error[{exc.code}]: {exc.message}", err=True)
    sys.exit(code)


def _config(ctx: click.Context):
    try:
        return load_config(ctx.obj.get("config"))
    except ConfigError as exc:
        _fail(exc, 2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_file", metavar="FILE", envvar="WEBSHELF_CONFIG",
              help="Config file (default: $WEBSHELF_HOME/config.yaml).")
@click.version_option(package_name="webshelf")
@click.pass_context
def main(ctx: click.Context, config_file: str | None) -> None:
    """webshelf — clean Markdown of web pages for AI agents, with the full text kept on a shelf."""
    ctx.ensure_object(dict)
    ctx.obj["config"] = config_file


def _progress(total: int):
    """A rich progress bar on stderr, only for several URLs on a terminal."""
    if total < 2 or not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(transient=True, console=Console(stderr=True))
    task = bar.add_task("extracting", total=total)
    return bar, (lambda _r: bar.advance(task))


@main.command()
@click.argument("urls", nargs=-1, required=True)
@click.option("--limit", "char_limit", type=int, help="Character budget per page (default web.extract_char_limit).")
@click.option("--fresh", is_flag=True, help="Fetch again even if a recent stored copy exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as a JSON list.")
@click.option("--runtime", "runtime_names", multiple=True, metavar="NAME",
              help="Publish each page into this configured, running sandbox before printing (repeatable).")
@click.option("--backend", "backend", metavar="NAME",
              help="Fetch with this backend (local, firecrawl, tavily, exa, parallel) instead of the configured one.")
@click.pass_context
def extract(ctx: click.Context, urls: tuple[str, ...], char_limit: int | None, fresh: bool, as_json: bool,
            runtime_names: tuple[str, ...], backend: str | None) -> None:
    """Fetch URLs and print each page as the agent would see it."""
    config = _config(ctx)
    bar, on_result = _progress(len(urls))
    with contextlib.ExitStack() as stack:
        try:
            runtimes = [stack.enter_context(_running(name, config)) for name in runtime_names]
            if bar:
                with bar:
                    results = web_extract_sync(list(urls), char_limit=char_limit, fresh=fresh, config=config,
                                               progress=on_result, runtimes=runtimes, backend=backend)
            else:
                results = web_extract_sync(list(urls), char_limit=char_limit, fresh=fresh, config=config,
                                           runtimes=runtimes, backend=backend)
        except (InputError, ConfigError) as exc:
            _fail(exc, 2)
        except WebshelfError as exc:
            _fail(exc, 1)
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2, ensure_ascii=False))
    else:
        for i, result in enumerate(results):
            _print_result(result, several=len(results) > 1, first=i == 0)
    sys.exit(0 if all(r.ok for r in results) else 1)


def _print_result(result: ExtractResult, *, several: bool, first: bool) -> None:
    if several:
        click.echo(("" if first else "\n") + f"==> {result.url} <==")
    if result.error:
        click.echo(f"error[{result.error.code}]: {result.error.message}", err=True)
        if several:
            click.echo(f"error[{result.error.code}]: {result.error.message}")
        return
    click.echo(result.content, nl=False)  # its notes are inside it, within the budget (not repeated on stderr)


@main.command()
@click.argument("path")
@click.option("--offset", default=1, show_default=True, type=int, help="First line to print (1-based).")
@click.option("--limit", default=500, show_default=True, type=int, help=f"Lines to print (at most {MAX_LIMIT:,}).")
@click.pass_context
def read(ctx: click.Context, path: str, offset: int, limit: int) -> None:
    """Print lines of a stored page as N|text."""
    config = _config(ctx)
    try:
        click.echo(read_file(path, offset, limit, config=config), nl=False)
    except InputError as exc:
        _fail(exc, 2)
    except WebshelfError as exc:
        _fail(exc, 1)


@main.command("backends")
@click.pass_context
def backends_cmd(ctx: click.Context) -> None:
    """List the backends, which can be used now and why (not), which one extract uses and why,
    and which one web.backend: auto would pick."""
    from webshelf.core.backends import CHOICES, HOSTED_KEYS, auto_pick, backend_status, selection
    from webshelf.core.backends.routing import hosted_rule

    config = _config(ctx)
    try:
        chosen = selection(config)
        rows = backend_status(config)
        auto, auto_why = auto_pick(config)
    except ConfigError as exc:
        _fail(exc, 2)
    for row in rows:
        mark = "*" if row.name == chosen.name else " "
        click.echo(f"{mark} {row.name:<10} {'usable' if row.usable else 'unusable':<9} {row.why}")
    status = next((r for r in rows if r.name == chosen.name), None)
    problem = ("" if status and status.usable else
               " (unusable: set its API key)" if status else
               f" (unknown backend; choose one of: {', '.join(CHOICES)})")
    click.echo(f"extract uses: {chosen.name}{problem} — {chosen.why}")
    click.echo(f"auto would pick: {auto} — {auto_why}")
    if chosen.name in HOSTED_KEYS:
        click.echo(hosted_rule(config, chosen.name))
    if problem:
        sys.exit(1)


@main.group("config")
def config_group() -> None:
    """Show, check or locate the configuration."""


@config_group.command("path")
@click.pass_context
def config_path_cmd(ctx: click.Context) -> None:
    """Print the config file that applies (it may not exist yet)."""
    path, _named = config_path(ctx.obj.get("config"))
    click.echo(str(path))


@config_group.command("show")
@click.pass_context
def config_show(ctx: click.Context) -> None:
    """Print the effective configuration (defaults filled in) as YAML."""
    config = _config(ctx)
    click.echo(f"# home: {config.home}\n# file: {config.source or '(none: defaults)'}")
    for unset in unset_settings(config):
        click.echo(f"# unset: {unset.key} (environment variable {unset.var} is not set; shown at its default, "
                   "and whatever reads it fails until the variable is set)")
    click.echo(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), nl=False)


@config_group.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate the configuration; exit 2 with the problems if it is invalid."""
    config = _config(ctx)
    click.echo(f"ok: {config.source or 'no config file; using defaults'}")
    for unset in unset_settings(config):  # not fatal: only what reads the setting fails
        click.echo(f"warning: {unset.key}: environment variable {unset.var} is not set; whatever reads this "
                   "setting fails until it is", err=True)


@contextlib.contextmanager
def _running(name: str, config):
    """A started runtime for publishing; attaches, so nothing the user runs is stopped."""
    runtime = open_running(name, config)
    with converted():
        runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


@main.group("sandbox")
def sandbox_group() -> None:
    """Run commands in a configured sandbox (runtimes.<name> in the config)."""


#: exit codes of ``sandbox run`` besides the command's own (as timeout(1), docker run and a shell use them)
EXIT_TIMEOUT, EXIT_NO_SANDBOX, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND = 124, 125, 126, 127


def _stdin_for(forward: bool | None) -> bytes | None:
    """What ``sandbox run`` sends to the command: all of our standard input when it is a pipe or
    a file (read to EOF before the command starts), nothing when it is a terminal (so an
    interactive shell never blocks waiting for input nobody will type) or ``--no-stdin``."""
    if forward is False:
        return None
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return None  # no usable stdin (none, or closed)
    if tty and forward is None:
        return None
    try:
        return stream.read()
    except (OSError, ValueError):
        return None


def _stopped(stop: Stopped, what: str) -> None:
    click.echo(f"error[stopped]: {stop.name} received; {what}", err=True)
    sys.exit(stop.exit_code)


@sandbox_group.command("run", context_settings={"ignore_unknown_options": True})
@click.option("--runtime", "name", required=True, metavar="NAME", help="The runtime instance to use (runtimes.NAME in config; local and docker always exist).")
@click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds before the command is killed.")
@click.option("--stdin/--no-stdin", "forward_stdin", default=None,
              help="Send standard input to the command (default: yes unless it is a terminal).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def sandbox_run(ctx: click.Context, name: str, timeout: float, forward_stdin: bool | None,
                command: tuple[str, ...]) -> None:
    """Start the sandbox, run COMMAND in it, print its output, stop it; exit with its exit code.

    Exit codes besides the command's own: 124 timeout, 125 the sandbox could not start (or died),
    126 the command is not executable, 127 not found, 128+N stopped by signal N (the sandbox is
    removed first), 2 bad usage or config.
    """
    config = _config(ctx)
    stdin = _stdin_for(forward_stdin)
    try:
        with stopping_on_signals():
            runtime = open_runtime(name, config)
            with converted(), runtime:
                result = runtime.exec(list(command), timeout=timeout, stdin=stdin)
    except Stopped as stop:
        _stopped(stop, "the sandbox was stopped and removed")
    except ConfigError as exc:
        _fail(exc, 2)
    except RuntimeTimeoutError as exc:
        _fail(exc, EXIT_TIMEOUT)
    except WebshelfError as exc:
        _fail(exc, EXIT_NO_SANDBOX)
    click.echo(result.stdout, nl=False)  # bytes pass through undecoded
    click.echo(result.stderr, nl=False, err=True)
    sys.exit(result.exit_code)


@main.group("runtime")
def runtime_group() -> None:
    """Check configured runtimes; remove sandboxes left behind."""


@runtime_group.command("check")
@click.argument("name")
@click.pass_context
def runtime_check(ctx: click.Context, name: str) -> None:
    """Start the sandbox, verify the read-only same-path mount from inside, stop it."""
    config = _config(ctx)
    try:
        with stopping_on_signals():
            runtime = open_runtime(name, config)
            with converted(), runtime:
                report = runtime.verify()
    except Stopped as stop:
        _stopped(stop, "the sandbox was stopped and removed")
    except ConfigError as exc:
        _fail(exc, 2)
    except WebshelfError as exc:
        _fail(exc, 1)
    click.echo("\n".join(report.lines()))
    click.echo("result: ok")


@runtime_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.pass_context
def runtime_prune(ctx: click.Context, dry_run: bool) -> None:
    """Remove sandboxes whose webshelf process is gone: docker containers of this home and local
    temp dirs (each start of those runtimes does the same)."""
    config = _config(ctx)
    found, notes = find_orphans(config)
    for orphan in found:
        if not dry_run:
            orphan.remove()
        click.echo(f"{'would remove' if dry_run else 'removed'} {orphan.describe()}")
    for note in notes:
        click.echo(f"note: {note}", err=True)
    n = f"{len(found)} orphan{'' if len(found) == 1 else 's'}"
    click.echo("no orphans" if not found else f"{n} found (dry run: nothing removed)" if dry_run else f"{n} removed")


@main.command("sync")
@click.option("--runtime", "names", multiple=True, metavar="NAME",
              help="A runtime of type ssh to keep in step (repeatable; default: every one configured).")
@click.option("--once", is_flag=True, help="Run one full diff per host and exit.")
@click.pass_context
def sync_command(ctx: click.Context, names: tuple[str, ...], once: bool) -> None:
    """Mirror the cache to SSH hosts: a full diff, then live changes until Ctrl-C / SIGTERM."""
    from webshelf.core.surfaces.live import run_sync

    config = _config(ctx)
    try:
        run_sync(config, names, once=once, echo=lambda line: click.echo(line))
    except ConfigError as exc:
        _fail(exc, 2)
    except WebshelfError as exc:
        _fail(exc, 1)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["openai", "anthropic", "json-schema"]), default="json-schema",
              show_default=True, help="Shape of the definitions: OpenAI function tools, Anthropic tools, or plain JSON schema.")
def tools(fmt: str) -> None:
    """Print the agent tool definitions (web_extract, read_file, search_page) as JSON."""
    from webshelf.core.surfaces.tools import tool_definitions

    click.echo(json.dumps(tool_definitions(fmt), indent=2, ensure_ascii=False))


@main.command()
@click.option("--runtime", "runtime_names", multiple=True, metavar="NAME",
              help="Publish extracted pages into this running sandbox (runtimes.NAME in config); repeatable.")
@click.pass_context
def mcp(ctx: click.Context, runtime_names: tuple[str, ...]) -> None:
    """Run the MCP server on stdio (web_extract, read_file, search_page)."""
    import asyncio

    from webshelf.core.surfaces.mcp_server import serve_stdio

    config = _config(ctx)
    try:
        with contextlib.ExitStack() as stack:
            runtimes = [stack.enter_context(_running(name, config)) for name in runtime_names]
            asyncio.run(serve_stdio(config, runtimes))
    except WebshelfError as exc:
        _fail(exc, 2)
    except KeyboardInterrupt:
        pass


main.add_command(cache_group)


if __name__ == "__main__":  # pragma: no cover
    main()
