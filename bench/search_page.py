"""search_page benchmark: is jumping to a line cheap next to reading the page?

A ~2 MB stored Markdown page (the shared pydocs corpus converted and concatenated). For a
rare word, a common word and a regular expression, the median time of ``search_page`` next to
two baselines measured in the same run: ``grep -n`` on the same file (the tool an agent would
use inside a sandbox) and reading the whole page through ``read_file`` in 2,000-line calls
(what an agent without search does). Also the catastrophic-regex guard: the wall time until
``(a|aa)+$`` on a line of 60 a's is stopped. No target is fixed by the issue; the table shows
where search sits.

Run: .venv/bin/python bench/search_page.py [--rounds N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from html_to_markdown import convert  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from webshelf.cache.shelf import Shelf  # noqa: E402
from webshelf.core.clean import clean_markdown  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.errors import InputError  # noqa: E402
from webshelf.core.read import MAX_LIMIT, count_lines, read_file  # noqa: E402
from webshelf.core.search_page import search_page  # noqa: E402
from tests.loopback import PYDOCS  # noqa: E402


def big_page() -> str:
    parts = [convert(p.read_text()).content for p in sorted(PYDOCS.glob("*.html"))]
    text = clean_markdown("\n".join(parts), 1_000)
    return re.sub(r"\n{3,}", "\n\n", text)


def median_ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        config = Config().with_home(tmp)
        text = big_page()
        with Shelf(config.home) as shelf:
            path = shelf.put(url="https://bench/big", final_url=None, title="big", text=text,
                             backend="local", content_type="text/markdown").path
        lines = count_lines(path)

        def read_all() -> None:
            for offset in range(1, lines + 1, MAX_LIMIT):
                read_file(path, offset, MAX_LIMIT, config=config)

        table = Table(title=f"search_page on a {len(text) / 1e6:.1f} MB page, {lines:,} lines (median of {rounds})")
        for col in ("query", "matching lines", "search_page ms", "grep -n ms", "read whole page ms"):
            table.add_column(col, justify="right" if "ms" in col or "lines" in col else "left")
        read_ms = median_ms(read_all, rounds)
        grep = shutil.which("grep")
        for label, pattern, use_regex, grep_args in [
            ("rare word", "lookbehind", False, ["-n", "-i", "-F"]),
            ("common word", "the", False, ["-n", "-i", "-F"]),
            ("regex", r"\bos\.\w+\(", True, ["-n", "-i", "-P"]),
        ]:
            out = search_page(path, pattern, 20, regex=use_regex, config=config)
            total = out.split(" ", 1)[0] if not out.startswith("no lines") else "0"
            ms = median_ms(lambda: search_page(path, pattern, 20, regex=use_regex, config=config), rounds)
            grep_ms = median_ms(lambda: subprocess.run([grep, *grep_args, pattern, str(path)],
                                                       capture_output=True), rounds) if grep else float("nan")
            table.add_row(label, total, f"{ms:.1f}", f"{grep_ms:.1f}", f"{read_ms:.1f}")
        Console().print(table)

        with Shelf(config.home) as shelf:
            evil = shelf.put(url="https://bench/evil", final_url=None, title="evil", text=("a" * 60 + "!\n") * 50,
                             backend="local", content_type="text/markdown").path
        started = time.perf_counter()
        try:
            search_page(evil, r"(a|aa)+$", regex=True, config=config)
            outcome = "finished (no guard needed)"
        except InputError:
            outcome = "stopped with an error"
        print(f"catastrophic regex (a|aa)+$ on 50 lines of 60 a's: {outcome} after "
              f"{time.perf_counter() - started:.2f} s (budget: core.search_page.SEARCH_TIMEOUT_S)")


if __name__ == "__main__":
    main()
