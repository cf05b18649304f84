"""Stored pages have one kind of line break, so every line reader counts the footer's lines.

A page served by the real loopback server carries every separator ``str.splitlines()`` knows;
the stored copy is then read by the real ``wc``, ``awk``, ``sed``, ``head`` and ``tail`` and by
Python's ``splitlines()``, and each must agree with the footer's totals and with read_file.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from webshelf.core.extract import web_extract_sync
from webshelf.core.read import read_file
from tests.loopback import Response

SEPARATORS = ["\r\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
# 50 lines, each ended by a different separator in turn, and a long tail so the page is cut.
PAGE = "".join(f"row {i} of the page{SEPARATORS[i % len(SEPARATORS)]}" for i in range(1, 51)) + \
       "".join(f"tail row {i} " + "t" * 60 + "\n" for i in range(1, 201))


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, encoding="utf-8").stdout


@pytest.mark.skipif(not all(shutil.which(t) for t in ("wc", "awk", "sed", "head", "tail")),
                    reason="needs wc, awk, sed, head and tail on PATH")
def test_every_line_reader_counts_the_footers_lines(server, config):
    url = server.route("/breaks/page.txt", Response(PAGE.encode(), headers={"Content-Type": "text/plain"}))
    [r] = web_extract_sync([url], char_limit=4_000, config=config)
    assert r.ok and r.truncated, r
    stored = open(r.path, encoding="utf-8", newline="").read()
    assert r.total_lines == 250 and f"in {r.total_lines:,} lines" in r.content
    assert len(stored.splitlines()) == stored.count("\n") == r.total_lines
    assert int(run("wc", "-l", r.path).split()[0]) == r.total_lines
    assert run("awk", "END { print NR }", r.path).strip() == str(r.total_lines)
    assert run("sed", "-n", "$=", r.path).strip() == str(r.total_lines)
    lines = stored.splitlines()
    for n in (1, 7, 42, 50, 51, 250):  # the same line under every reader, and under read_file
        assert run("sed", "-n", f"{n}p", r.path) == lines[n - 1] + "\n"
        assert run("awk", f"NR == {n}", r.path) == lines[n - 1] + "\n"
        assert read_file(r.path, n, 1, config=config) == f"{n}|{lines[n - 1]}\n"
    assert run("head", "-n", "50", r.path).splitlines() == [f"row {i} of the page" for i in range(1, 51)]
    assert run("tail", "-n", "200", r.path).splitlines() == lines[50:]
