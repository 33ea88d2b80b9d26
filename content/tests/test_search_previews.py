"""A content match's snippet comes from the chunk's stored preview (no read of a large content at
a deep offset); chunks indexed before previews existed still get theirs cut from the content."""

from __future__ import annotations

from typing import Any

import pytest

from content.models.search import CHUNK_PREVIEW_CHARS, SearchChunk
from content.tests.search_support import _fresh_index, index, make_note, search  # noqa: F401

pytestmark = pytest.mark.django_db

BREAD = "\n\n".join(
    [
        "# Groceries\n\n" + "Milk, eggs, coffee beans and oat flakes for the week. " * 25,
        "# Sourdough\n\n" + "Feed the starter the night before, mix flour and water, "
        "fold the dough every half hour, shape the loaf and bake it in a hot dutch oven. " * 8,
    ]
)


def _content_match(api: Any) -> dict[str, Any]:
    found = search(api, "baking a crusty loaf of bread at home", mode="semantic")
    (result,) = [r for r in found["results"] if r["title"] == "Kitchen"]
    assert result["match"]["field"] == "content"
    return result["match"]


def test_indexing_stores_each_content_chunks_opening(api: Any) -> None:
    make_note(api, "Kitchen", BREAD)
    index()
    chunks = SearchChunk.objects.filter(field="content").order_by("seq")
    assert chunks.count() >= 2
    for chunk in chunks:
        assert 0 < len(chunk.preview) <= CHUNK_PREVIEW_CHARS
        assert BREAD[chunk.start_char :].startswith(chunk.preview)
    assert not SearchChunk.objects.filter(field="header").exclude(preview="").exists()


def test_the_snippet_is_the_stored_preview_or_cut_from_the_content(api: Any) -> None:
    make_note(api, "Kitchen", BREAD)
    index()
    assert _content_match(api)["snippet"].startswith("# Sourdough")
    assert _content_match(api)["start_line"] > 1

    SearchChunk.objects.filter(field="content").update(preview="PREVIEW OF THE CHUNK")
    assert _content_match(api)["snippet"] == "PREVIEW OF THE CHUNK"

    SearchChunk.objects.update(preview="")  # indexed before previews: cut from the content
    assert _content_match(api)["snippet"].startswith("# Sourdough")
