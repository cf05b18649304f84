"""The one renderer of extract results: the text a person or an agent sees for a list of
``ExtractResult``s, shared by ``webshelf extract``, ``call_tool`` and the MCP server.

One URL: its content (notes inside, within the budget — core/truncate.py) or its
``error[code]: message`` line. Several URLs: one block per URL in input order, each headed
``==> URL <==`` (as ``head`` and ``tail`` head files) and separated by a blank line, so each
error is printed once, in its block, and each note sits under the URL it is about.

Every block stays within the budget: a page's content already does, and an error that quotes
a very long URL is cut to it. The notes are worded for the Python API (``fresh=True``); a
surface with other spellings (the CLI's ``--fresh``) gets them rewritten in webshelf's own
footer only, never in the page's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from webshelf.errors import clip

if TYPE_CHECKING:  # annotations only: the cached CLI path renders without importing pydantic (issue 15)
    from webshelf.core.models import ExtractResult

URL_ECHO_CHARS = 1_000  # a header echoes at most this much of a (hostile, megabytes-long) URL

Surface = Literal["tool", "cli"]

#: how an option named in a note is spelled on each surface (the notes use the API's spelling)
SPELLINGS: Mapping[str, Mapping[str, str]] = {
    "tool": {},
    "cli": {"pass fresh=True to fetch again": "pass --fresh to fetch again",
            "or pass regex=false to search": "or leave out --regex to search"},
}
#: where webshelf's own footer starts in a page's content (a whole page's notes or a truncation footer)
FOOTER_START = "---\n[webshelf] "


@dataclass(frozen=True)
class Block:
    """One URL's part of the output: its text (ending in a newline) and whether it failed."""

    url: str
    text: str
    error: bool


def respell(message: str, surface: Surface) -> str:
    """A webshelf message (an error, a note) with its option names as ``surface`` spells them."""
    for api, here in SPELLINGS[surface].items():
        message = message.replace(api, here)
    return message


def _respell(content: str, surface: Surface) -> str:
    spellings = SPELLINGS[surface]
    if not spellings:
        return content
    at = content.rfind("\n" + FOOTER_START)
    at = at + 1 if at >= 0 else (0 if content.startswith(FOOTER_START) else -1)
    if at < 0:
        return content
    return content[:at] + respell(content[at:], surface)  # only ever shorter: the budget still holds


def error_line(code: str, message: str, budget: int | None = None) -> str:
    """``error[code]: message`` and a newline, cut to ``budget`` characters when given."""
    line = f"error[{code}]: {message}\n"
    if budget is not None and len(line) > budget:
        line = line[: budget - 2] + "…\n"
    return line


def blocks(results: Sequence[ExtractResult], budget: int | None = None, *,
           surface: Surface = "tool") -> list[Block]:
    """Each result's text: its content, or its error line (cut to ``budget``)."""
    out = []
    for r in results:
        if r.error:
            out.append(Block(r.url, error_line(r.error.code, r.error.message, budget), True))
        else:
            out.append(Block(r.url, _respell(r.content or "", surface), False))
    return out


def join(parts: Sequence[Block]) -> str:
    """One block alone as it is; several headed by their URL and separated by a blank line."""
    if len(parts) == 1:
        return parts[0].text
    return "\n".join(f"==> {clip(b.url, URL_ECHO_CHARS)} <==\n{b.text}" for b in parts)


def render_results(results: Sequence[ExtractResult], budget: int | None = None, *,
                   surface: Surface = "tool") -> str:
    """The whole text for ``results`` on ``surface``."""
    return join(blocks(results, budget, surface=surface))
