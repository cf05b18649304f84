"""What each ``webshelf`` command loads: only what it needs (issue 15, start-up).

A command that never touches the network — ``read``, ``search``, ``config``, ``tools``,
``cache`` — must not import an HTTP client, an HTML or PDF parser or a charset detector, and an
``extract`` answered wholly from the shelf must not import them either, nor the converter, nor
asyncio. Each case runs the real command in a fresh interpreter (``sys.modules`` of the parent
test process says nothing) against a real stored page, exactly as ``tests/test_packaging.py``
checks ``import webshelf``. Timing lives in bench/speed_startup.py; this only checks what loads.

The sniffio case fetches real pages from the loopback server: httpcore imports ``sniffio`` on
every lock, event and semaphore it creates, and a module that is not installed is searched for
on the whole of ``sys.path`` each time. With the dependency installed it is found once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from webshelf.cache.shelf import Shelf

NETWORK = ("httpx", "httpcore", "h11", "h2", "anyio", "selectolax", "html_to_markdown", "pypdf", "charset_normalizer",
           "brotli", "ssl")
CONVERTER = ("webshelf.core.convert", "webshelf.core.backends.local", "webshelf.core.fetch.guarded_connect",
             "webshelf.core.backends.base")
SDKS = ("docker", "paramiko", "modal", "mcp", "mcp_types", "watchdog", "rich")
URL = "https://docs.example.org/guide"

_PROBE = textwrap.dedent("""
    import json, sys
    from webshelf.core.surfaces.cli import main
    try:
        main(sys.argv[1:], standalone_mode=False)
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    print("\\n@@" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
""")


def _loaded(argv: list[str], home: Path) -> tuple[int, set[str], str]:
    env = dict(os.environ, WEBSHELF_HOME=str(home))
    env.pop("WEBSHELF_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], env=env, capture_output=True, text=True,
                          timeout=120, cwd="/")
    out, _, tail = done.stdout.rpartition("\n@@")
    assert tail, f"{argv}: the probe did not finish: {done.stderr[-2000:]}"
    report = json.loads(tail)
    return report["code"], set(report["modules"]), out


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.fixture
def stored(home: Path) -> Path:
    """A page on the shelf, stored the way extract stores it (no network needed)."""
    text = "# Guide\n\n" + "".join(f"Line {i} of the guide about widgets.\n" for i in range(1, 400))
    page = Shelf.shared(home).put(url=URL, final_url=URL, title="Guide", text=text, backend="local",
                                  content_type="text/html")
    return page.path


@pytest.mark.parametrize("argv", [
    ["read", "{path}", "--offset", "10", "--limit", "5"],
    ["search", "{path}", "widgets", "--max-results", "2"],
    ["config", "show"],
    ["config", "check"],
    ["config", "path"],
    ["tools", "--format", "openai"],
    ["cache", "stats"],
    ["cache", "list"],
    ["backend", "list"],
])
def test_commands_that_never_fetch_import_no_network_library(argv: list[str], stored: Path, home: Path):
    argv = [a.replace("{path}", str(stored)) for a in argv]
    code, modules, out = _loaded(argv, home)
    assert code == 0, out
    assert _heavy(modules, NETWORK) == [], f"webshelf {' '.join(argv)} imported a network library"
    assert _heavy(modules, CONVERTER + SDKS) == [], f"webshelf {' '.join(argv)} imported the fetch path or an SDK"
    assert "asyncio" not in modules, f"webshelf {' '.join(argv)} imported asyncio"


def test_extract_of_a_cached_url_imports_neither_the_network_nor_the_converter_nor_asyncio(stored: Path, home: Path):
    code, modules, out = _loaded(["extract", URL], home)
    assert code == 0, out
    assert "Line 10 of the guide about widgets." in out  # served from the shelf: no network here
    assert _heavy(modules, NETWORK + CONVERTER + SDKS) == []
    assert "asyncio" not in modules


def test_extract_of_a_cached_url_builds_no_pydantic_validator(stored: Path, home: Path):
    """No config file and a shelf hit: the default config is constructed (core/config.py
    ``default_config``) and so is the result, so pydantic's plugin loader — which imports
    ``importlib.metadata`` with ``email``, ``zipfile`` and ``csv`` when the first validator is
    built — never runs; neither do the command groups the call does not name (lazy)."""
    code, modules, out = _loaded(["extract", URL], home)
    assert code == 0, out
    assert _heavy(modules, ("pydantic.plugin._loader", "importlib.metadata", "email", "zipfile")) == []
    assert _heavy(modules, ("webshelf.core.surfaces.runtime_cli", "webshelf.core.surfaces.cache_cli")) == []


def test_without_a_config_file_yaml_is_not_imported(stored: Path, home: Path):
    assert not (home / "config.yaml").exists()
    code, modules, out = _loaded(["read", str(stored), "--limit", "3"], home)
    assert code == 0, out
    assert "yaml" not in modules


def test_a_config_file_is_still_parsed(stored: Path, home: Path):
    (home / "config.yaml").write_text("web:\n  extract_char_limit: 4000\n")
    code, modules, out = _loaded(["config", "show"], home)
    assert code == 0, out
    assert "extract_char_limit: 4000" in out
    assert "yaml" in modules and _heavy(modules, NETWORK) == []


def test_a_fetch_does_not_search_sys_path_for_sniffio_on_every_request(home: Path, server):
    """httpcore's ``current_async_library()`` runs ``import sniffio`` for each lock, event and
    semaphore; a finder on ``sys.meta_path`` sees every search that ``sys.modules`` did not answer."""
    urls = [server.url(f"/pydocs/{name}") for name in ("library__re.html", "library__os.html", "library__sys.html")]
    script = textwrap.dedent(f"""
        import sys
        searches = []
        class Spy:
            def find_spec(self, name, path=None, target=None):
                if name == "sniffio":
                    searches.append(name)
                return None
        sys.meta_path.insert(0, Spy())
        from webshelf.core.config import Config
        from webshelf.core.extract import web_extract_sync
        from pathlib import Path
        config = Config.model_validate({{"web": {{"allow_private": True}}}}).with_home(Path({str(home)!r}))
        for _ in range(2):
            results = web_extract_sync({urls!r}, config=config, fresh=True)
            assert all(r.ok for r in results), [r.error for r in results]
        print(len(searches))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.strip()) <= 1, "sniffio was searched for on sys.path again and again: is it installed?"


def test_the_cli_help_states_the_readers_own_line_limit_and_lists_the_lazy_groups():
    """cli.py spells ``read``'s limit without importing core/read.py (which loads the reader)."""
    from click.testing import CliRunner

    from webshelf.core.read import MAX_LIMIT
    from webshelf.core.surfaces import cli

    assert cli.MAX_LIMIT == MAX_LIMIT
    listed = CliRunner().invoke(cli.main, ["--help"]).output
    names = [line.split()[0] for line in listed.split("Commands:")[1].splitlines() if line.startswith("  ")]
    assert names == ["backend", "cache", "config", "extract", "mcp", "read", "runtime", "search", "sync", "tools"]  # sandbox: hidden
    assert CliRunner().invoke(cli.main, ["cache", "--help"]).exit_code == 0
