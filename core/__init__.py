"""The core room: configuration, data models, the extract pipeline, backends, conversion,
cleaning, truncation, read_file/search_page and the agent surfaces (CLI, MCP, tools).

Nothing is imported here, so ``import webshelf.core.errors``-style imports of one module stay
cheap; the public API is ``webshelf``'s (``from webshelf import web_extract_sync``).
"""
