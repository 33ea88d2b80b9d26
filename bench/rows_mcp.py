"""MCP rows for bench/run.py: the Content server's tools through the official MCP SDK client.

Each row calls one tool sequentially (concurrency 1): 200 calls at 100 and 10 000 lines, 20 at
100 000. The REST rows measuring the same operation on the same kind of note are the baseline of
the MCP/REST ratio printed after the table:

| MCP row | tool | REST row |
| --- | --- | --- |
| `mcp_get_item` | `get_item` (whole note) | `get_full` |
| `mcp_search_in_content` | `search_in_content` (unique marker) | `search_marker` |
| `mcp_edit_content` | `edit_content` (alternating marker) | `replace_ok` |

The client is what an agent runs: ``mcp.ClientSession`` over ``streamable_http_client``, one
initialized session per worker, kept open for the whole row; every call pays the SDK client's own
work (request/response models, output-schema validation) as an agent's would.

The rows are registered at import; ``ratio_table()`` is a registered summary printed after the
table.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import httpx
from harness import Bench, Call, Outcome, Scenario, register, register_summary
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from rows_lists import setup_organise
from rows_notes import after_replace, setup_read, setup_replace

CONTENT_PATH = "/mcp/content"
PAIRS = {
    "mcp_get_item": "get_full",
    "mcp_search_in_content": "search_marker",
    "mcp_edit_content": "replace_ok",
}


class McpWorker:
    """An official-SDK client session living in its own event-loop thread, called synchronously."""

    def __init__(self, base_url: str, token: str, timeout: float) -> None:
        self.url = base_url + CONTENT_PATH
        self.token = token
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self.ready: Future[ClientSession] = Future()
        self.done = asyncio.Event()
        self.thread = threading.Thread(target=self._run, name="mcp-bench-client", daemon=True)
        self.thread.start()
        self.session = self.ready.result(timeout=timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        try:
            async with (
                httpx.AsyncClient(
                    headers={"Authorization": f"Bearer {self.token}"},
                    timeout=httpx.Timeout(self.timeout),
                    limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                    trust_env=False,
                ) as http,
                streamable_http_client(self.url, http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self.ready.set_result(session)
                await self.done.wait()
        except BaseException as exc:  # reported to the thread waiting in __init__
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        coro = self.session.call_tool(name, arguments)
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(self.timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.done.set)
        self.thread.join(timeout=10)


def scenarios() -> list[Scenario]:
    """The MCP rows."""

    @contextlib.contextmanager
    def mcp_worker(bench: Bench) -> Iterator[McpWorker]:
        worker = McpWorker(bench.server.base_url, bench.token, bench.args.request_timeout)
        try:
            yield worker
        finally:
            worker.close()

    def outcome(result: types.CallToolResult, problem: str | None = None) -> Outcome:
        text = getattr(result.content[0], "text", "") if result.content else ""
        if result.isError:
            return Outcome(False, 400, len(text), problem, text[:300])
        return Outcome(True, 200, len(text), problem)

    def op_get_item(call: Call) -> Outcome:
        ref = call.state
        result = call.client.call_tool("get_item", {"id": ref.id, "type": "note"})
        problem = None
        content = (result.structuredContent or {}).get("content")
        if call.warmup and not result.isError and content != ref.text.content:
            problem = "get_item content differs from what was posted"
        return outcome(result, problem)

    def op_search_in_content(call: Call) -> Outcome:
        ref = call.state
        args = {"id": ref.id, "type": "note", "query": ref.text.marker}
        result = call.client.call_tool("search_in_content", args)
        problem = None
        if call.warmup and not result.isError:
            total = (result.structuredContent or {}).get("total_matches")
            if total != 1:
                problem = f"search_in_content marker: total_matches={total!r}, expected 1"
        return outcome(result, problem)

    def op_edit_content(call: Call) -> Outcome:
        st = call.state
        w = call.worker
        st.used = max(st.used, w + 1)
        cur = st.values[w]
        args = {
            "id": st.ref.id,
            "type": "note",
            "old_str": st.marker(w, cur),
            "new_str": st.marker(w, 1 - cur),
        }
        result = call.client.call_tool("edit_content", args)
        problem = None
        if not result.isError:
            st.values[w] = 1 - cur
            line = (result.structuredContent or {}).get("line")
            if call.warmup and line != st.line(w):
                problem = f"edit_content reported line {line!r}, expected {st.line(w)}"
        return outcome(result, problem)

    def op_get_context(call: Call) -> Outcome:
        result = call.client.call_tool("get_context", {"limit": 10})
        problem = None
        text = (result.structuredContent or {}).get("markdown", "")
        if call.warmup and not result.isError and len(text) >= 10_000:
            problem = f"get_context: {len(text)} characters, expected < 10 000"
        return outcome(result, problem)

    def count(size: int | None) -> int:
        return 200 if size is None or size <= 10_000 else 20

    common = {"concurrency": (1,), "count": count, "open_worker": mcp_worker}
    return [
        Scenario(
            "mcp_get_item",
            op_get_item,
            "MCP tools/call get_item (whole note) via the official client",
            setup=setup_read,
            **common,
        ),
        Scenario(
            "mcp_search_in_content",
            op_search_in_content,
            "MCP tools/call search_in_content (unique marker) via the official client",
            setup=setup_read,
            **common,
        ),
        Scenario(
            "mcp_get_context_10k",
            op_get_context,
            "MCP tools/call get_context over 10 000 notes+bookmarks (200 tags, 1 filter)",
            setup=setup_organise,
            sized=False,
            group="organise 10k",
            **common,
        ),
        Scenario(
            "mcp_edit_content",
            op_edit_content,
            "MCP tools/call edit_content (alternating marker) via the official client",
            setup=setup_replace,
            after=after_replace,
            **common,
        ),
    ]


def ratio_table(rows: list[dict[str, Any]]) -> str:
    """MCP vs the equivalent REST row (same size, concurrency 1): calls/s, p50, time ratio."""
    rest = {(r["scenario"], r["lines"]): r for r in rows if r["concurrency"] == 1}
    lines = []
    for row in rows:
        twin = PAIRS.get(row["scenario"])
        base = rest.get((twin, row["lines"])) if twin else None
        if base is None or not row["rps"] or not base["rps"]:
            continue
        ratio = base["rps"] / row["rps"]
        lines.append(
            f"  {row['scenario']:<22} {row['lines']:>7}  {row['rps']:>7.1f}/s "
            f"p50 {row['p50_ms']:>8.2f} ms   REST {twin:<13} {base['rps']:>7.1f}/s "
            f"p50 {base['p50_ms']:>8.2f} ms   MCP/REST time {ratio:4.2f}x"
        )
    if not lines:
        return ""
    title = "MCP vs REST (concurrency 1; time ratio = REST calls/s / MCP calls/s):"
    return "\n".join(["", title, *lines])


register(*scenarios())
register_summary(ratio_table)

__all__ = ["McpWorker", "ratio_table", "scenarios"]
