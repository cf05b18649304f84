"""The sheet scan (``css_hidden.sheet_rules``) consumes a run of flat rules with one regex match
and visits only its blocks that hold a candidate position (issue 14's speed goal): the rules it
finds around such runs are those the brace-by-brace scan found (expected values: main's scan
before the change; bench/sheet_diff.py checks every corpus page's sheets)."""

from __future__ import annotations

import pytest

from webshelf.core.convert.css_hidden import sheet_rules

SHEET_SHAPES = [
    (".a{color:red} .b{display:none} .c{margin:0}", [".b"], [".b"]),
    (".clip:hover, .x{color:red} .y{display:none}", [".y"], [".y"]),  # a pattern's text in a prelude
    ("@import url(x.css); .h{display:none} .k{opacity:0}", [".h", ".k"], [".h", ".k"]),
    (".p{color:red; .n{display:none}} .q{display:none}", [".q"], [".q"]),  # a nested rule is not judged
    ("} .h{display:none}", [".h"], [".h"]),  # a stray closing brace
    ("@media print{.h{display:none}} @media screen{.s{display:none} .t{visibility:hidden}} .u{display:none}",
     [".s", ".t", ".u"], [".s", ".t", ".u"]),
    (".a,.b{display:none} .c{opacity:0} .a:hover{display:none}", [".a", ".b", ".c"], [".a", ".b", ".c"]),
    (".h{display:none} .h.on{display:block} @media (min-width:9px){.h{display:block}}", [".h"],
     [".h", ".h.on", ".h"]),
    (".a{display:none} .b{display:block", [".a"], [".a"]),  # an unclosed block
    ("@font-face{font-family:x} .a{font-size:0} @media screen{@supports (x:y){.b{display:none}}} .c{display:none}",
     [".a", ".b", ".c"], [".b", ".c"]),
]


@pytest.mark.parametrize("css, hiding, showing", SHEET_SHAPES)
def test_the_sheet_scan_finds_the_same_rules_around_runs_of_flat_rules(css, hiding, showing):
    found_hiding, found_showing = sheet_rules([css])
    assert [r.selector for r in found_hiding] == hiding
    assert [r.selector for r in found_showing] == showing
    orders = sorted({r.order for r in found_hiding} | {r.order for r in found_showing})
    assert orders == list(range(1, len(orders) + 1))  # numbered in text order, one number per selector
