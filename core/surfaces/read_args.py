r"""``webshelf read`` takes the footer's hint verbatim: ``path="…" offset=N limit=M``.

A truncated page's footer ends with ``Continue: read_file path="…" offset=N limit=M`` (the path
between double quotes, ``\`` written ``\\`` and ``"`` written ``\"`` — core/truncate.py).
Whoever pages through it from a shell should be able to paste that after ``webshelf read``,
so every way the hint can arrive means the same read:

* through a shell: ``webshelf read path="/a b/x.md" offset=9 limit=5`` — the shell has removed
  the quotes and escapes, each ``key=value`` is one argument;
* without a shell (an agent's exec with one argument per word, or the whole hint as one
  argument): the quotes are still there, so a word that starts ``key="`` or ``read_file `` is
  split like a POSIX shell would (``shlex``), which undoes exactly the hint's escaping;
* as flags: ``webshelf read PATH --offset 9 --limit 5``; a leading ``read_file`` word is skipped.

A key given twice (as ``key=`` and as a flag too) is an error rather than a silent choice.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from webshelf.errors import InputError

KEYS = ("path", "offset", "limit")
_KEY_VALUE = re.compile(r"(path|offset|limit)=(.*)", re.S)
_QUOTED = re.compile(r'(?:read_file\s|(?:path|offset|limit)=")')


@dataclass(frozen=True)
class ReadArgs:
    path: str
    offset: int | None
    limit: int | None


def _words(args: Sequence[str]) -> list[str]:
    words: list[str] = []
    for arg in args:
        if _QUOTED.match(arg):
            try:
                words.extend(shlex.split(arg))
            except ValueError:
                raise InputError(f"cannot read the hint {arg!r}: its quotes do not close; paste the whole "
                                 'path="…" part as the footer gives it') from None
        else:
            words.append(arg)
    if words[:1] == ["read_file"]:
        words = words[1:]
    return words


def _number(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{key}={value!r} is not a whole number; write it like {key}=100") from None


def parse_read_args(args: Sequence[str], *, offset: int | None = None, limit: int | None = None) -> ReadArgs:
    """The path, offset and limit from ``args`` (hint words or a plain PATH) and the flags."""
    found: dict[str, str] = {}
    given = {"offset": offset, "limit": limit}
    for word in _words(args):
        m = _KEY_VALUE.fullmatch(word)
        key, value = (m.group(1), m.group(2)) if m else ("path", word)
        if key in found or given.get(key) is not None:
            raise InputError(f"{key} is given twice; give it once (as {key}=… or as --{key})"
                             if key != "path" else "more than one path given; read one page at a time")
        found[key] = value
    if "path" not in found or not found["path"]:
        raise InputError('no page to read: give its path, e.g. webshelf read path="/…/page.md" offset=1 limit=100')
    return ReadArgs(
        path=found["path"],
        offset=_number("offset", found["offset"]) if "offset" in found else offset,
        limit=_number("limit", found["limit"]) if "limit" in found else limit,
    )
