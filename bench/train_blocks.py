"""Train the block classifier (``core/convert/blocks``) on WCXB dev and cross-validate it.

One command reproduces the shipped model and the per-fold models that
``bench/extract_quality.py`` scores on held-out folds:

    nice -n 10 .venv/bin/python bench/train_blocks.py [--kind logistic|trees]

1. Every WCXB dev page goes through the rule-based pipeline
   (``html_main_content.container``: prune, container, narrow, link-dense blocks) — with
   ``--served-dom`` after losing its hidden content first, as the served path does (``by_type``
   runs ``html_hidden.drop_hidden_in`` in the same tree; tried, no gain: docs/benchmarks.md,
   so the shipped model is trained on the raw DOM); each leaf
   block of the container gets its features (``core.convert.blocks.features``) and a label:
   the share of the block's word 3-shingles (whole text for blocks under 3 words) found in the
   page's ``ground_truth.main_content``. A block is *content* when that share is ≥ 0.5.
   Blocks are weighted by their word count over the page's (mean page F1 is what is scored, and
   a long paragraph matters more than a date line).
2. For each fold ``k`` (``sha1(registered domain) % 5``, the fold function of
   extract_quality.py) a model is fitted on the other four folds, and its keep-probability
   threshold is chosen *on those four folds* with a page-level proxy (the container's tokens
   minus the dropped blocks' tokens, against the reference): highest mean F1 whose token recall
   loses at most ``--max-recall-loss``; then the drop cap, then the narrowing share
   (``choose_narrow``: the container is narrowed to the branch holding that share of the
   keep-weighted text, ``core.convert.blocks.model.narrow``), all on those four folds. The
   fold models go to ``build/blocks/fold{k}.json``.
3. The shipped model (``core/convert/blocks/model.json``) is fitted on all five folds the same
   way. The readability corpus is never read here.

Deterministic: fixed seeds, sorted pages, single-threaded fitting.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import multiprocessing
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from extract_quality import FOLDS, load_page, page_index  # noqa: E402

OUT = ROOT / "build" / "blocks"
SHIPPED = ROOT / "core" / "convert" / "blocks" / "model.json"
_WORD = re.compile(r"\w+")
# --served-dom: blocks from the DOM the served path builds (by_type: hidden-content removal in
# the same tree before main-content selection). Off by default: it measured no gain (held-out
# proxy F1 0.8419 either way, docs/benchmarks.md), and the shipped model is the raw DOM's.
SERVED = False
THRESHOLDS = [0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def page_blocks(desc: dict) -> dict:
    """Features, labels and token counts of one page's container blocks."""
    from selectolax.lexbor import LexborHTMLParser

    from webshelf.core.convert.blocks.features import blocks
    from webshelf.core.convert.html_hidden import drop_hidden_in
    from webshelf.core.convert.html_main_content import container

    page = load_page("wcxb", desc)
    ref_words = _words(page["main"])
    ref = Counter(ref_words)
    ref_shingles = _shingles(ref_words)
    ref_joined = " " + " ".join(ref_words) + " "
    out = {"id": desc["id"], "type": desc["type"], "fold": desc["fold"], "ref_tokens": len(ref_words),
           "blocks": []}
    try:
        tree = LexborHTMLParser(page["html"])
        if SERVED:  # what the local backend's converter sees: hidden content already gone
            # (a module global, not an argument: pool.map's workers inherit it by fork)
            drop_hidden_in(tree, page["html"])
        node = container(tree, url=desc.get("url"))  # as served: a thread's replies stay
    except Exception:  # noqa: BLE001 - a page the pipeline cannot handle is skipped
        node = None
    if node is None:
        out["container_tokens"] = out["container_overlap"] = 0
        out["container_words"], out["ref_words"] = {}, dict(ref)
        return out
    cwords = Counter(_words(node.text(deep=True, separator=" ", strip=True)))
    out["container_tokens"] = sum(cwords.values())
    out["container_overlap"] = sum((cwords & ref).values())
    local: dict[int, int] = {}  # ancestor mem_id -> small index, for the narrowing proxy
    for block in blocks(node):
        words = _words(block.node.text(deep=True, separator=" ", strip=True))
        if not words:
            continue
        if len(words) < 3:
            label = 1.0 if f" {' '.join(words)} " in ref_joined else 0.0
        else:
            shingles = _shingles(words)
            label = sum(1 for s in shingles if s in ref_shingles) / len(shingles)
        out["blocks"].append({"x": block.features, "label": label, "tokens": len(words),
                              "words": words,
                              "chain": [local.setdefault(a, len(local)) for a in block.chain]})
    out["container_words"] = dict(cwords)
    out["ref_words"] = dict(ref)
    return out


def build_dataset(jobs: int) -> list[dict]:
    descs = page_index("wcxb")
    with multiprocessing.Pool(jobs) as pool:
        return pool.map(page_blocks, descs, chunksize=8)


# ---------------------------------------------------------------- fitting


def _arrays(pages: list[dict]):
    import numpy as np

    X, y, w = [], [], []
    for page in pages:
        total = sum(b["tokens"] for b in page["blocks"]) or 1
        for b in page["blocks"]:
            X.append(b["x"])
            y.append(1 if b["label"] >= 0.5 else 0)
            w.append(b["tokens"] / total)
    return np.array(X, dtype=float), np.array(y), np.array(w)


def fit(pages: list[dict], kind: str) -> dict:
    """A model dict in the format ``core.convert.blocks.model.BlockModel`` reads."""
    import numpy as np

    from webshelf.core.convert.blocks.features import NAMES

    X, y, w = _arrays(pages)
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        mean, scale = X.mean(axis=0), X.std(axis=0)
        scale[scale == 0] = 1.0
        clf = LogisticRegression(C=1.0, max_iter=2000, random_state=0)
        clf.fit((X - mean) / scale, y, sample_weight=w * len(pages))
        coef = clf.coef_[0] / scale  # fold the standardisation into the weights
        intercept = float(clf.intercept_[0] - np.sum(clf.coef_[0] * mean / scale))
        return {"kind": "logistic", "features": list(NAMES), "coef": [round(float(c), 6) for c in coef],
                "intercept": round(intercept, 6)}
    from sklearn.ensemble import GradientBoostingClassifier

    clf = GradientBoostingClassifier(n_estimators=120, max_depth=3, learning_rate=0.1,
                                     subsample=0.8, random_state=0)
    clf.fit(X, y, sample_weight=w * len(pages))
    prior = float(np.average(y, weights=w))
    trees = []
    for est in clf.estimators_[:, 0]:
        t = est.tree_
        nodes = []
        for i in range(t.node_count):
            leaf = t.children_left[i] == -1
            nodes.append([-1 if leaf else int(t.feature[i]), round(float(t.threshold[i]), 6),
                          int(t.children_left[i]), int(t.children_right[i]),
                          round(float(t.value[i][0][0]), 6)])
        trees.append(nodes)
    return {"kind": "trees", "features": list(NAMES), "base": math.log(prior / (1 - prior)),
            "rate": clf.learning_rate, "trees": trees}


def _with_threshold(model: dict, threshold: float, cap: float = 1.0, narrow: float = 1.0) -> dict:
    return {**model, "threshold": threshold, "protect_share": 0.3, "max_drop_share": cap,
            "narrow_share": narrow}


def proxy(pages: list[dict], model: dict, threshold: float, cap: float = 1.0,
          narrow: float = 1.0) -> tuple[float, float, float]:
    """Mean page (P, R, F1) of word multisets when the container is narrowed to its
    keep-weighted text mass (``narrow`` share, 1 = off; ``model.narrow_members``, the walk
    ``select`` runs) and loses the blocks scored below ``threshold`` (same guards as
    ``select``) — the benchmark's scoring, without Markdown."""
    from webshelf.core.convert.blocks import model as block_model

    scorer = block_model.BlockModel(_with_threshold(model, threshold, cap))
    ps, rs, fs = [], [], []
    for page in pages:
        pred, overlap, ref = page["container_tokens"], page["container_overlap"], page["ref_tokens"]
        blocks = page["blocks"]
        chars = [round(math.expm1(b["x"][0])) for b in blocks]  # log_chars: what select sees
        if threshold > 0 and len(blocks) >= 2:
            probs = [scorer.keep_probability(b["x"]) for b in blocks]
            outside: list[dict] = []
            if narrow < 1.0:
                prose = [p >= block_model.PROSE_PROBABILITY and n >= block_model.PROSE_MIN_CHARS
                         and b["x"][_ENDS] > 0 for b, p, n in zip(blocks, probs, chars)]
                _, members = block_model.narrow_members(
                    [tuple(b["chain"]) for b in blocks], chars, probs,
                    [bool(b["x"][_PRE]) for b in blocks], prose, narrow)
                inside = set(members)
                outside = [b for i, b in enumerate(blocks) if i not in inside]
                blocks = [blocks[i] for i in members]
                chars = [chars[i] for i in members]
                probs = [probs[i] for i in members]
            total = sum(chars) or 1
            doomed = [(b, n) for b, n, p in zip(blocks, chars, probs)
                      if not (b["x"][_H1] or b["x"][_PRE] or n >= 0.3 * total) and p < threshold]
            dropped = [b for b, _ in doomed] if sum(n for _, n in doomed) <= cap * total else []
            dropped += outside
            if dropped:
                kept = Counter(page["container_words"])
                for b in dropped:
                    kept.subtract(b["words"])
                kept = +kept
                pred = sum(kept.values())
                overlap = sum((kept & Counter(page["ref_words"])).values())
        if ref == 0 or pred <= 0 or overlap <= 0:
            p = r = f = 1.0 if ref == 0 and pred <= 0 else 0.0
        else:
            p, r = overlap / pred, overlap / ref
            f = 2 * p * r / (p + r)
        ps.append(p), rs.append(r), fs.append(f)
    return statistics.fmean(ps), statistics.fmean(rs), statistics.fmean(fs)


def _feature_index(name: str) -> int:
    from webshelf.core.convert.blocks.features import NAMES

    return NAMES.index(name)


_H1 = _PRE = _ENDS = 0


def choose_threshold(pages: list[dict], model: dict, max_recall_loss: float,
                     f1_slack: float) -> tuple[float, float, list]:
    """On ``pages`` (training folds only): among thresholds losing ≤ ``max_recall_loss`` token
    recall, the highest one whose proxy F1 is within ``f1_slack`` of the best. F1 is flat near
    the optimum on WCXB dev (precision bought with recall one for one), and issue 14's unseen
    sets lose on precision, so among F1-equivalent choices the more precise one wins. Then the
    drop cap (``max_drop_share``) with the best proxy F1 at that threshold."""
    curve = [(t, *proxy(pages, model, t)) for t in THRESHOLDS]
    base_recall = curve[0][2]
    allowed = [c for c in curve if base_recall - c[2] <= max_recall_loss]
    best_f1 = max(c[3] for c in allowed)
    threshold = max((c for c in allowed if c[3] >= best_f1 - f1_slack), key=lambda c: c[0])[0]
    caps = [(cap, *proxy(pages, model, threshold, cap)) for cap in CAPS]
    cap = max(caps, key=lambda c: (round(c[3], 4), c[0]))[0]
    narrows = [(share, *proxy(pages, model, threshold, cap, share)) for share in NARROW]
    share = choose_narrow(pages, model, threshold, cap, narrows)
    return threshold, cap, share, curve + [("cap", *c) for c in caps] + [("narrow", *n) for n in narrows]


CAPS = [1.0, 0.8, 0.6, 0.4]
NARROW = [1.0, 0.9, 0.8, 0.7, 0.6]  # share of the keep-weighted mass the branch must hold
GUARDED = ("listing", "collection")  # recall-critical types: narrowing must not cost them F1
GUARD_LOSS = 0.005


def choose_narrow(pages: list[dict], model: dict, threshold: float, cap: float,
                  narrows: list[tuple]) -> float:
    """The narrowing share (1 = off) with the best proxy F1 on ``pages`` (training folds),
    kept only if it gains ≥ 0.001 F1 and precision over no narrowing and costs listing and
    collection pages at most ``GUARD_LOSS`` proxy F1 each (their items look like
    teasers; recall there is what users rely on); ties go to the more precise choice."""
    off = next(n for n in narrows if n[0] == 1.0)
    guards = {t: [p for p in pages if p["type"] == t] for t in GUARDED}
    base = {t: proxy(g, model, threshold, cap)[2] for t, g in guards.items() if g}
    ok = [off]
    for n in narrows:
        if n[0] == 1.0 or n[3] < off[3] + 0.001 or n[1] <= off[1]:
            continue
        if all(proxy(guards[t], model, threshold, cap, n[0])[2] >= base[t] - GUARD_LOSS for t in base):
            ok.append(n)
    return max(ok, key=lambda n: (round(n[3], 3), n[1]))[0]


def main(argv: list[str] | None = None) -> int:
    global _H1, _PRE, _ENDS, SERVED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("logistic", "trees"), default="logistic")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-recall-loss", type=float, default=0.02)
    parser.add_argument("--f1-slack", type=float, default=0.002)
    parser.add_argument("--dataset", type=Path, default=OUT / "dataset.json.gz",
                        help="cache of the extracted blocks (rebuilt when missing)")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--served-dom", action="store_true",
                        help="take the blocks after hidden-content removal, as served (use another --dataset)")
    args = parser.parse_args(argv)
    SERVED = args.served_dom
    _H1, _PRE, _ENDS = _feature_index("tag_h1"), _feature_index("tag_pre"), _feature_index("sentence_ends")

    OUT.mkdir(parents=True, exist_ok=True)
    if args.dataset.exists() and not args.rebuild:
        pages = json.loads(gzip.decompress(args.dataset.read_bytes()))
    else:
        pages = build_dataset(args.jobs)
        args.dataset.write_bytes(gzip.compress(json.dumps(pages).encode()))
    n_blocks = sum(len(p["blocks"]) for p in pages)
    print(f"{len(pages)} pages, {n_blocks} blocks", file=sys.stderr)

    report = {"kind": args.kind, "folds": []}
    held = {"base": [], "no narrow": [], "model": []}
    for fold in range(FOLDS):
        train = [p for p in pages if p["fold"] != fold]
        test = [p for p in pages if p["fold"] == fold]
        model = fit(train, args.kind)
        threshold, cap, share, curve = choose_threshold(train, model, args.max_recall_loss,
                                                        args.f1_slack)
        (OUT / f"fold{fold}.json").write_text(json.dumps(_with_threshold(model, threshold, cap, share)))
        base, scored = proxy(test, model, 0.0), proxy(test, model, threshold, cap, share)
        held["base"].append((len(test), base)), held["model"].append((len(test), scored))
        held["no narrow"].append((len(test), proxy(test, model, threshold, cap)))
        report["folds"].append({"fold": fold, "threshold": threshold, "cap": cap, "narrow": share,
                                "test_pages": len(test),
                                "train_curve": curve,
                                "test_proxy_before": base, "test_proxy_after": scored})
        print(f"fold {fold}: threshold {threshold:.2f} cap {cap:.1f} narrow {share}  held-out proxy P/R/F1 "
              f"{base[0]:.3f}/{base[1]:.3f}/{base[2]:.3f} -> {scored[0]:.3f}/{scored[1]:.3f}/{scored[2]:.3f}")
    for key in held:
        n = sum(k for k, _ in held[key])
        mean = [sum(k * v[i] for k, v in held[key]) / n for i in range(3)]
        print(f"held-out proxy {key:9s}: P {mean[0]:.3f} R {mean[1]:.3f} F1 {mean[2]:.3f}")
    model = fit(pages, args.kind)
    threshold, cap, share, curve = choose_threshold(pages, model, args.max_recall_loss, args.f1_slack)
    SHIPPED.write_text(json.dumps(_with_threshold(model, threshold, cap, share),
                                  separators=(",", ":")) + "\n")
    print(f"shipped: {args.kind}, threshold {threshold:.2f}, cap {cap:.1f}, narrow {share}, "
          f"{SHIPPED.stat().st_size / 1024:.1f} KB")
    (OUT / "report.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
