"""The data that crosses webshelf's boundaries: what a backend returns, what a caller gets."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

#: validators are built on first use, not at import: a cached ``webshelf extract`` builds none (issue 15)
DEFERRED = ConfigDict(defer_build=True)


@dataclass
class Page:
    """One fetched page as a backend hands it over, already converted to Markdown."""

    url: str
    final_url: str
    markdown: str
    title: str | None = None
    content_type: str | None = None
    status: int | None = None
    scripts: int = 0  # <script> elements in a short HTML page: the fallback chain's app-shell test (core/backends/fallback.py)


class ErrorInfo(BaseModel):
    """Why one URL failed: a stable code to switch on and a message to act on."""

    model_config = DEFERRED

    code: str
    message: str


class ExtractResult(BaseModel):
    """The outcome for one URL, in input order; ``error`` replaces content on failure.

    ``content`` is what the agent should see: the page (or its windows and footer) with every
    note in ``notes`` rendered inside, within the budget; ``notes`` is the same as a list."""

    model_config = DEFERRED

    url: str
    final_url: str | None = None
    title: str | None = None
    content: str | None = None
    truncated: bool = False
    path: str | None = None
    total_chars: int = 0
    total_lines: int = 0
    backend: str | None = None
    elapsed_ms: float = 0.0
    error: ErrorInfo | None = None
    notes: list[str] = []
    cached: bool = False  # True when served from a stored copy younger than cache.max_age (no network)
    _render_inputs: Any = PrivateAttr(default=None)  # core.extract re-renders content when notes are added

    @property
    def ok(self) -> bool:
        return self.error is None
