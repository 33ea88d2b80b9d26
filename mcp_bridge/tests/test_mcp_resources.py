"""MCP resources on both servers through the official client (SPEC §17.3)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from content.history import Actor
from content.models import Bookmark, Note
from content.services import ItemRef, archive_item, trash_item
from mcp_bridge.tests.conftest import CONTENT, Mcp, create
from tiddly.models import ApiToken


def _uris(result: Any) -> list[str]:
    return [str(r.uri) for r in result.resources]


def test_initialize_declares_resources_without_subscriptions(content_mcp: Mcp) -> None:
    async def caps(session: ClientSession) -> Any:
        return session.get_server_capabilities()

    capabilities = content_mcp.run(caps)
    assert capabilities is not None
    assert capabilities.resources is not None
    assert not capabilities.resources.subscribe


def test_templates_name_bookmarks_and_notes_by_id_and_prompts_by_name(
    content_mcp: Mcp, prompt_mcp: Mcp
) -> None:
    content = content_mcp.run(lambda s: s.list_resource_templates())
    prompts = prompt_mcp.run(lambda s: s.list_resource_templates())
    assert [t.uriTemplate for t in content.resourceTemplates] == [
        "tiddly://bookmark/{id}",
        "tiddly://note/{id}",
    ]
    assert [t.uriTemplate for t in prompts.resourceTemplates] == ["tiddly://prompt/{name}"]
    assert {t.mimeType for t in content.resourceTemplates} == {"text/markdown"}


def test_list_gives_active_items_newest_change_first_with_their_markdown_size(
    content_mcp: Mcp, mcp_owner: Any, mcp_other: Any
) -> None:
    note = create(mcp_owner, "note", title="Café", content="héllo\nwörld")
    mark = create(mcp_owner, "bookmark", url="https://example.com/a", title="A", content="x")
    gone = create(mcp_owner, "note", title="trashed")
    trash_item(owner=mcp_owner, ref=ItemRef(Note, pk=gone.pk), actor=Actor())
    old = create(mcp_owner, "note", title="archived")
    archive_item(owner=mcp_owner, ref=ItemRef(Note, pk=old.pk), actor=Actor())
    create(mcp_other, "note", title="not yours")
    Note.objects.filter(pk=note.pk).update(updated_at=timezone.now() + timedelta(minutes=1))

    listed = content_mcp.run(lambda s: s.list_resources())

    assert _uris(listed) == [f"tiddly://note/{note.pk}", f"tiddly://bookmark/{mark.pk}"]
    first = listed.resources[0]
    assert (first.name, first.title, first.mimeType) == (str(note.pk), "Café", "text/markdown")
    text = content_mcp.run(lambda s: s.read_resource(AnyUrl(f"tiddly://note/{note.pk}")))
    markdown = text.contents[0].text  # type: ignore[union-attr]
    assert markdown == "# Café\n\nhéllo\nwörld"
    assert first.size == len(markdown.encode())
    assert listed.nextCursor is None


def test_list_pages_by_cursor_without_repeats_or_gaps(content_mcp: Mcp, mcp_owner: Any) -> None:
    now = timezone.now()
    notes = [create(mcp_owner, "note", title=f"n{n}") for n in range(120)]
    for n, note in enumerate(notes):  # ties on updated_at too: the id breaks them
        Note.objects.filter(pk=note.pk).update(updated_at=now - timedelta(seconds=n // 3))

    async def all_pages(session: ClientSession) -> list[list[str]]:
        pages, cursor = [], None
        for _ in range(10):
            result = await session.list_resources(cursor=cursor)
            pages.append(_uris(result))
            cursor = result.nextCursor
            if cursor is None:
                return pages
        raise AssertionError("no last page")

    pages = content_mcp.run(all_pages)
    assert [len(p) for p in pages] == [50, 50, 20]
    seen = [uri for page in pages for uri in page]
    assert sorted(seen) == sorted(f"tiddly://note/{n.pk}" for n in notes)


def test_read_a_bookmark_gives_title_url_and_content(content_mcp: Mcp, mcp_owner: Any) -> None:
    mark = create(mcp_owner, "bookmark", url="https://example.com/x", title="X", content="body")
    result = content_mcp.run(lambda s: s.read_resource(AnyUrl(f"tiddly://bookmark/{mark.pk}")))
    contents = result.contents[0]
    assert str(contents.uri) == f"tiddly://bookmark/{mark.pk}"
    assert contents.mimeType == "text/markdown"
    assert contents.text == "# X\n\n<https://example.com/x>\n\nbody"  # type: ignore[union-attr]


def test_read_a_prompt_gives_the_raw_template(prompt_mcp: Mcp, mcp_owner: Any) -> None:
    create(
        mcp_owner, "prompt", name="greet", content="Hello {{ who }}", arguments=[{"name": "who"}]
    )
    listed = prompt_mcp.run(lambda s: s.list_resources())
    assert _uris(listed) == ["tiddly://prompt/greet"]
    assert listed.resources[0].size == len(b"Hello {{ who }}")
    result = prompt_mcp.run(lambda s: s.read_resource(AnyUrl("tiddly://prompt/greet")))
    assert result.contents[0].text == "Hello {{ who }}"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "make_uri",
    [
        lambda mine, theirs, gone: f"tiddly://note/{theirs.pk}",  # foreign
        lambda mine, theirs, gone: f"tiddly://note/{gone.pk}",  # in the trash
        lambda mine, theirs, gone: "tiddly://note/not-a-uuid",  # malformed
        lambda mine, theirs, gone: f"tiddly://bookmark/{mine.pk}",  # wrong type
        lambda mine, theirs, gone: f"tiddly://prompt/{mine.pk}",  # another server's kind
        lambda mine, theirs, gone: f"https://example.com/{mine.pk}",  # not ours at all
    ],
)
def test_an_unknown_foreign_or_malformed_uri_is_resource_not_found(
    content_mcp: Mcp, mcp_owner: Any, mcp_other: Any, make_uri: Any
) -> None:
    mine = create(mcp_owner, "note", title="mine")
    theirs = create(mcp_other, "note", title="theirs")
    gone = create(mcp_owner, "note", title="gone")
    trash_item(owner=mcp_owner, ref=ItemRef(Note, pk=gone.pk), actor=Actor())
    uri = make_uri(mine, theirs, gone)

    with pytest.raises(McpError) as raised:
        content_mcp.run(lambda s: s.read_resource(AnyUrl(uri)))

    assert raised.value.error.code == -32002
    assert "theirs" not in raised.value.error.message


def test_scopes_apply_a_token_without_the_read_scope_sees_and_reads_nothing(
    mcp_owner: Any,
) -> None:
    note = create(mcp_owner, "note", title="private")
    _, plaintext = ApiToken.issue(owner=mcp_owner, name="prompts only", scopes="prompts:read")
    scoped = Mcp(CONTENT, plaintext)

    assert scoped.run(lambda s: s.list_resources()).resources == []
    with pytest.raises(McpError) as raised:
        scoped.run(lambda s: s.read_resource(AnyUrl(f"tiddly://note/{note.pk}")))
    assert raised.value.error.code == -32002


def test_a_bad_cursor_is_invalid_params(content_mcp: Mcp) -> None:
    with pytest.raises(McpError) as raised:
        content_mcp.run(lambda s: s.list_resources(cursor="garbage!"))
    assert raised.value.error.code == -32602
    assert Bookmark.objects.count() == 0


def _cursor(payload: Any) -> str:
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        _cursor({"u": "2026-01-01T00:00:00+00:00", "i": "not-a-uuid"}),
        _cursor({"u": "2026-01-01T00:00:00+00:00", "i": {"nested": 1}}),
        _cursor({"u": "2026-01-01T00:00:00", "i": "0190a0c1-0000-7000-8000-000000000000"}),
        _cursor({"u": "2026-01-01", "i": 5}),
        _cursor(["u", "i"]),
        _cursor(None),
        "a" * 5000,
    ],
)
def test_a_malformed_cursor_that_decodes_is_invalid_params_too(
    content_mcp: Mcp, mcp_owner: Any, cursor: str
) -> None:
    create(mcp_owner, "note", title="kept")
    with pytest.raises(McpError) as raised:
        content_mcp.run(lambda s: s.list_resources(cursor=cursor))
    assert raised.value.error.code == -32602
    assert "Invalid cursor" in raised.value.error.message
    assert Note.objects.filter(owner=mcp_owner).count() == 1
