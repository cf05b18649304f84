"""webshelf installs as one well-behaved dependency: one top-level import name, no clash with
a project's own ``core``/``cache`` packages, every internal import through ``webshelf.``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.loopback import Response

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("core", "cache", "mounts", "runtimes")
SOURCE_DIRS = ("webshelf", *ROOMS, "tests", "bench", "scripts")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [built] = out.glob("webshelf-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_has_one_top_level_name_and_every_module(wheel: zipfile.ZipFile):
    names = wheel.namelist()
    [top_level] = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert wheel.read(top_level).decode().split() == ["webshelf"]
    assert {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")} == {"webshelf"}
    expected = {str(p.relative_to(ROOT)) for p in (ROOT / "webshelf").rglob("*.py")}
    expected |= {"webshelf/" + str(p.relative_to(ROOT)) for room in ROOMS for p in (ROOT / room).rglob("*.py")}
    missing = expected - set(names)
    assert not missing, f"modules left out of the wheel (add their package to pyproject.toml): {sorted(missing)}"


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_no_module_imports_a_room_by_its_bare_name():
    """A bare ``from runtimes.errors import …`` would load a second copy of the module (and break
    ``isinstance`` across the copies), or someone else's ``core`` package."""
    offenders = []
    for folder in SOURCE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            for line, module in _imports(path):
                if module.split(".")[0] in ROOMS:
                    offenders.append(f"{path.relative_to(ROOT)}:{line}: {module}")
    assert not offenders, "import these as webshelf.<room>…: " + ", ".join(offenders)


def _project_with_its_own_core_and_cache(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "core").mkdir(parents=True)
    (project / "core" / "__init__.py").write_text("MARK = 'project core'\n")
    (project / "core" / "models.py").write_text("class Thing: pass\n")
    (project / "cache").mkdir()
    (project / "cache" / "__init__.py").write_text("class Cache:\n    pass\n")
    return project


def test_the_api_and_the_cli_work_beside_a_projects_own_core_and_cache(tmp_path: Path, server):
    project = _project_with_its_own_core_and_cache(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("web:\n  allow_private: true\n")
    url = server.route("/packaging/page", Response(b"# Beside\n\nText of the page.\n",
                                                   headers={"Content-Type": "text/markdown"}))
    script = textwrap.dedent(f"""
        from cache import Cache
        from core import MARK
        from core.models import Thing
        from webshelf import web_extract_sync, read_file, search_page, load_config, open_runtime
        from webshelf import ExtractResult, WebshelfError
        [r] = web_extract_sync([{url!r}])
        assert r.ok, r.error
        print(MARK, Cache.__name__, Thing.__name__, read_file(r.path, offset=1, limit=1))
    """)
    env = {**os.environ, "WEBSHELF_HOME": str(home), "PYTHONPATH": "."}
    env.pop("WEBSHELF_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=project, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "project core Cache Thing 1|# Beside"
    cli = subprocess.run([sys.executable, "-m", "webshelf", "extract", url], cwd=project, env=env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert "Text of the page." in cli.stdout


def test_importing_webshelf_loads_no_network_parser_or_sdk_library():
    script = ("import sys, webshelf\n"
              "heavy = ('httpx', 'selectolax', 'pydantic', 'yaml', 'docker', 'paramiko', 'modal', 'mcp')\n"
              "print(' '.join(m for m in heavy if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_public_api_is_importable_from_webshelf():
    import webshelf
    from webshelf import (ExtractResult, WebshelfError, load_config, open_runtime, read_file,  # noqa: F401
                          search_page, web_extract, web_extract_sync)
    assert set(webshelf.__all__) >= {"web_extract", "web_extract_sync", "read_file", "search_page", "load_config",
                                     "open_runtime", "ExtractResult", "WebshelfError"}
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        webshelf.nope  # noqa: B018


def test_the_room_order_holds(wheel: zipfile.ZipFile, tmp_path: Path):
    """import-linter's contracts (pyproject.toml) on the installed layout: core → runtimes →
    mounts → cache, and webshelf.errors a leaf. It reads packages from disk, so it checks the
    unpacked wheel, where the rooms sit below ``webshelf``."""
    wheel.extractall(tmp_path)
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), str(ROOT / "pyproject.toml")], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout
