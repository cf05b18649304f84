"""The ``webshelf`` command: nouns and verbs over the same Python API.

    webshelf extract URL… [--limit N] [--fresh] [--json] [--backend NAME] [--runtime NAME…]
    webshelf read PATH [--offset N] [--limit N]      also: webshelf read path="…" offset=N limit=M
    webshelf search PATH PATTERN [--regex] [--case-sensitive] [--context N] [--max-results N]
    webshelf config path|show|check
    webshelf backend list
    webshelf runtime list|check|run|prune|image     (core/surfaces/runtime_cli.py)
    webshelf cache stats|list|prune|clear|verify    (core/surfaces/cache_cli.py)
    webshelf sync [--runtime NAME…] [--once]
    webshelf tools [--format openai|anthropic|json-schema]
    webshelf mcp serve [--runtime NAME…]

Old spellings still work, hidden, with a one-line deprecation note on stderr: ``backends``
(``backend list``), ``sandbox run --runtime NAME`` (``runtime run NAME``), ``mcp`` without a
verb (``mcp serve``).

Output is plain and stable (tests assert it exactly); several URLs print through the one
renderer that ``call_tool`` and MCP use (core/surfaces/render.py). Progress goes to stderr
only when several URLs are fetched on a terminal. Exit codes: 0 ok, 1 some URL or read
failed, 2 bad usage or config; ``runtime run`` passes the command's own (see its help).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys

import click

from webshelf.core.config_paths import config_path
from webshelf.core.surfaces.cli_common import config_of, deprecated, fail, running
from webshelf.errors import ConfigError, InputError, WebshelfError

MAX_LIMIT = 2_000  # core/read.py's MAX_LIMIT, for the help text (a test checks they agree); importing it loads the reader


class LazyGroup(click.Group):
    """The top-level command: the command groups that live in modules of their own (``runtime``,
    ``sandbox``, ``cache``) are imported when a command line names them, or when the help lists
    them — not by every ``webshelf extract`` (issue 15's start-up)."""

    LAZY = {"runtime": ("webshelf.core.surfaces.runtime_cli", "runtime_group"),
            "sandbox": ("webshelf.core.surfaces.runtime_cli", "sandbox_group"),
            "cache": ("webshelf.core.surfaces.cache_cli", "cache_group")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            module, attr = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_file", metavar="FILE", envvar="WEBSHELF_CONFIG",
              help="Config file (default: $WEBSHELF_HOME/config.yaml).")
@click.version_option(package_name="webshelf")
@click.pass_context
def main(ctx: click.Context, config_file: str | None) -> None:
    """webshelf — clean Markdown of web pages for AI agents, with the full text kept on a shelf."""
    ctx.ensure_object(dict)
    ctx.obj["config"] = config_file


#: the config probe ``cli_entry.main`` made for the command line this run parses — a plain
#: ``extract URL [--json] [--limit N]`` whose cached answer ``cli_cached.serve`` declined — so that
#: ``extract`` neither reads the config file and its snapshot nor asks the shelf a second time
#: (issue 15: the uncached CLI built the probe twice). Set only for the duration of that one run.
_handed = None


@contextlib.contextmanager
def handed_probe(probe):  # noqa: ANN001, ANN201 — a core.config_snapshot.Probe
    """Run ``main`` (once) with ``probe`` handed to the ``extract`` command."""
    global _handed
    _handed = probe
    try:
        yield
    finally:
        _handed = None


def _take_handed():  # noqa: ANN202
    global _handed
    probe, _handed = _handed, None  # used once: a command run inside this one never sees it
    return probe


def _progress(total: int):
    """A rich progress bar on stderr, only for several URLs on a terminal."""
    if total < 2 or not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(transient=True, console=Console(stderr=True))
    task = bar.add_task("extracting", total=total)
    return bar, (lambda _r: bar.advance(task))


# extract, read, search -----------------------------------------------------------------------
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
    """Fetch URLs and print each page as the agent would see it.

    SIGTERM, SIGHUP or SIGINT while fetching: the sandboxes it attached to are let go, the
    browser and the conversion workers it started are closed (core/shutdown.py, at exit), and
    it exits ``128 + N`` with ``error[stopped]`` on stderr, as ``runtime run`` and ``mcp serve`` do.

    One URL the shelf answers, under a config validated before (core/surfaces/cli_cached.py):
    the same output and exit code, printed without importing the pipeline or pydantic."""
    probe = None
    if not (fresh or runtime_names or backend):
        probe = _take_handed()  # the console script probed this very command line and the shelf declined it
        if probe is None:
            from webshelf.core.config_snapshot import Probe
            from webshelf.core.surfaces.cli_cached import serve

            probe = Probe((ctx.find_root().obj or {}).get("config"))
            answer = serve(probe, urls, char_limit, as_json)
            if answer is not None:
                click.echo(answer[0], nl=False)
                sys.exit(answer[1])
    from webshelf.core.extract import web_extract_sync
    from webshelf.core.surfaces.render import blocks, join
    from webshelf.core.surfaces.shutdown import Stopped, stopping_on_signals

    config = config_of(ctx)
    if probe is not None and probe.settings is None:
        probe.save(config)  # validated: the next call under this very config may take the cached path
    bar, on_result = _progress(len(urls))
    options = dict(char_limit=char_limit, fresh=fresh, config=config, backend=backend)
    try:
        with stopping_on_signals() as shutdown:
            try:
                options["runtimes"] = [shutdown.enter(running(name, config), f"runtime {name!r}")
                                       for name in runtime_names]
                if bar:
                    with bar:
                        results = web_extract_sync(list(urls), progress=on_result, **options)
                else:
                    results = web_extract_sync(list(urls), **options)
            except (InputError, ConfigError) as exc:
                fail(exc, 2)
            except WebshelfError as exc:
                fail(exc, 1)
    except Stopped as stop:
        click.echo(f"error[stopped]: {stop.name} received; the extract stopped and printed nothing", err=True)
        sys.exit(stop.exit_code)
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2, ensure_ascii=False))
        sys.exit(0 if all(r.ok for r in results) else 1)
    parts = blocks(results, char_limit or config.web.extract_char_limit, surface="cli")
    failed = [b for b in parts if b.error]
    if len(parts) == 1 and failed:
        click.echo(failed[0].text, nl=False, err=True)  # one URL: its error is the whole answer, on stderr
    else:
        click.echo(join(parts), nl=False)  # several: each error once, in its block
        if failed:
            click.echo(f"{len(failed)} of {len(parts)} URLs failed: {', '.join(b.url for b in failed)}", err=True)
    sys.exit(1 if failed else 0)


@main.command()
@click.argument("words", nargs=-1, required=True, metavar='PATH | path="…" [offset=N] [limit=M]')
@click.option("--offset", type=int, help="First line to print (1-based; default 1).")
@click.option("--limit", type=int, help=f"Lines to print (default 500, at most {MAX_LIMIT:,}).")
@click.pass_context
def read(ctx: click.Context, words: tuple[str, ...], offset: int | None, limit: int | None) -> None:
    """Print lines of a stored page as N|text.

    Takes the footer's hint as it is: webshelf read path="…" offset=169 limit=500
    (quoted as the footer quotes it, or already unquoted by a shell), or PATH with flags.
    """
    from webshelf.core.read import read_file
    from webshelf.core.surfaces.read_args import parse_read_args

    config = config_of(ctx)
    try:
        args = parse_read_args(words, offset=offset, limit=limit)
        text = read_file(args.path, args.offset or 1, args.limit or 500, config=config)
    except InputError as exc:
        fail(exc, 2)
    except WebshelfError as exc:
        fail(exc, 1)
    click.echo(text, nl=False)


@main.command()
@click.argument("path")
@click.argument("pattern")
@click.option("--regex", is_flag=True, help="PATTERN is a Python regular expression (default: plain text).")
@click.option("--case-sensitive", is_flag=True, help="Match letter case exactly (default: ignore case).")
@click.option("--context", "context_lines", default=1, show_default=True, type=int,
              help="Lines of context before and after each match.")
@click.option("--max-results", default=None, type=int, help="Matching lines to show (as the search_page tool).")
@click.pass_context
def search(ctx: click.Context, path: str, pattern: str, regex: bool, case_sensitive: bool, context_lines: int,
           max_results: int | None) -> None:
    """Find lines in a stored page: >N|match with N|context lines, as the search_page tool."""
    from webshelf.core.search_page import DEFAULT_RESULTS, search_page
    from webshelf.core.surfaces.render import respell

    config = config_of(ctx)
    try:
        text = search_page(path, pattern, DEFAULT_RESULTS if max_results is None else max_results, regex=regex,
                           case_sensitive=case_sensitive, context=context_lines, config=config)
    except InputError as exc:
        exc.message = respell(exc.message, "cli")
        fail(exc, 2)
    except WebshelfError as exc:
        fail(exc, 1)
    click.echo(text, nl=False)


# backend ---------------------------------------------------------------------------------
@main.group("backend")
def backend_group() -> None:
    """The fetch backends: local and the hosted providers."""


def _backend_list(ctx: click.Context) -> None:
    from webshelf.core.backends import CHOICES, HOSTED_KEYS, auto_pick, backend_status, selection
    from webshelf.core.backends.routing import hosted_rule

    config = config_of(ctx)
    try:
        chosen = selection(config)
        rows = backend_status(config)
        auto, auto_why = auto_pick(config)
    except ConfigError as exc:
        fail(exc, 2)
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


@backend_group.command("list")
@click.pass_context
def backend_list(ctx: click.Context) -> None:
    """List the backends, which can be used now and why (not), which one extract uses and why,
    and which one web.backend: auto would pick."""
    _backend_list(ctx)


@main.command("backends", hidden=True)
@click.pass_context
def backends_cmd(ctx: click.Context) -> None:
    """Deprecated: use `webshelf backend list`."""
    deprecated("backends", "backend list")
    _backend_list(ctx)


# config ----------------------------------------------------------------------------------
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
    from webshelf.core.config_env import unset_settings

    config = config_of(ctx)
    click.echo(f"# home: {config.home}\n# file: {config.source or '(none: defaults)'}")
    for unset in unset_settings(config):
        click.echo(f"# unset: {unset.key} (environment variable {unset.var} is not set; shown at its default, "
                   "and whatever reads it fails until the variable is set)")
    import yaml

    click.echo(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), nl=False)


@config_group.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate the configuration; exit 2 with the problems if it is invalid."""
    from webshelf.core.config_env import unset_settings

    config = config_of(ctx)
    click.echo(f"ok: {config.source or 'no config file; using defaults'}")
    for unset in unset_settings(config):  # not fatal: only what reads the setting fails
        click.echo(f"warning: {unset.key}: environment variable {unset.var} is not set; whatever reads this "
                   "setting fails until it is", err=True)



# sync, tools, mcp ------------------------------------------------------------------------
@main.command("sync")
@click.option("--runtime", "names", multiple=True, metavar="NAME",
              help="A runtime of type ssh to keep in step (repeatable; default: every one configured).")
@click.option("--once", is_flag=True, help="Run one full diff per host and exit.")
@click.pass_context
def sync_command(ctx: click.Context, names: tuple[str, ...], once: bool) -> None:
    """Mirror the cache to SSH hosts: a full diff, then live changes until Ctrl-C / SIGTERM."""
    from webshelf.core.surfaces.live import run_sync

    config = config_of(ctx)
    try:
        run_sync(config, names, once=once, echo=lambda line: click.echo(line))
    except ConfigError as exc:
        fail(exc, 2)
    except WebshelfError as exc:
        fail(exc, 1)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["openai", "anthropic", "json-schema"]), default="json-schema",
              show_default=True, help="Shape of the definitions: OpenAI function tools, Anthropic tools, or plain JSON schema.")
def tools(fmt: str) -> None:
    """Print the agent tool definitions (web_extract, read_file, search_page) as JSON."""
    from webshelf.core.surfaces.tools import tool_definitions

    click.echo(json.dumps(tool_definitions(fmt), indent=2, ensure_ascii=False))


def _serve_mcp(ctx: click.Context, runtime_names: tuple[str, ...]) -> None:
    """Serve MCP on stdio; if the server cannot start (config, a runtime), answer the client's
    ``initialize`` with the reason instead of just closing (core/surfaces/mcp_server.py).

    The runtimes it starts are clean-ups of a ``stopping_on_signals()`` block: stdin EOF (the
    client went away), an error, or SIGTERM/SIGHUP/SIGINT — which cancels the serving task on
    its loop — all stop them (scratch directory deleted, a created container removed) before
    webshelf exits; after a signal with ``128 + N``, as ``runtime run`` does.

    Without ``--runtime`` the client's first line is read before anything heavy is imported,
    and a plain ``initialize`` is answered at once from the SDK's stored frame when nothing can
    fail later (core/surfaces/mcp_early.py); the server then replays what was read."""
    from webshelf.core.surfaces.shutdown import Stopped, stopping_on_signals

    problem: WebshelfError | None = None
    try:
        with stopping_on_signals() as shutdown:  # a signal while waiting for the client's first line: as later
            early = None
            if not runtime_names and _sdk_installed():
                from webshelf.core.surfaces.mcp_early import open_session

                early = open_session((ctx.find_root().obj or {}).get("config"))
            from webshelf.core.bridge import run_sync
            from webshelf.core.config import load_config
            from webshelf.core.surfaces import mcp_server

            try:
                mcp_server.require_sdk()
            except WebshelfError as exc:  # without the SDK there is no protocol to answer with
                fail(exc, 2)
            try:
                config = load_config((ctx.find_root().obj or {}).get("config"))
                runtimes = [shutdown.enter(running(name, config), f"runtime {name!r}") for name in runtime_names]
            except WebshelfError as exc:
                problem = exc
            else:
                if early is not None and early.probe.settings is None:
                    early.probe.save(config)  # validated: the next start may answer initialize early
                run_sync(shutdown.cancelling(mcp_server.serve_stdio(config, runtimes, early)))
    except Stopped as stop:
        click.echo(f"error[stopped]: {stop.name} received; the MCP server stopped"
                   f"{' and its sandboxes were stopped and removed' if runtime_names else ''}", err=True)
        sys.exit(stop.exit_code)
    if problem is not None:
        click.echo(f"error[{problem.code}]: {problem.message}", err=True)
        try:
            run_sync(mcp_server.refuse_stdio(problem, early))
        except KeyboardInterrupt:
            pass
        sys.exit(2)


def _sdk_installed() -> bool:
    """Whether the MCP SDK can be imported, found without importing it: without it ``mcp serve``
    exits at once with the package to install, before it reads stdin."""
    from importlib.util import find_spec

    try:
        return find_spec("mcp") is not None and find_spec("mcp_types") is not None
    except (ImportError, ValueError):
        return False


_RUNTIME_OPTION = dict(multiple=True, metavar="NAME",
                       help="Publish extracted pages into this running sandbox (a configured runtime); repeatable.")


@main.group("mcp", invoke_without_command=True)
@click.option("--runtime", "runtime_names", hidden=True, **_RUNTIME_OPTION)
@click.pass_context
def mcp_group(ctx: click.Context, runtime_names: tuple[str, ...]) -> None:
    """The MCP server (web_extract, read_file, search_page); needs 'webshelf[mcp]'."""
    if ctx.invoked_subcommand is None:
        deprecated("mcp", "mcp serve")
        _serve_mcp(ctx, runtime_names)


@mcp_group.command("serve")
@click.option("--runtime", "runtime_names", **_RUNTIME_OPTION)
@click.pass_context
def mcp_serve(ctx: click.Context, runtime_names: tuple[str, ...]) -> None:
    """Run the MCP server on stdio until the client disconnects."""
    _serve_mcp(ctx, runtime_names)



if __name__ == "__main__":  # pragma: no cover
    main()
