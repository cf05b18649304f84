"""Record a real agent session with `webshelf mcp serve` for docs/agents.md.

Spawns `webshelf mcp serve` with a throwaway home, serves a long Python docs page from the shared
corpora on a loopback server, and drives the session with the MCP SDK's stdio client:
web_extract → truncated footer → read_file of the omitted range → search_page → read_file
at the match. Prints the calls and the tool outputs as Markdown; long outputs are trimmed
with a visible "[…]" line.

    .venv/bin/python scripts/agent_transcript.py [pydocs-file] [pattern] [docker-image]

With a docker image (any image with sh, sed and touch), step 6 reads the stored page inside
a container that mounts the cache read-only at the same path.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from tests.loopback import LoopbackServer  # noqa: E402

WEBSHELF = Path(sys.executable).with_name("webshelf")


def page_route(server: LoopbackServer, name: str) -> str:
    """The real Python docs page, served as HTML by the loopback server."""
    return server.url(f"/pydocs/{name}")

def trim(text: str, head: int, tail: int) -> str:
    """The first ``head`` lines, the lines around webshelf's omission notice, and the last
    ``tail`` lines; every gap becomes one "[…]" line."""
    lines = text.rstrip("\n").split("\n")
    keep = set(range(min(head, len(lines)))) | set(range(max(len(lines) - tail, 0), len(lines)))
    for i, line in enumerate(lines):
        if line.startswith("[… lines "):  # the notice between head and tail windows
            keep |= set(range(max(i - 2, 0), min(i + 4, len(lines))))
    out, previous = [], -1
    for i in sorted(keep):
        if i != previous + 1:
            out.append("[…]")
        out.append(lines[i])
        previous = i
    if previous != len(lines) - 1:
        out.append("[…]")
    return "\n".join(out)


def show(step: str, tool: str, args: dict, result, head: int, tail: int) -> None:
    print(f"**{step}** — `{tool}`\n")
    print(f"```json\n{json.dumps(args, ensure_ascii=False)}\n```\n")
    if result.structured_content:
        print(f"structured fields:\n\n```json\n{json.dumps(result.structured_content, indent=1, ensure_ascii=False)}\n```\n")
    text = result.content[0].text
    print(f"text{' (is_error)' if result.is_error else ''}, {len(text):,} characters:\n")
    print(f"````text\n{trim(text, head, tail)}\n````\n")


def in_docker(image: str, path: str, line: int) -> None:
    """What an agent whose code runs in a container sees: the cache directory bind-mounted
    read-only at the same absolute path, so the footer's path works unchanged."""
    web = str(Path(path).parent)
    script = f"sed -n '{line},{line + 3}p' {path}; touch {path} || echo 'write refused: the mount is read-only'"
    argv = ["docker", "run", "--rm", "--network=none", "-v", f"{web}:{web}:ro", image, "sh", "-c", script]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    print("**6. The same path inside a Docker sandbox** — the agent's own code, no webshelf tool\n")
    print(f"```sh\ndocker run --rm --network=none -v {web}:{web}:ro {image} sh -c \"{script}\"\n```\n")
    print(f"````text\n{(proc.stdout + proc.stderr).rstrip()}\n````\n")


async def session(url: str, home: Path, pattern: str, docker_image: str | None = None) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("web: {allow_private: true}\n")
    params = StdioServerParameters(command=str(WEBSHELF), args=["mcp", "serve"], env={"WEBSHELF_HOME": str(home)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        args = {"urls": [url], "char_limit": 6000}
        extracted = await mcp.call_tool("web_extract", args)
        show("1. Extract", "web_extract", args, extracted, head=10, tail=10)
        row = extracted.structured_content["results"][0]
        first_omitted = int(re.search(r"offset=(\d+)", extracted.content[0].text).group(1))
        args = {"path": row["path"], "offset": first_omitted, "limit": 12}
        show("2. Read the start of the omitted range", "read_file", args, await mcp.call_tool("read_file", args), 12, 0)
        args = {"path": row["path"], "pattern": pattern, "max_results": 4}
        found = await mcp.call_tool("search_page", args)
        show("3. Jump to what the task needs", "search_page", args, found, 40, 0)
        line = int(re.search(r"^>(\d+)\|", found.content[0].text, re.M).group(1))
        args = {"path": row["path"], "offset": line, "limit": 8}
        show("4. Read at the match", "read_file", args, await mcp.call_tool("read_file", args), 8, 0)
        args = {"path": row["path"], "pattern": "(a+)+(", "regex": True}
        show("5. A mistake, and the error the model gets", "search_page", args,
             await mcp.call_tool("search_page", args), 5, 0)
    if docker_image:
        in_docker(docker_image, row["path"], line)


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "library__re.html"
    pattern = sys.argv[2] if len(sys.argv) > 2 else "lookahead"
    docker_image = sys.argv[3] if len(sys.argv) > 3 else None
    with LoopbackServer() as server, tempfile.TemporaryDirectory(prefix="agent-demo-") as tmp:
        asyncio.run(session(page_route(server, name), Path(tmp) / "home", pattern, docker_image))


if __name__ == "__main__":
    main()
