"""What every ``webshelf`` subcommand shares: the error line, the config, a started runtime.

Kept apart from ``cli.py`` so the command groups (runtime, cache, mcp) can live in their own
modules without importing each other.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

import click

from webshelf.errors import ConfigError, WebshelfError

if TYPE_CHECKING:  # the config models load on first use: a cached extract never needs them (issue 15)
    from webshelf.core.config import Config


def fail(exc: WebshelfError, code: int) -> NoReturn:
    """Print ``error[code]: message`` on stderr and exit ``code``."""
    click.echo(f"error[{exc.code}]: {exc.message}", err=True)
    sys.exit(code)


def deprecated(old: str, new: str) -> None:
    """The one-line note an old spelling prints on stderr before doing what the new one does."""
    click.echo(f"note: `webshelf {old}` is deprecated; use `webshelf {new}`", err=True)


def config_of(ctx: click.Context) -> Config:
    """The config named by ``--config`` (or the default); a bad one exits 2 with the reason."""
    from webshelf.core.config import load_config

    try:
        return load_config((ctx.find_root().obj or {}).get("config"))
    except ConfigError as exc:
        fail(exc, 2)


@contextlib.contextmanager
def running(name: str, config: Config) -> Iterator[object]:
    """A started runtime for publishing; attaches, so nothing the user runs is stopped."""
    from webshelf.core.sandbox import open_running

    runtime = open_running(name, config)
    try:
        runtime.start()
    except BaseException:  # a start cut short (an error, or a signal turned into Stopped) removes what it made
        runtime.stop()
        raise
    try:
        yield runtime
    finally:
        runtime.stop()
