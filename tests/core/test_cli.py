"""The webshelf command: exact output, exit codes, and the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from tests.loopback import Response


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_extract_prints_the_page_as_the_agent_sees_it(server, home_config_allows_loopback):
    url = server.route("/cli/hello.md", Response(b"# Hello\n\nworld\n", headers={"Content-Type": "text/markdown"}))
    assert run("extract", url) == (0, "# Hello\n\nworld\n", "")


def test_extract_of_several_urls_heads_each_block_and_reports_failures(server, home_config_allows_loopback):
    a = server.route("/cli/a.txt", Response(b"alpha\n", headers={"Content-Type": "text/plain"}))
    b = server.url("/cli/missing")
    code, out, err = run("extract", a, b)
    message = f"error[http_status]: {b}: HTTP 404 Not Found\n"
    assert code == 1
    assert out == f"==> {a} <==\nalpha\n\n==> {b} <==\n{message}"  # each error once, in its block
    assert err == f"1 of 2 URLs failed: {b}\n"


def test_extract_json_lists_every_field(server, home_config_allows_loopback):
    url = server.route("/cli/j.txt", Response(b"text\n", headers={"Content-Type": "text/plain"}))
    code, out, _ = run("extract", "--json", url)
    [row] = json.loads(out)
    assert code == 0
    assert {k: row[k] for k in ("url", "content", "truncated", "total_chars", "total_lines", "backend", "error")} == {
        "url": url, "content": "text\n", "truncated": False, "total_chars": 5, "total_lines": 1,
        "backend": "local", "error": None}
    assert Path(row["path"]).read_text() == "text\n"


def test_extract_with_a_bad_limit_is_a_usage_error(server, home_config_allows_loopback):
    assert run("extract", "--limit", "5", server.url("/x")) == (
        2, "", "error[invalid_input]: char_limit 5 is out of range; allowed: 2,000 to 2,000,000 characters\n")


def test_read_prints_numbered_lines_and_explains_errors(server, home_config_allows_loopback):
    url = server.route("/cli/r.txt", Response(b"one\ntwo\nthree\n", headers={"Content-Type": "text/plain"}))
    code, out, _ = run("extract", "--json", url)
    path = json.loads(out)[0]["path"]
    assert run("read", path, "--offset", "2", "--limit", "2") == (0, "2|two\n3|three\n", "")
    assert run("read", path, "--offset", "9") == (
        1, "", f"error[offset_past_end]: {path}: offset 9 is past the end; the page has 3 lines (use offset 1–3)\n")
    assert run("read", "/etc/passwd")[0] == 1


def test_config_commands(home, tmp_path):
    assert run("config", "path") == (0, f"{home / 'config.yaml'}\n", "")
    assert run("config", "check") == (0, "ok: no config file; using defaults\n", "")
    bad = tmp_path / "bad.yaml"
    bad.write_text("web:\n  max_urls: 0\n")
    code, out, err = run("--config", str(bad), "config", "check")
    assert (code, out) == (2, "")
    assert err == f"error[config_invalid]: {bad}: web.max_urls: 0 is out of range; allowed: ≥ 1\n"
    code, out, _ = run("config", "show")
    assert code == 0 and "extract_char_limit: 15000" in out


def test_the_installed_console_script_runs(server, home, home_config_allows_loopback):
    url = server.route("/cli/script.txt", Response(b"from a subprocess\n", headers={"Content-Type": "text/plain"}))
    exe = Path(sys.executable).with_name("webshelf")
    proc = subprocess.run([str(exe), "extract", url], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "WEBSHELF_HOME": str(home)})
    assert (proc.returncode, proc.stdout) == (0, "from a subprocess\n")
