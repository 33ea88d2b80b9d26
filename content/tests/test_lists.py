"""Lists (SPEC §3.3): /api/{notes,bookmarks,prompts}/ and /api/content/.

Search, tag filters, views, sorting, pagination, the list item shape and query counts. Tests that
depend on PostgreSQL full-text search are skipped on SQLite (CI runs both databases).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from content.tests.factories import FACTORIES, BookmarkFactory, NoteFactory, PromptFactory
from content.tests.helpers import assert_error, list_url

pytestmark = pytest.mark.django_db

KINDS = ["note", "bookmark", "prompt"]
T0 = timezone.now() - timedelta(days=30)


def at(days: int) -> Any:
    return T0 + timedelta(days=days)


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [row["id"] for row in response.json()["results"]]


def pks(*items: Any) -> list[str]:
    return [str(item.pk) for item in items]


def content_url() -> str:
    return reverse("content-list")


# --- views (states) -----------------------------------------------------------------------------


@pytest.fixture
def states(owner: Any) -> dict[str, Any]:
    past, future = timezone.now() - timedelta(hours=1), timezone.now() + timedelta(days=1)
    return {
        "active": NoteFactory(owner=owner, now=at(1)),
        "scheduled": NoteFactory(owner=owner, now=at(2), archived_at=future),
        "archived": NoteFactory(owner=owner, now=at(3), archived_at=past),
        "deleted": NoteFactory(owner=owner, now=at(4), deleted_at=past),
        "deleted_archived": NoteFactory(owner=owner, now=at(5), archived_at=past, deleted_at=past),
    }


def test_list_defaults_to_active_items_including_scheduled_archives(
    api: Any, states: dict[str, Any]
) -> None:
    assert ids(api.get(list_url("note"))) == pks(states["scheduled"], states["active"])


def test_view_archived_lists_archived_items_only(api: Any, states: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"view": "archived"})) == pks(states["archived"])


def test_view_deleted_lists_the_trash(api: Any, states: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"view": "deleted"})) == pks(
        states["deleted_archived"], states["deleted"]
    )


def test_view_is_repeatable(api: Any, states: dict[str, Any]) -> None:
    response = api.get(list_url("note"), {"view": ["active", "archived", "deleted"]})
    assert len(ids(response)) == 5
    response = api.get(list_url("note"), {"view": ["archived", "deleted"]})
    assert set(ids(response)) == set(
        pks(states["archived"], states["deleted"], states["deleted_archived"])
    )


def test_unknown_view_is_400(api: Any) -> None:
    body = assert_error(api.get(list_url("note"), {"view": "trash"}), 400, "validation_error")
    assert "view" in body["fields"]


# --- tags ---------------------------------------------------------------------------------------


@pytest.fixture
def tagged(owner: Any) -> dict[str, Any]:
    return {
        "ab": NoteFactory(owner=owner, now=at(1), tags=["a", "b"]),
        "a": NoteFactory(owner=owner, now=at(2), tags=["a"]),
        "b": NoteFactory(owner=owner, now=at(3), tags=["b"]),
        "none": NoteFactory(owner=owner, now=at(4)),
    }


def test_tags_default_to_match_all(api: Any, tagged: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"tags": ["a", "b"]})) == pks(tagged["ab"])


def test_tag_match_any(api: Any, tagged: dict[str, Any]) -> None:
    response = api.get(list_url("note"), {"tags": ["a", "b"], "tag_match": "any"})
    assert ids(response) == pks(tagged["b"], tagged["a"], tagged["ab"])


def test_single_tag_filter(api: Any, tagged: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"tags": "a"})) == pks(tagged["a"], tagged["ab"])


def test_tag_filter_is_normalised(api: Any, tagged: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"tags": [" A ", "a"]})) == pks(tagged["a"], tagged["ab"])


def test_unknown_tag_matches_nothing(api: Any, tagged: dict[str, Any]) -> None:
    assert ids(api.get(list_url("note"), {"tags": "zzz"})) == []


def test_invalid_tag_match_is_400(api: Any) -> None:
    assert_error(api.get(list_url("note"), {"tag_match": "some"}), 400, "validation_error")


def test_invalid_tag_name_in_filter_is_400(api: Any) -> None:
    assert_error(api.get(list_url("note"), {"tags": "no good"}), 400, "validation_error")


def test_another_users_tag_of_the_same_name_does_not_match(
    api: Any, other: Any, tagged: dict[str, Any]
) -> None:
    NoteFactory(owner=other, tags=["a"])
    assert ids(api.get(list_url("note"), {"tags": "a"})) == pks(tagged["a"], tagged["ab"])


# --- q: substring (both databases) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "kind"),
    [
        ("title", "note"),
        ("description", "note"),
        ("content", "note"),
        ("url", "bookmark"),
        ("name", "prompt"),
        ("title", "prompt"),
    ],
)
def test_q_substring_searches_each_text_field(api: Any, owner: Any, field: str, kind: str) -> None:
    values = {"url": "https://xyzzyplugh.example/", "name": "xyzzyplugh"}
    value = values.get(field, "Prefix XyzzyPlugh suffix")
    extra = {"content": "{{ v }}", "arguments": [{"name": "v"}]} if kind == "prompt" else {}
    hit = FACTORIES[kind](owner=owner, **{**extra, field: value})
    FACTORIES[kind](owner=owner)
    assert ids(api.get(list_url(kind), {"q": "zzyplu"})) == pks(hit)


def test_q_is_case_insensitive_and_matches_code_symbols(api: Any, owner: Any) -> None:
    hit = NoteFactory(owner=owner, content="call my_func(arg) here")
    NoteFactory(owner=owner, content="nothing")
    assert ids(api.get(list_url("note"), {"q": "MY_FUNC("})) == pks(hit)


def test_q_matching_nothing_returns_an_empty_page(api: Any, owner: Any) -> None:
    NoteFactory(owner=owner, content="hello")
    body = api.get(list_url("note"), {"q": "qwertyuiop"}).json()
    assert body == {"count": 0, "next": None, "previous": None, "results": []}


def test_blank_q_lists_everything(api: Any, owner: Any) -> None:
    NoteFactory(owner=owner)
    assert len(ids(api.get(list_url("note"), {"q": "   "}))) == 1


def test_q_respects_view_and_owner(api: Any, owner: Any, other: Any) -> None:
    NoteFactory(owner=owner, content="needle", deleted_at=timezone.now())
    NoteFactory(owner=other, content="needle")
    hit = NoteFactory(owner=owner, content="needle")
    assert ids(api.get(list_url("note"), {"q": "needle"})) == pks(hit)


# --- q: full-text (both databases: SQLite since round 4) -----------------------------------------------------------------


def test_fts_stemming_finds_other_forms_of_a_word(api: Any, owner: Any) -> None:
    hit = NoteFactory(owner=owner, title="Daily", content="She runs every morning")
    NoteFactory(owner=owner, content="walking")
    assert ids(api.get(list_url("note"), {"q": "running"})) == pks(hit)


def test_fts_quoted_phrase_requires_adjacent_words(api: Any, owner: Any) -> None:
    hit = NoteFactory(owner=owner, content="the quick brown fox")
    NoteFactory(owner=owner, content="brown is quick")
    assert ids(api.get(list_url("note"), {"q": '"quick brown"'})) == pks(hit)


def test_fts_or_matches_either_word(api: Any, owner: Any) -> None:
    cats = NoteFactory(owner=owner, now=at(1), content="cats sleep")
    dogs = NoteFactory(owner=owner, now=at(2), content="dogs bark")
    NoteFactory(owner=owner, content="birds sing")
    found = ids(api.get(list_url("note"), {"q": "cats OR dogs"}))
    assert sorted(found) == sorted(pks(cats, dogs))


def test_fts_minus_word_excludes_items(api: Any, owner: Any) -> None:
    hit = NoteFactory(owner=owner, content="python snake")
    NoteFactory(owner=owner, content="python code")
    assert ids(api.get(list_url("note"), {"q": "python -code"})) == pks(hit)


def test_fts_title_hit_outranks_content_hit(api: Any, owner: Any) -> None:
    in_content = NoteFactory(owner=owner, now=at(2), title="Misc", content="about gardening")
    in_description = NoteFactory(
        owner=owner, now=at(3), title="Other", description="gardening notes"
    )
    in_title = NoteFactory(owner=owner, now=at(1), title="Gardening", content="soil")
    assert ids(api.get(list_url("note"), {"q": "gardening"})) == pks(
        in_title, in_description, in_content
    )


def test_fts_hits_rank_before_substring_only_hits(api: Any, owner: Any) -> None:
    substring = NoteFactory(owner=owner, now=at(2), title="Misc", content="unrelatedness")
    word = NoteFactory(owner=owner, now=at(1), title="Misc", content="unrelated")
    assert ids(api.get(list_url("note"), {"q": "unrelated"})) == pks(word, substring)


def test_fts_query_of_only_stop_words_returns_nothing(api: Any, owner: Any) -> None:
    NoteFactory(owner=owner, content="the cat and the hat")
    body = api.get(list_url("note"), {"q": "the and"}).json()
    assert body["count"] == 0
    assert body["results"] == []


def test_fts_works_on_the_content_list(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner, now=at(1), title="Running shoes")
    bookmark = BookmarkFactory(owner=owner, now=at(2), title="Misc", content="he runs")
    NoteFactory(owner=owner, title="Other")
    assert ids(api.get(content_url(), {"q": "run"})) == pks(note, bookmark)


# --- sorting ------------------------------------------------------------------------------------


@pytest.fixture
def trio(owner: Any) -> list[Any]:
    """Three notes whose created/updated/used times and titles sort differently."""
    a = NoteFactory(owner=owner, title="banana", now=at(1))
    b = NoteFactory(owner=owner, title="Apple", now=at(2))
    c = NoteFactory(owner=owner, title="cherry", now=at(3))
    type(a).objects.filter(pk=a.pk).update(updated_at=at(10), last_used_at=at(5))
    type(a).objects.filter(pk=b.pk).update(updated_at=at(4), last_used_at=at(20))
    type(a).objects.filter(pk=c.pk).update(updated_at=at(6), last_used_at=at(7))
    return [a, b, c]


@pytest.mark.parametrize(
    ("sort_by", "desc_order"),
    [
        ("created_at", [2, 1, 0]),
        ("updated_at", [0, 2, 1]),
        ("last_used_at", [1, 2, 0]),
        ("title", [2, 0, 1]),
    ],
)
def test_sort_by_each_field_in_both_directions(
    api: Any, trio: list[Any], sort_by: str, desc_order: list[int]
) -> None:
    expected = pks(*(trio[i] for i in desc_order))
    assert ids(api.get(list_url("note"), {"sort_by": sort_by})) == expected
    assert ids(api.get(list_url("note"), {"sort_by": sort_by, "sort_order": "desc"})) == expected
    asc = ids(api.get(list_url("note"), {"sort_by": sort_by, "sort_order": "asc"}))
    assert asc == expected[::-1]


def test_default_sort_is_created_at_descending(api: Any, trio: list[Any]) -> None:
    assert ids(api.get(list_url("note"))) == pks(trio[2], trio[1], trio[0])


def test_sort_by_relevance_without_q_is_stable(api: Any, trio: list[Any]) -> None:
    assert ids(api.get(list_url("note"), {"sort_by": "relevance"})) == pks(
        trio[2], trio[1], trio[0]
    )


def test_sort_by_title_falls_back_to_url_and_name(api: Any, owner: Any) -> None:
    b = BookmarkFactory(owner=owner, title=None, url="https://b.example/")
    a = BookmarkFactory(owner=owner, title="A title")
    c = BookmarkFactory(owner=owner, title="", url="https://c.example/")
    response = api.get(list_url("bookmark"), {"sort_by": "title", "sort_order": "asc"})
    assert ids(response) == pks(a, b, c)
    p1 = PromptFactory(owner=owner, title=None, name="zeta")
    p2 = PromptFactory(owner=owner, title=None, name="alpha")
    response = api.get(list_url("prompt"), {"sort_by": "title", "sort_order": "asc"})
    assert ids(response) == pks(p2, p1)


@pytest.mark.parametrize("params", [{"sort_by": "name"}, {"sort_order": "up"}])
def test_invalid_sort_parameters_are_400(api: Any, params: dict[str, str]) -> None:
    assert_error(api.get(list_url("note"), params), 400, "validation_error")


def test_empty_sort_parameters_are_a_400_not_the_defaults(api: Any, trio: list[Any]) -> None:
    # SPEC §3.4: an empty enumerated parameter is a mistake worth naming (was: the defaults).
    response = api.get(list_url("note"), {"sort_by": "", "sort_order": ""})
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"sort_by", "sort_order"}


# --- pagination ---------------------------------------------------------------------------------


@pytest.fixture
def five(owner: Any) -> list[Any]:
    return [NoteFactory(owner=owner, now=at(i)) for i in range(5)]


def test_limit_and_offset_page_through_with_next_and_previous(api: Any, five: list[Any]) -> None:
    first = api.get(list_url("note"), {"limit": 2}).json()
    assert first["count"] == 5
    assert [r["id"] for r in first["results"]] == pks(five[4], five[3])
    assert first["previous"] is None
    assert "offset=2" in first["next"]
    assert "limit=2" in first["next"]
    second = api.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == pks(five[2], five[1])
    assert second["previous"] is not None
    third = api.get(second["next"]).json()
    assert [r["id"] for r in third["results"]] == pks(five[0])
    assert third["next"] is None
    back = api.get(third["previous"]).json()
    assert back["results"] == second["results"]
    assert [r["id"] for r in api.get(second["previous"]).json()["results"]] == pks(five[4], five[3])


def test_next_link_keeps_the_other_parameters(api: Any, five: list[Any]) -> None:
    body = api.get(list_url("note"), {"limit": 1, "sort_order": "asc", "view": "active"}).json()
    assert "sort_order=asc" in body["next"]
    assert "view=active" in body["next"]
    assert [r["id"] for r in api.get(body["next"]).json()["results"]] == pks(five[1])


def test_offset_past_the_end_is_an_empty_page(api: Any, five: list[Any]) -> None:
    body = api.get(list_url("note"), {"offset": 50}).json()
    assert body["count"] == 5
    assert body["results"] == []
    assert body["next"] is None


def test_default_limit_is_50(api: Any, owner: Any) -> None:
    NoteFactory.create_batch(51, owner=owner)
    body = api.get(list_url("note")).json()
    assert len(body["results"]) == 50
    assert body["count"] == 51
    assert body["next"]


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 101},
        {"limit": 0},
        {"limit": -1},
        {"offset": -1},
        {"limit": "x"},
        {"offset": "1.5"},
    ],
)
def test_out_of_range_limit_or_offset_is_400(api: Any, params: dict[str, Any]) -> None:
    body = assert_error(api.get(list_url("note"), params), 400, "validation_error")
    assert set(body["fields"]) <= {"limit", "offset"}


def test_limit_of_100_is_allowed(api: Any) -> None:
    assert api.get(list_url("note"), {"limit": 100}).status_code == 200


# --- item shape ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_list_items_carry_length_and_preview_but_no_content(
    api: Any, owner: Any, kind: str
) -> None:
    content = "  first\n\n\tsecond   third  " + "x" * 600
    extra = {"arguments": []} if kind == "prompt" else {}
    item = FACTORIES[kind](owner=owner, content=content, tags=["t"], **extra)
    (row,) = api.get(list_url(kind)).json()["results"]
    assert "content" not in row
    assert "content_metadata" not in row
    assert row["content_length"] == len(content)
    expected = " ".join(content[:500].split())
    assert row["content_preview"] == expected
    assert len(row["content_preview"]) <= 500
    assert row["id"] == str(item.pk)
    assert row["type"] == kind
    assert row["tags"] == ["t"]
    if kind == "bookmark":
        assert row["url"] == item.url
    if kind == "prompt":
        assert row["name"] == item.name
        assert row["arguments"] == []


def test_list_item_with_null_content_has_null_length_and_preview(api: Any, owner: Any) -> None:
    NoteFactory(owner=owner, content=None)
    (row,) = api.get(list_url("note")).json()["results"]
    assert row["content_length"] is None
    assert row["content_preview"] is None


def test_list_never_shows_another_users_items(api: Any, owner: Any, other: Any) -> None:
    mine = NoteFactory(owner=owner)
    NoteFactory(owner=other)
    assert ids(api.get(list_url("note"))) == pks(mine)
    assert api.get(list_url("note")).json()["count"] == 1


# --- /api/content/ ------------------------------------------------------------------------------


@pytest.fixture
def mixed(owner: Any) -> dict[str, Any]:
    return {
        "note": NoteFactory(owner=owner, title="Beta", now=at(1), tags=["x"]),
        "bookmark": BookmarkFactory(owner=owner, title="alpha", now=at(3)),
        "prompt": PromptFactory(owner=owner, title="Gamma", now=at(2), tags=["x"]),
    }


def test_content_list_mixes_all_types_newest_first(api: Any, mixed: dict[str, Any]) -> None:
    body = api.get(content_url()).json()
    assert [row["id"] for row in body["results"]] == pks(
        mixed["bookmark"], mixed["prompt"], mixed["note"]
    )
    assert [row["type"] for row in body["results"]] == ["bookmark", "prompt", "note"]
    assert body["count"] == 3
    assert all("content" not in row for row in body["results"])
    assert body["results"][0]["url"] == mixed["bookmark"].url
    assert body["results"][1]["name"] == mixed["prompt"].name


def test_content_list_filters_by_type_repeatably(api: Any, mixed: dict[str, Any]) -> None:
    assert ids(api.get(content_url(), {"type": "note"})) == pks(mixed["note"])
    assert ids(api.get(content_url(), {"type": ["note", "prompt"]})) == pks(
        mixed["prompt"], mixed["note"]
    )


def test_content_list_unknown_type_is_400(api: Any) -> None:
    assert_error(api.get(content_url(), {"type": "tweet"}), 400, "validation_error")


@pytest.mark.parametrize(
    ("params", "order"),
    [
        ({"sort_by": "title", "sort_order": "asc"}, ["bookmark", "note", "prompt"]),
        ({"sort_by": "title"}, ["prompt", "note", "bookmark"]),
        ({"sort_by": "created_at", "sort_order": "asc"}, ["note", "prompt", "bookmark"]),
        ({"sort_by": "updated_at"}, ["bookmark", "prompt", "note"]),
        ({"sort_by": "last_used_at", "sort_order": "asc"}, ["note", "prompt", "bookmark"]),
        ({"sort_by": "relevance"}, ["bookmark", "prompt", "note"]),
    ],
)
def test_content_list_sorts_across_types(
    api: Any, mixed: dict[str, Any], params: dict[str, str], order: list[str]
) -> None:
    assert ids(api.get(content_url(), params)) == pks(*(mixed[k] for k in order))


def test_content_list_paginates_across_types(api: Any, mixed: dict[str, Any]) -> None:
    body = api.get(content_url(), {"limit": 2, "offset": 1}).json()
    assert body["count"] == 3
    assert [r["id"] for r in body["results"]] == pks(mixed["prompt"], mixed["note"])
    assert body["next"] is None
    assert body["previous"] is not None


def test_content_list_applies_tags_views_and_q(api: Any, mixed: dict[str, Any]) -> None:
    assert ids(api.get(content_url(), {"tags": "x"})) == pks(mixed["prompt"], mixed["note"])
    assert ids(api.get(content_url(), {"q": "ALPHA"})) == pks(mixed["bookmark"])
    type(mixed["note"]).objects.filter(pk=mixed["note"].pk).update(deleted_at=timezone.now())
    assert ids(api.get(content_url(), {"view": "deleted"})) == pks(mixed["note"])


def test_content_list_with_q_on_both_databases(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner, now=at(1), content="the zebra crossing")
    prompt = PromptFactory(owner=owner, now=at(2), name="zebra-prompt")
    NoteFactory(owner=owner, content="nothing")
    assert set(ids(api.get(content_url(), {"q": "zebra"}))) == set(pks(note, prompt))


# --- query counts -------------------------------------------------------------------------------

# One token lookup for auth, then: items = count + page + tag prefetch; content = count + page
# (UNIONs) + one page and one tag prefetch per type; tags = one query.
QUERY_BOUNDS = {
    "note-list": 4,
    "bookmark-list": 4,
    "prompt-list": 4,
    "content-list": 9,
    "tag-list": 2,
}


def _populate(owner: Any, n: int) -> None:
    for i in range(n):
        tags = [f"t{i % 7}", f"u{i % 3}"]
        NoteFactory(owner=owner, tags=tags)
        BookmarkFactory(owner=owner, tags=tags)
        PromptFactory(owner=owner, tags=tags)


def _expected_rows(url_name: str, n: int) -> int:
    if url_name == "tag-list":
        return min(n, 7) + min(n, 3)
    return min(n * (3 if url_name == "content-list" else 1), 50)


@pytest.mark.parametrize("n", [1, 50])
@pytest.mark.parametrize("url_name", list(QUERY_BOUNDS))
def test_lists_take_a_constant_number_of_queries(
    api: Any, owner: Any, django_assert_max_num_queries: Any, url_name: str, n: int
) -> None:
    _populate(owner, n)
    url = reverse(url_name)
    api.get(url)  # the first request also stamps the token's last_used_at
    with django_assert_max_num_queries(QUERY_BOUNDS[url_name]):
        response = api.get(url)
    assert response.status_code == 200
    body = response.json()
    rows = body if url_name == "tag-list" else body["results"]
    assert len(rows) == _expected_rows(url_name, n)


@pytest.mark.parametrize("n", [1, 50])
@pytest.mark.parametrize("url_name", ["note-list", "bookmark-list", "prompt-list", "content-list"])
def test_filtered_lists_take_the_same_number_of_queries(
    api: Any, owner: Any, django_assert_max_num_queries: Any, url_name: str, n: int
) -> None:
    _populate(owner, n)
    api.get(reverse(url_name))
    params = {"q": "item", "tags": ["u0", "t0"], "tag_match": "any", "sort_by": "title"}
    with django_assert_max_num_queries(QUERY_BOUNDS[url_name]):
        response = api.get(reverse(url_name), params)
    assert response.status_code == 200
    assert response.json()["results"]


def test_the_first_request_of_a_token_adds_its_lookup_the_stamp_and_the_revocation_check(
    api: Any, owner: Any
) -> None:
    _populate(owner, 3)
    with CaptureQueriesContext(connection) as first:
        api.get(reverse("note-list"))
    with CaptureQueriesContext(connection) as second:
        api.get(reverse("note-list"))  # the token now comes from the cache
    # token lookup, last_used_at, and the revocation generation (re-read every few seconds)
    assert len(first) == len(second) + 3


@pytest.mark.parametrize("q", ["ärger", "ÄRGER", "Ärger", "büro", "école", "straße"])
def test_q_is_case_insensitive_beyond_ascii(api: Any, owner: Any, q: str) -> None:
    hit = NoteFactory(owner=owner, title="Ärger im Büro", content="ÉCOLE an der Straße")
    NoteFactory(owner=owner, title="Other", content="plain")
    assert ids(api.get(list_url("note"), {"q": q})) == pks(hit)
    assert ids(api.get(content_url(), {"q": q})) == pks(hit)


@pytest.mark.parametrize(
    ("limit", "offset", "shown", "counted"),
    [
        (50, 0, 7, False),  # one page holds the list: no count query
        (3, 0, 3, True),  # a full page: more may follow, so count
        (3, 6, 1, False),  # the last page, not full: offset + shown
        (3, 9, 0, True),  # past the end: count (the page says nothing)
        (7, 0, 7, True),  # exactly full: count
    ],
)
@pytest.mark.parametrize("url_name", ["note-list", "content-list"])
def test_count_is_exact_and_skipped_when_a_page_ends_the_list(
    api: Any, owner: Any, url_name: str, limit: int, offset: int, shown: int, counted: bool
) -> None:
    for i in range(7):
        NoteFactory(owner=owner, title=f"item {i}")
    BookmarkFactory(owner=owner, title="other")  # not matched by q below
    api.get(reverse(url_name))
    with CaptureQueriesContext(connection) as queries:
        response = api.get(reverse(url_name), {"q": "item", "limit": limit, "offset": offset})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 7
    assert len(body["results"]) == shown
    counts = [q for q in queries.captured_queries if "COUNT(*)" in q["sql"]]
    assert bool(counts) is counted
