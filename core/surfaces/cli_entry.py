"""The ``webshelf`` console script: a cached ``webshelf extract URL`` answered before click loads.

Why (issue 15's start-up row, ≤ 4× ``python -c pass``): importing click and building the
command tree is ~30 ms of CPU — a fifth of a cached extract once pydantic is gone
(core/surfaces/cli_cached.py). So the plainest spellings of a one-URL extract are recognised
here, on ``sys.argv`` alone, and served by the same ``serve`` the click command calls first:

    webshelf extract URL      with any of  --json   --limit N   (each at most once, any order)

Everything else — another command, ``--config FILE`` on the command line (``WEBSHELF_CONFIG``
is read either way), ``--limit=N``, an option given twice, a token starting with "-", shell
completion — and every call ``serve`` declines goes to ``cli.main``, which parses it with click
and does the rest (a plain extract the shelf declined hands its probe on: ``cli.handed_probe``, so
the config file and its snapshot are read once). Output is written as ``click.echo`` writes it: to a UTF-8 ``sys.stdout``
(anything else, or text with an ANSI escape that click would strip off a non-terminal, goes
through ``click.echo`` itself), and a closed pipe exits 1 quietly, as click's ``main`` does.
"""

from __future__ import annotations

import os
import sys


def _plain_extract(args: list[str]) -> tuple[str, int | None, bool] | None:
    """(URL, --limit or None, --json) for ``extract URL [--json] [--limit N]``, else None."""
    if not args or args[0] != "extract":
        return None
    url, limit, as_json = None, None, False
    rest = iter(args[1:])
    for token in rest:
        if token == "--json" and not as_json:
            as_json = True
        elif token == "--limit" and limit is None:
            value = next(rest, "")
            if not (value.isascii() and value.isdigit()):
                return None
            limit = int(value)
        elif token.startswith("-") or url is not None:
            return None
        else:
            url = token
    return None if url is None else (url, limit, as_json)


def _completing() -> bool:
    return any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


def main() -> None:
    plain = _plain_extract(sys.argv[1:]) if not _completing() else None
    probe = None
    if plain is not None:
        from webshelf.core.config_snapshot import Probe

        probe = Probe(None)  # --config on the command line is not a plain spelling; WEBSHELF_CONFIG is read here
        if probe.settings is not None:
            from webshelf.core.surfaces.cli_cached import serve

            url, limit, as_json = plain
            try:
                answer = serve(probe, (url,), limit, as_json)
            except KeyboardInterrupt:  # as click's main reports an interrupt
                sys.stderr.write("\nAborted!\n")
                sys.exit(1)
            if answer is not None:
                _echo(answer[0])
                sys.exit(answer[1])
    from webshelf.core.surfaces.cli import handed_probe, main as click_main

    if probe is None:
        click_main()
        return
    with handed_probe(probe):  # declined here: click's extract does not probe or ask the shelf again
        click_main()


def _echo(text: str) -> None:
    """``click.echo(text, nl=False)`` for the output of a cached extract."""
    out = sys.stdout
    if out is None:
        return
    if "\x1b" in text or (getattr(out, "encoding", None) or "").lower().replace("_", "-") not in ("utf-8", "utf8"):
        import click

        click.echo(text, nl=False)
        return
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:  # click's main: a closed pipe exits 1 with nothing on stderr
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        sys.exit(1)
