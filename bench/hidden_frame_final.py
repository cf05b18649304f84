"""Main's hidden removal vs this branch's, as served, in one run (issue 14; docs/benchmarks.md,
extraction "hidden" rows): cross-validated WCXB dev per type, the readability corpus, and
trafilatura beside.

    nice -n 10 .venv/bin/python bench/hidden_frame_final.py --json OUT

Each variant runs in its own worker process (css_hidden memoises verdicts per process, so two
rule sets never share a memo): WCXB dev pages of fold k are served with the block model fitted
on the other folds (``build/blocks/fold<k>.json``), readability with the shipped model.
"main" is main's code: css_hidden's colour reading from ``main`` (bench/old_code.py) and no spare
rules (hidden_frame off). "trafilatura" is bench/extract_quality.py's baseline worker. Not a test.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extract_quality as eq  # noqa: E402


def worker(variant: str, corpus: str, out: Path) -> None:
    from webshelf.core.convert import css_hidden, hidden_frame, html_markdown
    from webshelf.core.convert.by_type import to_markdown
    from webshelf.core.convert.html_main_content import Tuning

    if variant == "main":
        from old_code import old_module

        old = old_module("_main_css_hidden", "main", "core/convert/css_hidden.py", {})
        css_hidden._transparent = old._transparent
        hidden_frame.FRAME_SHARE = 2.0
    original = html_markdown.html_to_markdown
    descs = eq.page_index(corpus)
    rows = []
    for fold in (range(eq.FOLDS) if corpus == "wcxb" else [-1]):
        if corpus == "wcxb":
            model = eq.BLOCK_MODELS / f"fold{fold}.json"
            html_markdown.html_to_markdown = functools.partial(original, tuning=Tuning(block_model=str(model)))
        for desc in (d for d in descs if d["fold"] == fold):
            page = eq.load_page(corpus, desc)
            text = to_markdown(page["html"].encode("utf-8"), "text/html; charset=utf-8", page["url"] or "").markdown
            rows.append(eq.score(text, page, check_fences=False))
    out.write_text(json.dumps(rows))


def spawn(variant: str, corpus: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        subprocess.run([sys.executable, __file__, "--worker", variant, corpus, str(out)], check=True)
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    parser.add_argument("--only", help="comma-separated: main,new,trafilatura")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], Path(args.worker[2]))
        return 0
    wanted = (args.only or "main,new,trafilatura").split(",")
    result: dict = {}
    for corpus in ("wcxb", "readability"):
        for variant in wanted:
            print(f"[{corpus}] {variant} …", file=sys.stderr, flush=True)
            if variant == "trafilatura":
                rows = eq.spawn(eq.BASELINE, corpus, eq.page_index(corpus))["rows"]
            else:
                rows = spawn(variant, corpus)
            result.setdefault(corpus, {})[variant] = rows
    for corpus, variants in result.items():
        print(f"\n{corpus}")
        for variant, rows in variants.items():
            for t, s in eq.by_type(rows).items():
                print(f"  {variant:12s} {t:14s} n {s['pages']:4d} F1 {s['f1']:.4f} P {s['p']:.4f} R {s['r']:.4f} "
                      f"with {eq._fmt(s['with'], 4)} without {eq._fmt(s['without'], 4)}")
    if args.json:
        Path(args.json).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
