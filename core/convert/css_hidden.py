"""Which CSS hides an element from a reader: inline ``style`` attributes and the page's own sheets.

Hostile pages hide instructions for AI agents in text a person never sees. A regex over the
``style`` attribute misses the spellings browsers accept (``display:n\\one``,
``visibility:hidd\\65n``, ``opacity:.00``, ``opacity:0%``) and every rule in a ``<style>``
sheet, so declarations are read with tinycss2 (a CSS Syntax Level 3 tokenizer: escapes, comments
and case are resolved as a browser does) and judged by value, not by spelling.

What counts as hidden (``hides``), each a common prompt-injection technique:

- ``display:none``; ``visibility:hidden`` or ``collapse``; ``opacity`` at most 0.05;
- ``font-size`` under 1px (``0``, ``0.5px``, under 1pt, under 0.1em/rem, under 10%);
- ``transform`` with ``scale(0)``, ``scaleX(0)``, ``scaleY(0)`` (or ``scale(0, …)``);
- ``clip: rect(0 0 0 0)`` / ``rect(0,0,0,0)`` (any all-zero rect) and ``clip-path: inset(50%)``
  or more, ``circle(0)``;
- a zero-size box: ``width`` or ``height`` (or ``max-width``/``max-height``) 0 together with
  ``overflow: hidden`` or ``clip``;
- off-screen: ``left``, ``top``, ``right``, ``text-indent`` or ``margin-left`` at -1000px or beyond
  (em/rem counted as 16px);
- a transparent text colour: ``color: transparent`` or an alpha of 0 (``rgba(…, 0)``, ``hsla``,
  ``#rgb0``, ``#rrggbb00``).

Not judged, on purpose: text coloured like its background (needs the full cascade of both
colours through every ancestor, background images and gradients — a guess either way would
drop real text or keep hidden text, so it is left visible) and layout that only a rendering
engine knows (an element covered by another). Those need a browser; the browser backend renders.

Sheets (``hiding_selectors``): top-level rules and rules inside ``@media`` for ``all``/``screen``
(not ``print``, not size queries — those hide only on some screens); a rule that shows an
element again counts inside any screen ``@media`` too (``SHOW_ON_SOME_SCREENS``: shown on some
screens is not hidden). A selector with a
pseudo-element or a state pseudo-class (``:hover``, ``:focus``, …) is skipped: it does not hide
the element as served. A later or more specific rule that shows the element again is honoured
for ``display``, ``visibility`` and ``opacity`` (``overridden``); an inline ``style`` beats the
sheet unless the sheet says ``!important``. The work is bounded: at most ``MAX_SHEET_CHARS`` of
CSS and ``MAX_RULES`` rules are read per page.

Cost (issues 14, 15; bench/hidden_cost.py, bench/convert_cost.py): tinycss2 is pure Python, so
it reads only what may matter. A sheet is scanned at its braces (a run of flat rules at once, by
one regex match: only its blocks that hold a candidate position are visited), and case-folded regex passes
over the whole sheet (one literal-led pattern per ``may_hide`` test, ``_SHEET_HIDES``; the
literals found by ``str.find``, faster than a regex search, and tried only where they stand) flag the
blocks whose text could hide or show; only those are cut out and judged, and only their relevant
declarations are ever tokenized, on first use. Inline styles that name no property able to hide,
or that ``may_hide`` rejects, are never tokenized. All of a page's sheets are scanned as
one text (``_sheet_positions``: CSS-in-JS pages carry dozens of small sheets), and declaration
texts of the common simple shapes, colour functions included, are tokenized without tinycss2
(``_simple_declarations``: the same tokens). Parsed blocks (as their verdicts, not their
tokens: ``Declarations``), inline verdicts and whole pages' sheets (``page_sheets``, keyed by a
digest of their text: a site repeats its sheets) are memoised per process, bounded. None of
this changes a verdict: the pre-filters only skip text that the full rules would reject
(tests/core/test_convert_one_parse.py).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
import re
from dataclasses import dataclass
from functools import lru_cache

import tinycss2
from tinycss2.ast import (DimensionToken, FunctionBlock, HashToken, IdentToken, LiteralToken, NumberToken,
                         PercentageToken, WhitespaceToken)

MAX_SHEET_CHARS = 1_000_000
MAX_RULES = 5_000
_STATES = re.compile(r"::|:(?:hover|focus|focus-within|focus-visible|active|visited|target|checked|open|popover-open)\b",
                     re.IGNORECASE)
_OFFSCREEN_PROPS = {"left", "top", "right", "text-indent", "margin-left"}
SINGLE = ("display", "visibility", "opacity")  # properties whose own value alone decides


def _tokens(value: list) -> list:
    return [t for t in value if t.type not in ("whitespace", "comment")]


def _px(token) -> float | None:  # noqa: ANN001 — a tinycss2 token
    """A length token in px (em/rem as 16px, pt as 4/3 px); None if not a length."""
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type == "dimension":
        unit = token.lower_unit
        scale = {"px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 37.8, "mm": 3.78,
                 "vw": 10.0, "vh": 10.0, "ch": 8.0, "ex": 8.0}.get(unit)
        return token.value * scale if scale is not None else None
    return None


def _ident(tokens: list) -> str | None:
    return tokens[0].lower_value if len(tokens) == 1 and tokens[0].type == "ident" else None


def _numbers(function) -> list[float]:  # noqa: ANN001
    return [t.value for t in function.arguments if t.type in ("number", "percentage", "dimension")]


def _transparent(tokens: list) -> bool:
    if _ident(tokens) == "transparent":
        return True
    if len(tokens) == 1 and tokens[0].type == "hash":
        h = tokens[0].value.lower()
        return (len(h) == 4 and h[3] == "0") or (len(h) == 8 and h[6:] == "00")
    if len(tokens) == 1 and tokens[0].type == "function" and tokens[0].lower_name in ("rgba", "rgb", "hsla", "hsl"):
        args = [t for t in tokens[0].arguments if t.type not in ("whitespace", "comment")]
        # the alpha is a fourth value: after "/" (``rgb(0 0 0 / 0)``) or after a third comma
        # (``rgba(0, 0, 0, 0)``); ``rgb(0, 0, 0)`` is black, not transparent
        commas = sum(1 for t in args if t.type == "literal" and t.value == ",")
        if len(args) >= 2 and args[-2].type == "literal" and (args[-2].value == "/" or (args[-2].value == "," and commas == 3)):
            alpha = args[-1]
            return alpha.type in ("number", "percentage") and alpha.value == 0
    return False


def _declaration_hides(name: str, tokens: list) -> bool:
    """Does this one declaration hide the element by itself?"""
    if not tokens:
        return False
    if name == "display":
        return _ident(tokens) == "none"
    if name == "visibility":
        return _ident(tokens) in ("hidden", "collapse")
    if name == "opacity":
        t = tokens[0]
        return len(tokens) == 1 and ((t.type == "number" and t.value <= 0.05) or (t.type == "percentage" and t.value <= 5))
    if name == "font-size":
        t = tokens[0]
        if len(tokens) != 1:
            return False
        if t.type == "percentage":
            return t.value < 10
        if t.type == "dimension" and t.lower_unit in ("em", "rem"):
            return t.value < 0.1
        px = _px(t)
        return px is not None and px < 1
    if name == "transform":
        return any(t.type == "function" and t.lower_name in ("scale", "scalex", "scaley", "scale3d")
                   and 0 in _numbers(t)[:2] for t in tokens)
    if name == "clip":
        t = tokens[0]
        return t.type == "function" and t.lower_name == "rect" and all(v == 0 for v in _numbers(t)) and bool(_numbers(t))
    if name == "clip-path":
        t = tokens[0]
        if t.type != "function":
            return False
        values = [a for a in t.arguments if a.type in ("percentage", "number", "dimension")]
        if t.lower_name == "inset":
            return bool(values) and values[0].type == "percentage" and values[0].value >= 50
        if t.lower_name == "circle":
            return bool(values) and values[0].value == 0
        return False
    if name == "color":
        return _transparent(tokens)
    if name in _OFFSCREEN_PROPS:
        px = _px(tokens[0]) if len(tokens) == 1 else None
        return px is not None and px <= -1000
    return False


class Declarations:
    """The verdicts of one declaration block, worked out once when it is parsed: does the block
    hide its element (``hides``), does it without its SINGLE properties (``rest_hides``), and per
    property whether that declaration hides by itself and whether it is ``!important``.

    Why verdicts, not tokens: the parsed blocks are memoised per process (``parse_declarations``),
    and a memo of token objects — ~50,000 tinycss2 tokens, lists and dicts after a few hundred
    pages — was walked by every full cyclic-GC collection: 40 of its ~75 ms, one collection
    every ~80 pages, ~7% of the served CPU (docs/benchmarks.md "Session 14"). The memo holds
    ``judged``, one tuple of strings and booleans, which the collector stops tracking."""

    __slots__ = ("judged",)

    def __init__(self, values: dict[str, tuple[list, bool]] | None = None, *, judged: tuple | None = None) -> None:
        """From the properties' ``name → (tokens, important)`` (a block just parsed) or from its
        ``judged`` tuple (the memo's)."""
        self.judged = judged if judged is not None else _judged(values or {})

    def hides(self) -> bool:
        return self.judged[0]

    @property
    def rest_hides(self) -> bool:
        """Would the block hide its element without its SINGLE properties?"""
        return self.judged[1]

    @property
    def props(self) -> tuple[tuple[str, bool, bool], ...]:
        """(name, hides by itself, important) of each property, in the block's order."""
        return self.judged[2]

    def shows(self, prop: str) -> bool | None:
        """For a SINGLE property: True if this block sets it to a visible value, None if unset."""
        for name, hides, _ in self.judged[2]:
            if name == prop:
                return not hides
        return None

    def important(self, prop: str) -> bool:
        """Is ``prop`` set ``!important`` here (False when it is not set)?"""
        for name, _, important in self.judged[2]:
            if name == prop:
                return important
        return False


def _judged(values: dict[str, tuple[list, bool]]) -> tuple:
    """``Declarations.judged`` of the properties ``values``: (hides, rest_hides, ((name, hides by
    itself, important), ...)) — only strings and booleans."""
    props = tuple((name, _declaration_hides(name, tokens), bool(important))
                  for name, (tokens, important) in values.items())
    overflow = _ident(values.get("overflow", ([], False))[0]) in ("hidden", "clip")
    zero_box = overflow and any(len(tokens) == 1 and _px(tokens[0]) == 0
                                for tokens in (values.get(prop, ([], False))[0]
                                               for prop in ("width", "height", "max-width", "max-height")))
    hides = any(hiding for _, hiding, _ in props) or zero_box
    rest_hides = any(hiding for name, hiding, _ in props if name not in SINGLE) or zero_box
    return hides, rest_hides, props


def parse_declarations(text: str) -> Declarations:
    """The declarations of a block's text, memoised per process: pages repeat the same inline
    styles hundreds of times, a selector list shares one body, and sites repeat their sheets."""
    return Declarations(judged=_judge_declarations(text) if len(text) <= _MEMO_TEXT else _judge_uncached(text))


_MEMO_TEXT = 4096  # longer texts are parsed each time (rare; kept out of the memo to bound its memory)


def _declaration_values(text: str) -> dict[str, tuple[list, bool]]:
    """The block's properties, ``name → (tokens, important)``: built here for the simple shapes,
    by tinycss2 for the rest."""
    values = _simple_declarations(text)
    if values is not None:
        return values
    values = {}
    for item in tinycss2.parse_blocks_contents(text, skip_whitespace=True, skip_comments=True):
        if item.type == "declaration":
            values[item.lower_name] = (_tokens(item.value), bool(item.important))
    return values


def _parse_uncached(text: str) -> Declarations:
    return Declarations(_declaration_values(text))


def _judge_uncached(text: str) -> tuple:
    return _judged(_declaration_values(text))


_judge_declarations = lru_cache(maxsize=16_384)(_judge_uncached)


# The declaration shapes most blocks and inline styles are made of (``display:none``,
# ``left:-9999px``, ``font-size:0.875rem !important``, ``margin:0 auto``): ASCII text of
# ``name:value`` parts whose values are identifiers, numbers, dimensions, percentages and hashes
# separated by whitespace, and the colour functions ``rgb()``/``rgba()``/``hsl()``/``hsla()`` (any
# case) of those values, commas and ``/`` (most of the texts left to tinycss2 were colours). For
# those the tokens are built here (``_simple_declarations``), the same tokens tinycss2 gives
# (``FunctionBlock`` with its whitespace and literal arguments); anything else (other functions,
# nested ones, ``url(``, strings, escapes, comments, commas outside a colour, blocks, at-rules,
# ``!`` other than ``!important``, non-ASCII) goes to tinycss2, which is pure Python and was most
# of a matched rule's cost.
_SIMPLE_TEXT = re.compile(r"[-a-zA-Z0-9_.%#:;!+(),/ \t\n\r\f]*")
_SIMPLE_PART = re.compile(r"(-?[a-zA-Z_][-a-zA-Z0-9_]*)[ \t\n\r\f]*:[ \t\n\r\f]*(.*?)"
                          r"[ \t\n\r\f]*(![ \t\n\r\f]*important)?[ \t\n\r\f]*", re.DOTALL | re.IGNORECASE)
_CSS_SPACE = re.compile(r"[ \t\n\r\f]+")
_SIMPLE_IDENT = re.compile(r"-?[a-zA-Z_][-a-zA-Z0-9_]*")
# tinycss2's number (its tokenizer's ``_NUMBER_RE``), then a unit that is a plain identifier or ``%``
_SIMPLE_NUMBER = re.compile(r"([-+]?([0-9]*\.)?[0-9]+([eE][+-]?[0-9]+)?)(%|[a-zA-Z_][-a-zA-Z0-9_]*)?")
_SIMPLE_HASH = re.compile(r"#([a-zA-Z_][-a-zA-Z0-9_]*|[-a-zA-Z0-9_]+)")
# a value with a colour function: pieces separated by whitespace, each a colour function whose
# arguments hold no parenthesis, or a run without parenthesis or whitespace (``_simple_token``
# decides it; ``rgb(0 0 0)red`` and ``1pxrgb(…)`` do not match and go to tinycss2)
_SIMPLE_PIECE = r"(?:[rR][gG][bB][aA]?|[hH][sS][lL][aA]?)\([^()]*\)|[^ \t\n\r\f()]+"
_SIMPLE_VALUE = re.compile(rf"(?:{_SIMPLE_PIECE})(?:[ \t\n\r\f]+(?:{_SIMPLE_PIECE}))*")
_SIMPLE_PIECES = re.compile(_SIMPLE_PIECE)
_ARGUMENT_SPLIT = re.compile(r"([ \t\n\r\f]+|[,/])")


def _simple_declarations(text: str) -> dict[str, tuple[list, bool]] | None:
    """``{lower-cased name: (tokens, important)}`` as tinycss2 reads ``text``, for the simple
    shapes above; None for any other text (tinycss2 reads it)."""
    if not _SIMPLE_TEXT.fullmatch(text) or "/*" in text:
        return None
    values: dict[str, tuple[list, bool]] = {}
    for part in text.split(";"):
        if not part.strip(" \t\n\r\f"):
            continue
        m = _SIMPLE_PART.fullmatch(part.strip(" \t\n\r\f"))
        if m is None:
            return None
        name, value, important = m.groups()
        tokens = []
        if value:
            if "(" in value or ")" in value:
                if not _SIMPLE_VALUE.fullmatch(value):
                    return None
                pieces = _SIMPLE_PIECES.findall(value)
            else:
                pieces = _CSS_SPACE.split(value)
            for piece in pieces:
                token = _simple_function(piece) if piece[-1] == ")" else _simple_token(piece)
                if token is None:
                    return None
                tokens.append(token)
        values[name.lower()] = (tokens, important is not None)
    return values


def _simple_function(piece: str):  # noqa: ANN202 — a tinycss2 FunctionBlock or None
    """``rgb(…)`` and its kin as tinycss2 reads them: the arguments' whitespace runs (its newline
    normalisation applied), ``,`` and ``/`` literals, and simple tokens between them."""
    name, _, inner = piece[:-1].partition("(")
    arguments = []
    for i, part in enumerate(_ARGUMENT_SPLIT.split(inner)):
        if i % 2:  # a separator
            if part in ",/":
                arguments.append(LiteralToken(1, 1, part))
            else:
                arguments.append(WhitespaceToken(1, 1, part.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")))
        elif part:
            token = _simple_token(part)
            if token is None:
                return None
            arguments.append(token)
    return FunctionBlock(1, 1, name, arguments)


def _simple_token(piece: str):  # noqa: ANN202 — a tinycss2 token or None
    m = _SIMPLE_NUMBER.fullmatch(piece)
    if m is not None:
        number, fraction, exponent, unit = m.groups()
        value, int_value = float(number), (int(number) if not (fraction or exponent) else None)
        if unit is None:
            return NumberToken(1, 1, value, int_value, number)
        if unit == "%":
            return PercentageToken(1, 1, value, int_value, number)
        return DimensionToken(1, 1, value, int_value, number, unit)
    if _SIMPLE_IDENT.fullmatch(piece):
        return IdentToken(1, 1, piece)
    m = _SIMPLE_HASH.fullmatch(piece)
    if m is not None:
        name = m.group(1)
        return HashToken(1, 1, name, _SIMPLE_IDENT.match(name) is not None or name.startswith("--"))
    return None


def style_hides(style: str) -> bool:
    """True for an inline ``style`` that hides its element (see the module doc for the rules)."""
    return _style_hides(style) if len(style) <= _MEMO_TEXT else _style_hides.__wrapped__(style)


@lru_cache(maxsize=16_384)
def _style_hides(style: str) -> bool:
    # Most inline styles name no property that can hide (``_MAY_HIDE_QUICK`` is a superset of
    # the texts ``hides`` needs, comments and escapes included): they are never tokenized.
    # Of those that do, about half still cannot hide (``rgb`` of a border colour, a negative
    # margin): ``may_hide``, the sheets' block test, rejects them without tinycss2 — for a text
    # without comments, which it does not read as a tokenizer would (``display/**/:none``).
    quick = _MAY_HIDE_QUICK_LOW.search(style.lower()) if style.isascii() else _MAY_HIDE_QUICK.search(style)
    return bool(quick) and ("/*" in style or may_hide(style)) and _parse_uncached(style).hides()


class SheetRule:
    """One selector of a sheet rule; its declarations are parsed on first use (most never are)."""

    __slots__ = ("selector", "body", "order", "_specificity", "_declarations")

    def __init__(self, selector: str, body: str, order: int) -> None:
        self.selector, self.body, self.order = selector, body, order
        self._specificity: tuple[int, int, int] | None = None
        self._declarations: Declarations | None = None

    @property
    def specificity(self) -> tuple[int, int, int]:
        """Computed on first use: only rules that meet in the cascade need it."""
        if self._specificity is None:
            self._specificity = specificity(self.selector)
        return self._specificity

    @property
    def declarations(self) -> Declarations:
        if self._declarations is None:
            self._declarations = parse_declarations(_relevant(self.body))
        return self._declarations


RELEVANT = {*SINGLE, "font-size", "transform", "clip", "clip-path", "color", "overflow", "width", "height",
            "max-width", "max-height", *_OFFSCREEN_PROPS}
_ZERO_BOX = re.compile(r"(?:^|;)\s*(?:max-)?(?:width|height)\s*:\s*0(?:px|em|rem|%)?\s*(?:;|$|!)", re.IGNORECASE)
_HEX_ALPHA = re.compile(r"#(?:[0-9a-f]{3}0|[0-9a-f]{6}00)\b", re.IGNORECASE)


def _relevant(body: str) -> str:
    """Only the declarations this module judges (tinycss2's cost grows with the text); a body
    with a backslash (an escape could spell any name) is kept whole."""
    if "\\" in body:
        return body
    return ";".join(d for d in body.split(";") if d.partition(":")[0].strip().lower() in RELEVANT)


def may_hide(body: str) -> bool:
    """A cheap, generous text test: could this block hide its element? (False is certain.)"""
    if "\\" in body:
        return True
    for declaration in body.split(";"):
        name, _, value = declaration.partition(":")
        name, value = name.strip().lower(), value.strip().lower()
        if not value:
            continue
        if name == "display" and "none" in value or name == "visibility" and ("hidden" in value or "collapse" in value):
            return True
        if name in ("opacity", "font-size") and value[:1] in "0.+":  # (+0 is 0)
            return True
        if name == "font-size" and "%" in value:
            return True
        if name == "transform" and "scale" in value or name in ("clip", "clip-path"):
            return True
        if name == "color" and ("transparent" in value or "rgb" in value or "hsl" in value or _HEX_ALPHA.search(value)):
            return True
        if name in _OFFSCREEN_PROPS and value.startswith("-") and (
                sum(c.isdigit() for c in value) >= 3 or any(u in value for u in ("e", "pc", "in", "cm"))):
            return True  # -1000px needs 3 digits, unless in em/rem (-70em), pc, in, cm or an exponent (-1e4px)
        if name == "overflow" and ("hidden" in value or "clip" in value) and _ZERO_BOX.search(body):
            return True
    return False


_ID = re.compile(r"#[\w-]+")
_CLASSLIKE = re.compile(r"\.[\w-]+|\[[^\]]*\]|:(?!not\b|is\b|where\b)[\w-]+")
_TAG = re.compile(r"(?:^|[\s>+~(])([a-zA-Z][\w-]*)")
_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_BRACE = re.compile(r"[{}]")  # only braces: a Python step per ``;`` of a framework sheet was most of the scan
# One or more flat style rules in a row: a prelude without "@" or braces, then a block without braces.
_FLAT_RUN = re.compile(r"(?:[^{}@]*\{[^{}]*\})+")
# A superset of ``may_hide``'s True cases, in one C-speed search: a block none of whose text
# matches cannot pass ``may_hide`` (each alternative is a text that one of its tests needs).
_MAY_HIDE_QUICK = re.compile(r"display\s*:[^;{}]*none|visibility|opacity|font-size|scale|clip|transparent|rgb|hsl|"
                             r"#(?:[0-9a-f]{3}0|[0-9a-f]{6}00)\b|:\s*-|overflow|\\|/\*", re.IGNORECASE)
# (``\s`` and ``[^;{}]`` never take a brace: every match lies inside one block's text.)
# The same for lower-cased ASCII text (``_style_hides``): there ``re.IGNORECASE`` matches exactly
# what lower-casing gives — it differs only for "ſ", "ı", "İ" and the Kelvin sign — and costs more.
_MAY_HIDE_QUICK_LOW = re.compile(_MAY_HIDE_QUICK.pattern)
MAYBE_SHOWS = re.compile(r"display|visibility|opacity|\\", re.IGNORECASE)


def _after_break(name: str) -> str:
    """``name`` as a whole property name: preceded by whitespace, ``;``, ``{`` or the start (the
    only places ``may_hide`` finds a name, after ``split(";")`` and ``strip()``). Written as a
    look-behind *after* the literal, so the pattern still starts with it and ``re`` can search
    for the literal fast."""
    return f"{re.escape(name)}(?<![^\\s;{{]{re.escape(name)})"


# The sheet scan's pre-filter (``sheet_rules``): one pattern per ``may_hide`` test, each a superset
# of the texts that test accepts, each starting with a literal (``re`` then skips to it at C
# speed; one alternation of them all tries every branch at every position and cost twice as
# much). Comments are gone before the scan; a backslash (escapes) always passes.
_SHEET_HIDES = (
    ("display", r"display\s*:[^;{}]*none"), ("visibility", r"visibility\s*:[^;{}]*(?:hidden|collapse)"),
    ("opacity", r"opacity\s*:\s*[0.+]"), ("font-size", r"font-size\s*:\s*[0.+]"), ("font-size", r"font-size\s*:[^;{}]*%"),
    ("transform", r"transform\s*:[^;{}]*scale"), ("clip", r"clip(?:-path)?\s*:"),
    ("color", _after_break("color") + r"\s*:[^;{}]*(?:transparent|rgb|hsl|#(?:[0-9a-f]{3}0|[0-9a-f]{6}00)\b)"),
    ("", r":\s*-"),  # a negative value: off-screen only for the names in _OFFSCREEN_PROPS (``_positions``)
    ("overflow", _after_break("overflow") + r"\s*:[^;{}]*(?:hidden|clip)"), ("\\", r"\\"),
)
_SHEET_SHOWS = (("display", "display"), ("visibility", "visibility"), ("opacity", "opacity"), ("\\", r"\\"))
# (for lower-cased text, and ignoring case for a text whose lower-casing changes its length)
_SCAN_LOW = {key: tuple((lit, re.compile(rx)) for lit, rx in pats) for key, pats in
             (("hides", _SHEET_HIDES), ("shows", _SHEET_SHOWS))}
_SCAN_ANY = {key: tuple((lit, re.compile(rx, re.IGNORECASE)) for lit, rx in pats) for key, pats in
             (("hides", _SHEET_HIDES), ("shows", _SHEET_SHOWS))}


def _positions(patterns: tuple, text: str, found_literals: dict | None = None) -> list[int]:
    """Sorted start positions of every match of any of ``patterns`` (no match crosses a brace,
    so "a block matches" is "a position falls inside it"). A negative value (``:\\s*-``, the one
    pattern without a literal) counts only after a name in ``_OFFSCREEN_PROPS``: the name is read
    back to the last ``;`` or ``{`` as ``may_hide`` reads it (searching for the five names was
    five times slower than finding the negative values).

    With ``found_literals`` (a dict shared by the calls for one lower-cased sheet), a pattern led
    by a literal that the text holds few times is matched only where ``str.find`` finds that
    literal (``_literal_matches``: the same matches as ``finditer``) — ``str.find`` passes over a
    sheet several times faster than a regex search for the same literal, and the hiding and
    showing scans share their literals' passes (``display``, ``opacity``, ``visibility``, ``\\``)."""
    found: list[int] = []
    rfind = text.rfind
    for literal, rx in patterns:
        if literal:
            if found_literals is not None and literal in _BY_FIND:
                _literal_matches(rx, literal, text, found_literals, found)
            else:
                found.extend([m.start() for m in rx.finditer(text)])
            continue
        for m in rx.finditer(text):
            colon = m.start()
            start = max(rfind(";", 0, colon), rfind("{", 0, colon)) + 1
            if text[start:colon].strip().lower() in _OFFSCREEN_PROPS:
                found.append(colon)
    found.sort()
    return found


# Literals scanned by ``str.find`` (``_positions``); ``color`` (hundreds a sheet: every
# ``background-color``) is left to the regex, which beats a match call per occurrence there.
_BY_FIND = frozenset(("display", "visibility", "opacity", "font-size", "transform", "clip", "overflow", "\\"))


def _literal_matches(rx: re.Pattern, literal: str, text: str, found_literals: dict, out: list[int]) -> None:
    """Append to ``out`` the starts of ``rx.finditer(text)``, for a pattern that begins with
    ``literal``: every match starts at an occurrence of it, so trying ``rx.match`` at each
    occurrence at or after the end of the previous match gives the same matches (a look-behind
    still sees the text before the position). The occurrences are found once per sheet."""
    at = found_literals.get(literal)
    if at is None:
        at = found_literals[literal] = []
        find, i = text.find, text.find(literal)
        while i >= 0:
            at.append(i)
            i = find(literal, i + 1)
    if rx.pattern == re.escape(literal):  # the literal alone (``display`` of the showing scan)
        end = 0
        for i in at:
            if i >= end:
                out.append(i)
                end = i + len(literal)
        return
    match, end = rx.match, 0
    for i in at:
        if i >= end:
            m = match(text, i)
            if m is not None:
                out.append(i)
                end = m.end()


def specificity(selector: str) -> tuple[int, int, int]:
    """An approximation of CSS specificity (ids, classes/attributes/pseudo-classes, types)."""
    stripped = re.sub(r"\[[^\]]*\]", "[]", selector)
    return (len(_ID.findall(stripped)), len(_CLASSLIKE.findall(stripped)), len(_TAG.findall(stripped)))


def _media_applies(prelude: str) -> bool:
    text = " ".join(prelude.lower().split())
    return text in ("@media all", "@media screen", "@media only screen", "@supports") or text.startswith("@supports ")


# A rule that *shows* an element inside a conditional ``@media`` (a width, a colour scheme) counts:
# the element is visible on some screens, so it is no hiding place. Responsive pages hide a block
# in the base sheet and show it from a width on (``.x{display:none} @media (min-width:960px)
# {.x{display:block}}``: CSS-in-JS product pages put their whole description there); counting
# only unconditional rules dropped what every desktop reader sees. Hiding rules stay
# unconditional only. (False gives the judgement before this rule, for bench/hidden_cost.py.)
SHOW_ON_SOME_SCREENS = True


def _media_may_apply(prelude: str) -> bool:
    """Could this ``@media``/``@container``/``@supports`` block apply on some screen? (Not print or speech.)"""
    text = " ".join(prelude.lower().split())
    if not text.startswith(("@media", "@container", "@supports")):
        return False
    return not any(word in text for word in ("print", "speech", "not all"))


@dataclass(frozen=True)
class Sheets:
    """The judged rules of one page's sheets: ``hiding`` and ``showing`` (document order, one
    selector each) and ``showers``, the showing rules per SINGLE property, built on first use."""

    hiding: tuple[SheetRule, ...]
    showing: tuple[SheetRule, ...]
    showers: "Showers"


def page_sheets(sheets: list[str]) -> Sheets:
    """``sheet_rules`` of the page's sheets, memoised per process by a digest of their text: a
    site serves the same sheets on every page, so the scan and the declaration parses (cached on
    the rules) are paid once per site, not once per page."""
    digest = hashlib.blake2b(digest_size=16)
    for sheet in sheets:
        digest.update(len(sheet).to_bytes(8, "little"))
        digest.update(sheet.encode("utf-8", "surrogatepass"))
    key = digest.digest()
    found = _SHEETS.get(key)
    if found is None:
        hiding, showing = sheet_rules(sheets)
        found = Sheets(tuple(hiding), tuple(showing), Showers(showing))
        if len(_SHEETS) >= _SHEETS_MEMO:
            _SHEETS.pop(next(iter(_SHEETS)))  # oldest first: a bounded memo, not a leak
        _SHEETS[key] = found
    return found


_SHEETS: dict[bytes, Sheets] = {}
_SHEETS_MEMO = 64


def clear_memo() -> None:
    """Forget every memoised sheet, block and style (benchmarks measure the cold cost with it),
    and what other modules memoise from sheets (``on_clear``)."""
    _SHEETS.clear()
    _judge_declarations.cache_clear()
    _style_hides.cache_clear()
    for clear in _CLEARERS:
        clear()


_CLEARERS: list = []


def on_clear(clear) -> None:  # noqa: ANN001 — a callable without arguments
    """Have ``clear_memo`` call ``clear`` too (html_hidden's per-selector memos: it imports this module)."""
    _CLEARERS.append(clear)


def sheet_rules(sheets: list[str]) -> tuple[list[SheetRule], list[SheetRule]]:
    """(rules that may hide, rules that may show again) of the page's sheets, in document order,
    one selector each. The sheets are split at braces by a regex scan and only blocks that pass
    a cheap text test are ever tokenized (tinycss2 over a whole framework sheet costs ~50 ms)."""
    hiding: list[SheetRule] = []
    showing: list[SheetRule] = []
    order = 0
    texts = _budgeted(sheets)
    for css, (quick, maybe_shows) in zip(texts, _sheet_positions(texts)):
        if len(hiding) + len(showing) >= MAX_RULES:
            break
        # The open blocks: (is an at-rule, applies, prelude start, prelude end, prelude follows
        # at-statements, may show). A prelude's text is cut only for a block that is judged or an
        # at-rule: a Python step per block of a framework sheet was most of this scan.
        stack: list[tuple[bool, bool, int, int, bool, bool]] = []
        # (``quick``, ``maybe_shows``: where the cheap tests can match in this sheet, ``_sheet_positions``)
        qi = si = 0  # where the next run's positions start (runs come in text order)
        start = 0
        find, rfind, match_run, search_brace = css.find, css.rfind, _FLAT_RUN.match, _BRACE.search
        while True:
            # A run of flat style rules (``sel{body}``, no "@" before a "{", no nesting): one C
            # match consumes it, and only its blocks that hold a candidate position are visited
            # — the same blocks, in the same order, with the same text as brace by brace below
            # (a Python step per brace of a framework sheet was most of the scan).
            run = match_run(css, start)
            if run is not None:
                a, b = run.start(), run.end()
                if not stack or stack[-1][0]:  # rules at top level or in an at-rule (else nested: not judged)
                    applies = stack[-1][1] if stack else True
                    may_show = stack[-1][5] if stack else True
                    if may_show:
                        lo_q, hi_q = bisect_left(quick, a, qi), bisect_left(quick, b, qi)
                        lo_s, hi_s = bisect_left(maybe_shows, a, si), bisect_left(maybe_shows, b, si)
                        qi, si = hi_q, hi_s
                        if lo_q < hi_q or lo_s < hi_s:
                            done = a  # the blocks up to here are judged
                            for at in sorted(quick[lo_q:hi_q] + maybe_shows[lo_s:hi_s]):
                                if at < done:
                                    continue
                                open_ = rfind("{", a, at)
                                if open_ < 0 or rfind("}", a, at) > open_:
                                    continue  # in a prelude, not in a block
                                close = find("}", at)
                                done = close + 1
                                p_start = rfind("}", a, open_) + 1 or a
                                order = _judge(css, open_ + 1, close, p_start, open_, True, applies, quick, maybe_shows,
                                               order, hiding, showing)
                start = b
                continue
            m = search_brace(css, start)
            if m is None:
                break
            pos = m.start()
            if m.group() == "{":
                after_statements = not stack or stack[-1][0]  # at top level or in an at-rule: ``;`` ends statements
                parent = stack[-1][1] if stack else True
                parent_shows = stack[-1][5] if stack else True
                if find("@", start, pos) >= 0:
                    prelude = css[start:pos]
                    if after_statements:
                        prelude = prelude.rpartition(";")[2]  # after an at-statement (@import …;) between rules
                    prelude = prelude.strip()
                    is_at = prelude.startswith("@")
                else:
                    is_at = False  # no "@" in the text: a style rule
                applies = parent and (not is_at or _media_applies(prelude))
                may_show = (applies or (parent_shows and SHOW_ON_SOME_SCREENS and _media_may_apply(prelude))) if is_at \
                    else parent_shows
                if not after_statements:
                    applies = may_show = False  # a nested rule inside a style rule: not judged
                stack.append((is_at, applies, start, pos, after_statements, may_show))
                start = m.end()
                continue
            if not stack:
                start = m.end()
                continue
            is_at, applies, p_start, p_end, after_statements, may_show = stack.pop()
            start_body, start = start, m.end()
            if is_at or not may_show:
                continue
            order = _judge(css, start_body, pos, p_start, p_end, after_statements, applies, quick, maybe_shows, order,
                           hiding, showing)
    return hiding, showing


def _budgeted(sheets: list[str]) -> list[str]:
    """The sheets' texts that are read, without comments: at most ``MAX_SHEET_CHARS`` in all."""
    texts, budget = [], MAX_SHEET_CHARS
    for sheet in sheets:
        if budget <= 0:
            break
        css = _CSS_COMMENT.sub("", sheet[:budget])
        budget -= len(css)
        texts.append(css)
    return texts


# Between sheets scanned as one text (``_sheet_positions``): no pattern of ``_SHEET_HIDES`` or
# ``_SHEET_SHOWS`` matches across it (``}`` ends every ``[^;{}]*`` and no ``\s*`` takes it), none
# starts in it, and its last character is one that ``_after_break``'s look-behind and the
# negative value's read-back treat as the start of a text (``;``).
_SHEET_SEP = "};"


def _sheet_positions(texts: list[str]) -> list[tuple[list[int], list[int]]]:
    """Per sheet text, (``quick``, ``maybe_shows``): the sorted start positions of the hiding and
    the showing scans' matches (``_positions``), in that sheet's coordinates.

    Where the cheap tests can match is found in C-speed passes over the whole text (no match
    crosses a brace, so "a block matches" is "a match starts inside it"), instead of a search per
    block: most blocks of a framework sheet match neither and are skipped. Case is folded once
    (``re.IGNORECASE`` is ~7× slower). All of a page's sheets are scanned as one text joined by
    ``_SHEET_SEP`` — CSS-in-JS pages have dozens of small ``<style>`` elements, and fifteen
    pattern passes per sheet were most of their scan — and the positions are cut back per sheet:
    the same positions as scanning each sheet alone. When lower-casing changes the length of
    the text (a rare non-ASCII letter such as "İ"), each sheet is scanned alone, one whose own
    length changes as is, ignoring case."""
    joined = _SHEET_SEP.join(texts)
    low = joined.lower()
    if len(low) != len(joined):
        return [_one_sheet_positions(css) for css in texts]
    literals: dict = {}
    quick = _positions(_SCAN_LOW["hides"], low, literals)
    shows = _positions(_SCAN_LOW["shows"], low, literals)
    out, at = [], 0
    for css in texts:
        end = at + len(css)
        out.append((_cut(quick, at, end), _cut(shows, at, end)))
        at = end + len(_SHEET_SEP)
    return out


def _one_sheet_positions(css: str) -> tuple[list[int], list[int]]:
    low = css.lower()
    scan, text = (_SCAN_LOW, low) if len(low) == len(css) else (_SCAN_ANY, css)
    literals: dict | None = {} if scan is _SCAN_LOW else None  # (case-blind: the regex finds them)
    return _positions(scan["hides"], text, literals), _positions(scan["shows"], text, literals)


def _cut(positions: list[int], start: int, end: int) -> list[int]:
    """The sorted ``positions`` in ``[start, end)``, less ``start``."""
    lo, hi = bisect_left(positions, start), bisect_left(positions, end)
    if not start:
        return positions[lo:hi]
    return [p - start for p in positions[lo:hi]]


def _judge(css: str, start_body: int, pos: int, p_start: int, p_end: int, after_statements: bool, applies: bool,
           quick: list[int], maybe_shows: list[int], order: int, hiding: list, showing: list) -> int:
    """Judge the block ``css[start_body:pos]`` of the rule whose prelude is ``css[p_start:p_end]``:
    its selectors go to ``hiding`` and/or ``showing`` (numbered on from ``order``, returned)."""
    in_quick, in_shows = _inside(quick, start_body, pos), _inside(maybe_shows, start_body, pos)
    if not (in_quick or in_shows):
        return order
    body = css[start_body:pos]
    if not body.strip():
        return order
    hides = applies and in_quick and may_hide(body)
    shows = in_shows
    if not (hides or shows):
        return order
    prelude = css[p_start:p_end]
    if after_statements:
        prelude = prelude.rpartition(";")[2]
    prelude = prelude.strip()
    for selector in prelude.split(","):
        selector = selector.strip()
        if selector and not _STATES.search(selector):
            order += 1
            rule = SheetRule(selector, body, order)
            if hides:
                hiding.append(rule)
            if shows:
                showing.append(rule)
    return order


def _inside(positions: list[int], start: int, end: int) -> bool:
    """Does any of the sorted ``positions`` fall in ``[start, end)``?"""
    i = bisect_left(positions, start)
    return i < len(positions) and positions[i] < end


class Showers:
    """The rules that may set a SINGLE property to a visible value, per property, found by text
    alone and only when first asked for. Their declarations are parsed only for a rule that
    could win the cascade and matches the element (``overridden``): parsing every showing rule
    of a page was the largest part of its sheet cost, and a page's hidden elements meet few."""

    def __init__(self, showing: list[SheetRule]) -> None:
        self._showing = showing
        self._by_prop: dict[str, list[SheetRule]] = {}
        #: per property, the candidates indexed by the class or id they need (core/convert/
        #: html_hidden.py ``_showers_index`` fills it): it depends on the sheets alone, so it lives
        #: here and is memoised with them
        self.node_index: dict[str, tuple[dict, list]] = {}

    def candidates(self, prop: str) -> list[SheetRule]:
        found = self._by_prop.get(prop)
        if found is None:
            found = self._by_prop[prop] = [r for r in self._showing if prop in r.body.lower() or "\\" in r.body]
        return found

    def for_node(self, prop: str, node) -> list[SheetRule]:  # noqa: ANN001, ARG002 — a page's showers narrow by node
        """The candidates that may match ``node`` (here: all; html_hidden's page showers index them)."""
        return self.candidates(prop)

    def matches(self, node, rule: SheetRule) -> bool:  # noqa: ANN001
        """Does ``rule`` match ``node`` itself?"""
        return element_matches(node, rule.selector)

    def get(self, prop: str, default: tuple = ()) -> list[SheetRule]:  # noqa: ARG002 — the old dict-like call
        """The candidates that do show ``prop`` (parses them all)."""
        return [r for r in self.candidates(prop) if r.declarations.shows(prop)]


def showing_by_property(showing: list[SheetRule]) -> dict[str, list[SheetRule]]:
    """For each SINGLE property, the rules that set it to a visible value (all three at once)."""
    showers = Showers(showing)
    return {prop: showers.get(prop) for prop in SINGLE}


def overridden(node, rule: SheetRule, showers: "dict[str, list[SheetRule]] | Showers",  # noqa: ANN001
               inline: Declarations | None) -> bool:
    """Is a hiding ``rule`` undone for ``node`` by the cascade (a SINGLE property shown again by
    an inline style or by a more specific / later matching rule)? Multi-property hiding
    (zero-size, clip, off-screen) is taken as hiding.

    A competitor is judged cheapest test first — can it outrank the rule at all (it can only be
    ``!important`` with a literal ``!`` in its text), does it match the element (lexbor), and only
    then is it parsed: does it show the property, and does it outrank the rule."""
    declarations = rule.declarations
    props = [(name, important) for name, hides, important in declarations.props if hides]
    if not props or any(p not in SINGLE for p, _ in props) or declarations.rest_hides:
        return False
    matches = _rule_matches if isinstance(showers, dict) else showers.matches
    for prop, important in props:
        if inline is not None and inline.shows(prop) and (not important or inline.important(prop)):
            continue
        rank = (important, rule.specificity, rule.order)
        later = (rule.specificity, rule.order)
        others = showers.get(prop, ()) if isinstance(showers, dict) else showers.for_node(prop, node)
        if not any(other is not rule
                   and ("!" in other.body or (not important and (other.specificity, other.order) > later))
                   and matches(node, other)
                   and other.declarations.shows(prop)
                   and (other.declarations.important(prop), other.specificity, other.order) > rank
                   for other in others):
            return False
    return True


def _rule_matches(node, rule: SheetRule) -> bool:  # noqa: ANN001
    return element_matches(node, rule.selector)


def element_matches(node, selector: str) -> bool:  # noqa: ANN001
    """Does ``selector`` match ``node`` itself? Not ``node.css_matches``, which is true when the
    selector matches any element of the node's subtree (a hidden box holding one element that a
    showing rule matched was taken as shown again, and its hidden text was kept). Lexbor's search
    from a node tries the node first, then its descendants in document order, and stops at the
    first match: the node matches iff that first match is the node."""
    try:
        first = node.css_first(selector)
    except Exception:  # noqa: BLE001 — selectolax raises its own error for selectors lexbor cannot parse
        return False
    return first is not None and first.mem_id == node.mem_id
