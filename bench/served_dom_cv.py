"""Two sets of block-classifier fold models through the served path, cross-validated, in one run.

Written for the served-DOM training experiment of issue 14 (docs/benchmarks.md, "Third pass on
precision"): fold k's WCXB dev pages go through ``by_type.to_markdown`` (what the local backend
serves) with fold model k of each set, scored as ``bench/extract_quality.py`` scores.

    # the served-DOM fold models (train_blocks also rewrites the shipped model: restore it)
    .venv/bin/python bench/train_blocks.py --served-dom --dataset build/blocks/served.json.gz
    mkdir -p build/blocks/served && cp build/blocks/fold?.json build/blocks/served/
    git checkout core/convert/blocks/model.json
    # main's fold models: copy main's build/blocks/ to build/blocks/main/
    nice -n 10 .venv/bin/python bench/served_dom_cv.py build/blocks/main:main build/blocks/served

Each argument is a folder of ``fold{k}.json``, optionally ``:REV`` to run the block code of git
revision REV with it (``extract_quality._use_previous_blocks``). Not a test; times are not
comparable between the two sets (they run minutes apart).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extract_quality as eq  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", help="folder of fold{k}.json[:git revision of the block code]")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    descs = eq.page_index("wcxb")
    rows: dict[str, list] = {}
    for spec in args.sets:
        folder, _, rev = spec.partition(":")
        extra = {"previous": rev} if rev else {}
        for k in range(eq.FOLDS):
            fold = [d for d in descs if d["fold"] == k]
            tuning = {"block_model": str(Path(folder) / f"fold{k}.json"), **extra}
            rows.setdefault(spec, []).extend(eq.spawn(eq.OURS, "wcxb", fold, tuning)["rows"])
            print(f"{spec}: fold {k} done", file=sys.stderr, flush=True)
    summary = {name: eq.by_type(r) for name, r in rows.items()}
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}))
    eq.print_table("WCXB dev, served path, cross-validated (same run)", summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
