"""A short session of today's official MCP SDK (2.x) against a live Tiddly server (SPEC §7).

Run by ``.ci/mcp-sdk2`` in its own virtualenv (``mcp`` 2.x cannot live beside the server's 1.x):
``python mcp_sdk2_client.py BASE_URL TOKEN``. initialize, tools/list, create_note, edit_content
and get_item on /mcp/content; initialize and prompts/list on /mcp/prompts. Prints each step;
exits 1 on any failure.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

BASE, TOKEN = sys.argv[1], sys.argv[2]
failures: list[str] = []


def check(condition: bool, what: str) -> None:
    print(("   ok: " if condition else "   FAILED: ") + what)
    if not condition:
        failures.append(what)


async def session_on(path: str, work: Any) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(BASE + path, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        print(f"== {path}: {init.server_info.name}, protocol {init.protocol_version} ==")
        check(bool(init.protocol_version), "initialize negotiates a protocol version")
        await work(session)


async def content(session: ClientSession) -> None:
    tools = {t.name for t in (await session.list_tools()).tools}
    check({"create_note", "edit_content", "get_item"} <= tools, "tools/list lists the tools")
    created = await session.call_tool(
        "create_note", {"title": "SDK 2 note", "content": "alpha\nbeta\n"}
    )
    note = created.structured_content or {}
    check(not created.is_error and note.get("title") == "SDK 2 note", "create_note")
    edited = await session.call_tool(
        "edit_content",
        {"id": note.get("id"), "type": "note", "old_str": "beta", "new_str": "gamma"},
    )
    check(not edited.is_error and (edited.structured_content or {}).get("line") == 2, "edit")
    got = await session.call_tool("get_item", {"id": note.get("id"), "type": "note"})
    item = got.structured_content or {}
    check(not got.is_error and item.get("content") == "alpha\ngamma\n", "get_item sees the edit")
    missing = await session.call_tool(
        "edit_content", {"id": note.get("id"), "type": "note", "old_str": "zzz", "new_str": "y"}
    )
    error = missing.structured_content or {}
    check(missing.is_error and error.get("error") == "no_match", "a failed edit is isError")


async def prompts(session: ClientSession) -> None:
    created = await session.call_tool(
        "create_prompt", {"name": "sdk-two", "content": "Hello", "title": "SDK two"}
    )
    check(not created.is_error, "create_prompt")
    listed = (await session.list_prompts()).prompts
    mine = [p for p in listed if p.name == "sdk-two"]
    check(len(mine) == 1 and mine[0].description == "SDK two", "prompts/list with a description")


async def main() -> int:
    for path, work in (("/mcp/content", content), ("/mcp/prompts", prompts)):
        try:
            await session_on(path, work)
        except BaseException as exc:  # a transport failure is a failure, not a crash
            check(False, f"{path}: {type(exc).__name__}: {exc}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
