"""The CLI's nouns and verbs: ``read`` takes the footer's hint verbatim, ``search`` mirrors
search_page, multi-URL output goes through the one renderer call_tool uses, notes say
``--fresh``, and old spellings print a deprecation note. Exact output throughout."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from webshelf.core.config import load_config
from webshelf.core.read import read_file
from webshelf.core.search_page import search_page
from webshelf.core.surfaces.cli import main
from webshelf.core.surfaces.dispatch import call_tool
from tests.loopback import Response

WEBSHELF = Path(sys.executable).with_name("webshelf")
LONG = "".join(f"## Part {i}\n" if i % 500 == 0 else f"line {i} of the manual\n" for i in range(1, 3_001))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def odd_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose path needs the hint's escaping: a double quote, a backslash and a space."""
    home = tmp_path / 'we"b\\ shelf'
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"web": {"allow_private": True}}))
    monkeypatch.setenv("WEBSHELF_HOME", str(home))
    return home


def _hint(server, route: str) -> tuple[str, str, int, int]:
    """Extract a long page; the footer's hint without its ``read_file`` word, and its parts."""
    url = server.route(route, Response(LONG.encode(), headers={"Content-Type": "text/markdown"}))
    code, out, err = run("extract", "--limit", "2000", url)
    assert (code, err) == (0, "")
    [line] = [ln for ln in out.splitlines() if ln.startswith("Continue: read_file ")]
    tail = line.removeprefix("Continue: read_file ")
    words = dict(w.split("=", 1) for w in shlex.split(tail))
    return tail, words["path"], int(words["offset"]), int(words["limit"])


def test_read_takes_the_footers_hint_verbatim_in_every_form(server, odd_home):
    tail, path, offset, limit = _hint(server, "/nouns/long.md")
    assert '\\"' in tail and "\\\\" in tail  # the home's quote and backslash are escaped in the hint
    expected = read_file(path, offset, limit)
    assert expected.startswith(f"{offset}|")
    assert run("read", *shlex.split(tail)) == (0, expected, "")            # after a shell removed the quotes
    assert run("read", tail) == (0, expected, "")                          # the hint as one argument
    assert run("read", "read_file " + tail) == (0, expected, "")           # with its read_file word
    assert run("read", *tail.split(" offset=")[0:1], f"offset={offset}", f"limit={limit}") == (0, expected, "")
    assert run("read", path, "--offset", str(offset), "--limit", str(limit)) == (0, expected, "")
    # a real shell, the console script, the line pasted after `webshelf read`
    proc = subprocess.run(["sh", "-c", f"{shlex.quote(str(WEBSHELF))} read {tail}"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "WEBSHELF_HOME": str(odd_home)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")


def test_read_argument_errors_say_what_to_write(server, odd_home):
    tail, path, offset, _ = _hint(server, "/nouns/long2.md")
    assert run("read", tail, "--offset", "3") == (
        2, "", "error[invalid_input]: offset is given twice; give it once (as offset=… or as --offset)\n")
    assert run("read", path, "limit=many") == (
        2, "", "error[invalid_input]: limit='many' is not a whole number; write it like limit=100\n")
    assert run("read", path, path) == (2, "", "error[invalid_input]: more than one path given; read one page at a time\n")
    assert run("read", 'path="/unclosed') == (
        2, "", "error[invalid_input]: cannot read the hint 'path=\"/unclosed': its quotes do not close; "
               'paste the whole path="…" part as the footer gives it\n')


def test_search_mirrors_the_search_page_tool(server, home_config_allows_loopback):
    url = server.route("/nouns/search.md", Response(LONG.encode(), headers={"Content-Type": "text/markdown"}))
    code, out, _ = run("extract", "--json", url)
    path = json.loads(out)[0]["path"]
    config = load_config()
    code, out, err = run("search", path, "PART 1", "--context", "0", "--max-results", "2")
    assert (code, err) == (0, "")
    assert out == search_page(path, "PART 1", 2, context=0, config=config)
    assert out == call_tool("search_page", {"path": path, "pattern": "PART 1", "context": 0, "max_results": 2},
                            config=config)
    assert out == (f"2 matching lines for text 'PART 1' (ignoring case) in {path}:\n>1000|## Part 1000\n--\n"
                   f">1500|## Part 1500\nRead around a match: read_file path=\"{path}\" offset=995 limit=500\n")
    code, out, _ = run("search", path, r"Part 2\d", "--regex", "--case-sensitive", "--context", "1")
    assert (code, out.splitlines()[1:4]) == (0, [" 1999|line 1999 of the manual", ">2000|## Part 2000",
                                                 " 2001|line 2001 of the manual"])
    assert run("search", path, "(", "--regex") == (
        2, "", "error[invalid_input]: bad regular expression '(': missing ) at position 1; fix it, "
               "or leave out --regex to search for the text literally\n")
    assert run("search", "/etc/passwd", "root")[0] == 1


def test_several_urls_render_as_call_tool_renders_them(server, home_config_allows_loopback):
    a = server.route("/nouns/a.txt", Response(b"alpha\n", headers={"Content-Type": "text/plain"}))
    b = server.url("/nouns/missing")
    code, out, err = run("extract", "--fresh", a, b)
    assert code == 1
    assert out == call_tool("web_extract", {"urls": [a, b], "fresh": True}, config=load_config())
    assert out == f"==> {a} <==\nalpha\n\n==> {b} <==\nerror[http_status]: {b}: HTTP 404 Not Found\n"
    assert err == f"1 of 2 URLs failed: {b}\n"  # the error itself is printed once, in its block


def test_notes_say_fresh_as_the_cli_spells_it_under_their_url(server, home_config_allows_loopback):
    a = server.route("/nouns/n1.txt", Response(b"one\n", headers={"Content-Type": "text/plain"}))
    b = server.route("/nouns/n2.txt", Response(b"two\n", headers={"Content-Type": "text/plain"}))
    assert run("extract", a, b)[0] == 0
    code, out, err = run("extract", a, b)
    note = r"\[webshelf\] note: served from the stored copy fetched \d+ s ago \(cache\.max_age\); pass --fresh to fetch again\n"
    assert (code, err) == (0, "")
    assert re.fullmatch(f"==> {re.escape(a)} <==\none\n\n---\n{note}\n==> {re.escape(b)} <==\ntwo\n\n---\n{note}", out), out
    tool = call_tool("web_extract", {"urls": [a]}, config=load_config())
    assert "pass fresh=True to fetch again" in tool  # the API's own spelling elsewhere
    code, out, _ = run("extract", a)
    assert re.fullmatch(f"one\n\n---\n{note}", out), out


def test_the_page_text_itself_is_never_respelled(server, home_config_allows_loopback):
    body = b"Docs say: pass fresh=True to fetch again\n"
    url = server.route("/nouns/own-words.txt", Response(body, headers={"Content-Type": "text/plain"}))
    assert run("extract", url) == (0, body.decode(), "")
    code, out, _ = run("extract", url)
    assert out.startswith(body.decode()) and out.endswith("pass --fresh to fetch again\n")


def test_old_spellings_still_work_with_a_note(home):
    code, out, err = run("backends")
    assert (code, out) == run("backend", "list")[0:2]
    assert err == "note: `webshelf backends` is deprecated; use `webshelf backend list`\n"
    help_text = run("--help")[1]
    assert "\n  backends " not in help_text and "\n  sandbox " not in help_text
    assert all(f"\n  {noun} " in help_text for noun in ("backend", "runtime", "mcp", "search", "tools", "cache"))
