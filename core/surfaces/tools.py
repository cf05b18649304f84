"""The three agent tools — web_extract, read_file, search_page — defined once.

Each tool is a name, a description written for a model (when to use it, what the footer
means, how to continue reading) and a pydantic model of its arguments. The JSON schemas that
``webshelf tools`` prints, the MCP server's tool list and the dispatcher's argument checks all
come from these definitions, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webshelf.core.config import CHAR_LIMIT_RANGE
from webshelf.core.read import MAX_LIMIT, MAX_OFFSET
from webshelf.core.search_page import DEFAULT_RESULTS, MAX_CONTEXT, MAX_RESULTS

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
Format = Literal["openai", "anthropic", "json-schema"]
FORMATS: tuple[str, ...] = ("openai", "anthropic", "json-schema")


class ToolArgs(BaseModel):
    """Arguments of one tool call; unknown arguments are errors, as in the config."""

    model_config = ConfigDict(extra="forbid")


class WebExtractArgs(ToolArgs):
    urls: list[str] = Field(
        min_length=1,
        description="Absolute http(s) URLs to read, e.g. [\"https://docs.python.org/3/library/re.html\"]. "
                    "Several URLs are fetched in parallel; the limit per call is set by web.max_urls (default 20).")
    char_limit: int | None = Field(
        None, ge=CHAR_LIMIT_RANGE[0], le=CHAR_LIMIT_RANGE[1],
        description="Characters to return per page, footer included (default: web.extract_char_limit, 15,000). "
                    "Longer pages are cut to a head and a tail window; the rest stays readable with read_file.")
    fresh: bool = Field(False, description="Fetch again even if a recently stored copy of the page exists.")
    backend: str | None = Field(
        None, description="Fetch backend to use instead of the configured one (e.g. \"local\"). Usually omit.")


class ReadFileArgs(ToolArgs):
    path: str = Field(description="Absolute path of a stored page, exactly as given in a web_extract footer.")
    offset: int = Field(1, ge=1, le=MAX_OFFSET, description="First line to return, 1-based (the footer names the first omitted line).")
    limit: int = Field(500, ge=1, le=MAX_LIMIT, description=f"Number of lines to return (at most {MAX_LIMIT:,}).")


class SearchPageArgs(ToolArgs):
    path: str = Field(description="Absolute path of a stored page, exactly as given in a web_extract footer.")
    pattern: str = Field(min_length=1, max_length=1_000,
                         description="What to look for. Plain text unless regex is true.")
    max_results: int = Field(DEFAULT_RESULTS, ge=1, le=MAX_RESULTS,
                             description=f"Matching lines to show (default {DEFAULT_RESULTS}, at most {MAX_RESULTS}).")
    regex: bool = Field(False, description="Treat pattern as a Python regular expression instead of plain text.")
    case_sensitive: bool = Field(False, description="Match letter case exactly (default: ignore case).")
    context: int = Field(1, ge=0, le=MAX_CONTEXT, description="Lines of context shown before and after each match.")


WEB_EXTRACT_DESCRIPTION = """\
Read web pages as clean Markdown. Use this whenever you need the content of a URL (docs, \
articles, references); it returns the page text itself, not a summary.
A page that fits the character budget comes back whole. A longer page comes back as its \
beginning and its end, with a marker where lines were left out and a footer after it that \
gives: the absolute path where the FULL text is stored, the total lines, which line ranges \
were shown and omitted, the headings inside the omitted part with their line numbers, and a \
ready read_file call. Lines starting `Note:` in the footer (or `[webshelf] note:` after a whole \
page) are webshelf's notes, e.g. that the page came from a stored copy. Nothing is lost: to see omitted lines call read_file with that path \
and offset, or search_page to jump to the lines that mention what you need. The same path \
is readable with your own file tools inside the sandbox where your code runs.
One result per URL, in order; a URL that fails shows `error[code]: message` and does not \
affect the others."""

READ_FILE_DESCRIPTION = """\
Read lines of a page that web_extract stored (the path in its footer). Returns `N|text` \
lines with 1-based line numbers. Use it to continue reading where a truncated page's window \
stopped: pass the offset and limit from the footer, then continue with offset = last line \
read + 1. At most 2,000 lines per call. Only stored pages can be read; if a page was \
evicted, the error names the URL to extract again."""

SEARCH_PAGE_DESCRIPTION = """\
Find lines in a page that web_extract stored (the path in its footer) instead of paging \
through it: returns each matching line as `>N|text` with context lines ` N|text` around it \
(groups separated by `--`), using the same line numbers as read_file, and a read_file call \
to read around the first match. The pattern is plain text, case-insensitive, unless you set \
regex or case_sensitive. Output is bounded by max_results; narrow the pattern if there are \
too many matches."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    args: type[ToolArgs]

    def input_schema(self) -> dict[str, Any]:
        """A plain JSON schema of the arguments (no titles, no nullable unions)."""
        return _simplify(self.args.model_json_schema())


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec for spec in (
        ToolSpec("web_extract", WEB_EXTRACT_DESCRIPTION, WebExtractArgs),
        ToolSpec("read_file", READ_FILE_DESCRIPTION, ReadFileArgs),
        ToolSpec("search_page", SEARCH_PAGE_DESCRIPTION, SearchPageArgs),
    )
}


def _simplify(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic's schema, minus what confuses tool-calling APIs: ``title`` keys and
    ``anyOf [X, null]`` for optional arguments (omitting the argument is how to say None)."""
    out: dict[str, Any] = {k: v for k, v in schema.items() if k != "title"}
    props = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        variants = prop.pop("anyOf", None)
        if variants:
            non_null = [v for v in variants if v.get("type") != "null"]
            prop = {**(non_null[0] if len(non_null) == 1 else {"anyOf": non_null}), **prop}
            if prop.get("default", 0) is None:
                del prop["default"]
        props[name] = prop
    out["properties"] = props
    return out


def tool_definitions(format: Format = "json-schema") -> list[dict[str, Any]]:  # noqa: A002
    """The tools in the shape one framework expects: OpenAI function tools, Anthropic tools,
    or plain JSON-schema documents."""
    defs = []
    for spec in TOOLS.values():
        schema = spec.input_schema()
        if format == "openai":
            defs.append({"type": "function",
                         "function": {"name": spec.name, "description": spec.description, "parameters": schema}})
        elif format == "anthropic":
            defs.append({"name": spec.name, "description": spec.description, "input_schema": schema})
        elif format == "json-schema":
            defs.append({"name": spec.name, "description": spec.description,
                         "input_schema": {"$schema": JSON_SCHEMA_DIALECT, **schema}})
        else:
            raise ValueError(f"unknown tool format {format!r}; use one of {', '.join(FORMATS)}")
    return defs
