"""The session overview behind get_context (SPEC §7): bounded size, constant queries, scoped."""

from __future__ import annotations

from typing import Any

import pytest

from content.models import Bookmark, Note, SavedFilter, Tag
from content.queries import context
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

CONTENT = ["bookmark", "note"]
# counts and tag counts (one each per type) + filters + 5 filters' items + used + changed.
MAX_QUERIES = 3 + 3 + 1 + 5 + 2


def _large_account(owner: Any) -> None:
    """1 000 items with the longest titles and names allowed, 200 tags, 20 filters."""
    tags = Tag.objects.bulk_create(
        [Tag(owner=owner, name=f"{i:03d}-" + "t" * 46) for i in range(200)]
    )
    long_title = "A title that goes on " + "and on " * 30
    notes = Note.objects.bulk_create(
        [Note(owner=owner, title=f"{i} {long_title}"[:200]) for i in range(400)]
    )
    bookmarks = Bookmark.objects.bulk_create(
        [Bookmark(owner=owner, url=f"https://example.com/{'p' * 1900}/{i}") for i in range(300)]
    )
    prompts = Prompt.objects.bulk_create(
        [Prompt(owner=owner, name=f"{i:03d}-" + "n" * 96, content="x") for i in range(300)]
    )
    for model, items in ((Note, notes), (Bookmark, bookmarks), (Prompt, prompts)):
        through = model.tags.through
        column = f"{model._meta.model_name}_id"
        links = [
            through(**{column: item.pk, "tag_id": tags[(i + k) % 200].pk})
            for i, item in enumerate(items)
            for k in range(3)
        ]
        through.objects.bulk_create(links)
    for f in range(20):
        groups = [{"tags": [tags[(f + g) % 200].name, tags[g].name]} for g in range(20)]
        SavedFilter.objects.create(
            owner=owner,
            name=f"{f:02d} " + "f" * 97,
            content_types=["bookmark", "note", "prompt"],
            expression={"groups": groups, "group_operator": "or"},
        )


@pytest.mark.parametrize("types", [CONTENT, ["prompt"]])
def test_a_large_account_stays_under_the_bound_in_constant_queries(
    owner: Any, django_assert_max_num_queries: Any, types: list[str]
) -> None:
    _large_account(owner)
    with django_assert_max_num_queries(MAX_QUERIES):
        result = context.overview(owner, types=types, recent=20, footer="x" * 2000)
    text = result["markdown"]
    assert len(text) < context.MAX_CHARS
    assert "## Saved filters" in text
    assert "## Recently changed" in text
    assert sum(result["counts"].values()) == (700 if types == CONTENT else 300)
    item_lines = [line for line in text.splitlines() if line.startswith(f"- {types[0]}")]
    assert item_lines


def test_an_empty_account(owner: Any, django_assert_max_num_queries: Any) -> None:
    with django_assert_max_num_queries(MAX_QUERIES):
        result = context.overview(owner, types=CONTENT, recent=10)
    assert result["counts"] == {"bookmark": 0, "note": 0}
    assert "(no tags yet)" in result["markdown"]
    assert len(result["markdown"]) < 1000


def test_other_types_and_inactive_items_are_left_out(owner: Any) -> None:
    Note.objects.create(owner=owner, title="live")
    Note.objects.create(owner=owner, title="binned", deleted_at="2020-01-01T00:00:00Z")
    Prompt.objects.create(owner=owner, name="p", content="x")
    text = context.overview(owner, types=CONTENT, recent=10)["markdown"]
    assert "live" in text
    assert "binned" not in text
    assert "prompt" not in text


def test_an_untitled_item_is_named_by_the_one_display_title(owner: Any) -> None:
    """The overview names an item as the library, the admin and the exports do
    (``Item.display_title``): the URL's host and path, not the raw URL; a blank title falls
    back too."""
    Bookmark.objects.create(owner=owner, title="", url="https://example.com/guide/")
    Bookmark.objects.create(owner=owner, title="   ", url="https://blank.example.org/x?y=1")
    text = context.overview(owner, types=CONTENT, recent=10)["markdown"]
    shown = {line.split(" — ", 1)[1] for line in text.splitlines() if " — " in line}
    assert shown == {"example.com/guide", "blank.example.org/x?y=1"}
