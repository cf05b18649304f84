"""The agent surfaces over the Python API: CLI, cache CLI, MCP server, tool schemas and dispatch, live sync, signals."""
