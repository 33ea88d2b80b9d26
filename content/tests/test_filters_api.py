"""/api/filters/ and ``filter_id`` on every list (SPEC §11)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from content.models import SavedFilter, Tag
from content.tests.factories import BookmarkFactory, NoteFactory, PromptFactory
from content.tests.helpers import assert_error

pytestmark = pytest.mark.django_db

LIST = "filter-list"


def detail(pk: Any) -> str:
    return reverse("filter-detail", args=[pk])


def body(name: str = "Work", groups: list[list[str]] | None = None, **extra: Any) -> dict:
    groups = [["work"]] if groups is None else groups
    return {
        "name": name,
        "content_types": extra.pop("content_types", ["note", "bookmark"]),
        "expression": {"groups": [{"tags": g} for g in groups], "group_operator": "or"},
        **extra,
    }


def make(api: Any, **kwargs: Any) -> dict:
    response = api.post(reverse(LIST), body(**kwargs), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def ids(response: Any) -> set[str]:
    assert response.status_code == 200, response.json()
    return {row["id"] for row in response.json()["results"]}


# --- CRUD ---------------------------------------------------------------------------------------


def test_create_normalises_tags_creates_missing_ones_and_returns_the_filter(
    api: Any, owner: Any
) -> None:
    response = api.post(
        reverse(LIST),
        body(groups=[[" Work ", "client-a", "work"], ["URGENT"]], default_sort_by="title"),
        format="json",
    )
    assert response.status_code == 201
    data = response.json()
    assert data["name"] == "Work"
    assert data["content_types"] == ["bookmark", "note"]
    assert data["expression"] == {
        "groups": [{"tags": ["work", "client-a"]}, {"tags": ["urgent"]}],
        "group_operator": "or",
    }
    assert (data["default_sort_by"], data["default_sort_order"]) == ("title", "desc")
    saved = SavedFilter.objects.get(pk=data["id"])
    assert sorted(saved.tags.values_list("name", flat=True)) == ["client-a", "urgent", "work"]
    assert Tag.objects.filter(owner=owner).count() == 3


def test_a_taken_name_is_a_409_name_conflict_and_nothing_changes(api: Any) -> None:
    first = make(api)
    response = api.post(reverse(LIST), body(groups=[["other"]]), format="json")
    err = assert_error(response, 409, "name_conflict")
    assert err["existing_id"] == first["id"]
    assert SavedFilter.objects.count() == 1
    assert not Tag.objects.filter(name="other").exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (body(groups=[["ok"], ["Not Valid!"]]), "expression.groups[1].tags"),
        (body(groups=[[]]), "expression.groups[0].tags"),
        (body(content_types=[]), "content_types"),
        (body(content_types=["video"]), "content_types"),
        ({**body(), "expression": {"groups": [], "group_operator": "and"}}, "expression"),
        ({**body(), "colour": "red"}, "colour"),
        ({**body(), "name": ""}, "name"),
        ({**body(), "name": 7}, "name"),
        ({**body(), "default_sort_by": "relevance"}, "default_sort_by"),
        ({**body(), "expression": {"groups": [{"tags": ["a"], "x": 1}]}}, "expression"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_written(
    api: Any, payload: dict, field: str
) -> None:
    err = assert_error(api.post(reverse(LIST), payload, format="json"), 400, "validation_error")
    assert field in err["fields"], err
    assert SavedFilter.objects.count() == 0
    assert Tag.objects.count() == 0


def test_too_many_groups_is_field_limit_exceeded(api: Any) -> None:
    payload = body(groups=[[f"t{i}"] for i in range(21)])
    err = assert_error(api.post(reverse(LIST), payload, format="json"), 400, "field_limit_exceeded")
    assert err["field"] == "expression.groups"
    assert SavedFilter.objects.count() == 0


def test_list_get_patch_and_delete(api: Any) -> None:
    made = make(api, name="B")
    make(api, name="A")
    assert [f["name"] for f in api.get(reverse(LIST)).json()] == ["A", "B"]
    assert api.get(detail(made["id"])).json() == made
    patched = api.patch(detail(made["id"]), {"name": "C", "content_types": ["prompt"]}, "json")
    assert patched.status_code == 200
    assert patched.json()["name"] == "C"
    assert patched.json()["content_types"] == ["prompt"]
    assert patched.json()["expression"] == made["expression"]
    assert api.delete(detail(made["id"])).status_code == 204
    assert not SavedFilter.objects.filter(pk=made["id"]).exists()


def test_renaming_onto_a_taken_name_is_a_409(api: Any) -> None:
    made = make(api, name="A")
    make(api, name="B")
    assert_error(api.patch(detail(made["id"]), {"name": "B"}, format="json"), 409, "name_conflict")
    assert SavedFilter.objects.get(pk=made["id"]).name == "A"


def test_a_strangers_filter_is_404_everywhere(api: Any, other_api: Any) -> None:
    made = make(other_api)
    assert_error(api.get(detail(made["id"])), 404, "not_found")
    assert_error(api.patch(detail(made["id"]), {"name": "x"}, format="json"), 404, "not_found")
    assert_error(api.delete(detail(made["id"])), 404, "not_found")
    assert api.get(reverse(LIST)).json() == []
    assert_error(api.get(reverse("note-list"), {"filter_id": made["id"]}), 404, "not_found")
    assert SavedFilter.objects.get(pk=made["id"]).name == "Work"


def test_anonymous_is_401(anon: Any) -> None:
    assert_error(anon.get(reverse(LIST)), 401, "not_authenticated")
    assert_error(anon.post(reverse(LIST), body(), format="json"), 401, "not_authenticated")


def test_a_malformed_id_is_404(api: Any) -> None:
    assert_error(api.get(detail("not-a-uuid")), 404, "not_found")


# --- filter_id on lists -------------------------------------------------------------------------


@pytest.fixture
def corpus(owner: Any) -> dict[str, Any]:
    return {
        "both": NoteFactory(owner=owner, title="b", tags=["work", "client-a"]),
        "work": NoteFactory(owner=owner, title="c", tags=["work"]),
        "client": NoteFactory(owner=owner, title="d", tags=["client-a"]),
        "urgent": NoteFactory(owner=owner, title="a", tags=["urgent"]),
        "none": NoteFactory(owner=owner, title="e"),
        "bookmark": BookmarkFactory(owner=owner, title="f", tags=["urgent"]),
        "prompt": PromptFactory(owner=owner, title="g", tags=["urgent"]),
    }


def test_and_within_a_group_or_across_groups(api: Any, corpus: dict[str, Any]) -> None:
    saved = make(api, groups=[["work", "client-a"], ["urgent"]], content_types=["note"])
    found = ids(api.get(reverse("note-list"), {"filter_id": saved["id"]}))
    assert found == {str(corpus["both"].pk), str(corpus["urgent"].pk)}


def test_a_filter_without_groups_shows_every_item_of_its_types(
    api: Any, corpus: dict[str, Any]
) -> None:
    saved = make(api, groups=[], content_types=["bookmark", "prompt"])
    found = ids(api.get(reverse("content-list"), {"filter_id": saved["id"]}))
    assert found == {str(corpus["bookmark"].pk), str(corpus["prompt"].pk)}


def test_filter_id_ands_with_the_other_parameters(api: Any, corpus: dict[str, Any]) -> None:
    saved = make(api, groups=[["work"], ["urgent"]], content_types=["note"])
    params = {"filter_id": saved["id"], "tags": ["client-a"]}
    assert ids(api.get(reverse("note-list"), params)) == {str(corpus["both"].pk)}
    params = {"filter_id": saved["id"], "q": "zzz-nothing"}
    assert ids(api.get(reverse("note-list"), params)) == set()


def test_content_list_intersects_types_and_excluded_type_lists_are_empty(
    api: Any, corpus: dict[str, Any]
) -> None:
    saved = make(api, groups=[["urgent"]], content_types=["note", "bookmark"])
    found = ids(api.get(reverse("content-list"), {"filter_id": saved["id"]}))
    assert found == {str(corpus["urgent"].pk), str(corpus["bookmark"].pk)}
    found = ids(api.get(reverse("content-list"), {"filter_id": saved["id"], "type": ["bookmark"]}))
    assert found == {str(corpus["bookmark"].pk)}
    response = api.get(reverse("prompt-list"), {"filter_id": saved["id"]})
    assert response.json()["count"] == 0
    assert ids(response) == set()


def test_the_filters_sort_applies_unless_sort_by_is_given(api: Any, corpus: dict[str, Any]) -> None:
    saved = make(
        api,
        groups=[],
        content_types=["note"],
        default_sort_by="title",
        default_sort_order="asc",
    )
    rows = api.get(reverse("note-list"), {"filter_id": saved["id"]}).json()["results"]
    assert [r["title"] for r in rows] == ["a", "b", "c", "d", "e"]
    rows = api.get(reverse("note-list"), {"filter_id": saved["id"], "sort_by": "title"}).json()[
        "results"
    ]
    assert [r["title"] for r in rows] == ["e", "d", "c", "b", "a"]


def test_an_unknown_or_malformed_filter_id(api: Any) -> None:
    missing = "01900000-0000-7000-8000-000000000000"
    assert_error(api.get(reverse("note-list"), {"filter_id": missing}), 404, "not_found")
    assert_error(api.get(reverse("content-list"), {"filter_id": missing}), 404, "not_found")
    err = assert_error(api.get(reverse("note-list"), {"filter_id": "x"}), 400, "validation_error")
    assert "filter_id" in err["fields"]


@pytest.mark.parametrize("n", [1, 50])
@pytest.mark.parametrize(
    ("url_name", "bound"), [("note-list", 5), ("prompt-list", 5), ("content-list", 10)]
)
@pytest.mark.parametrize("groups", [1, 10])
def test_filtered_lists_take_a_constant_number_of_queries(
    api: Any,
    owner: Any,
    django_assert_max_num_queries: Any,
    n: int,
    url_name: str,
    bound: int,
    groups: int,
) -> None:
    for i in range(n):
        tags = [f"t{i % 10}", "all"]
        NoteFactory(owner=owner, tags=tags)
        BookmarkFactory(owner=owner, tags=tags)
        PromptFactory(owner=owner, tags=tags)
    expression = [[f"t{g}", "all"] for g in range(groups)]
    saved = make(api, groups=expression, content_types=["note", "bookmark", "prompt"])
    api.get(reverse(url_name))
    # One more than the unfiltered list (QUERY_BOUNDS in test_lists): the filter's row.
    with django_assert_max_num_queries(bound):
        response = api.get(reverse(url_name), {"filter_id": saved["id"]})
    assert response.status_code == 200
    per_type = sum(1 for i in range(n) if i % 10 < groups)
    expected = per_type * (3 if url_name == "content-list" else 1)
    assert response.json()["count"] == expected


# --- tags used by filters -----------------------------------------------------------------------


def test_renaming_a_tag_rewrites_the_filters_using_it(api: Any, owner: Any) -> None:
    note = NoteFactory(owner=owner, tags=["work", "client-a"])
    saved = make(api, groups=[["work", "client-a"], ["work"]], content_types=["note"])
    response = api.patch(reverse("tag-detail", args=["work"]), {"name": "job"}, format="json")
    assert response.status_code == 200
    data = api.get(detail(saved["id"])).json()
    assert data["expression"]["groups"] == [{"tags": ["job", "client-a"]}, {"tags": ["job"]}]
    assert ids(api.get(reverse("note-list"), {"filter_id": saved["id"]})) == {str(note.pk)}


def test_deleting_a_tag_a_filter_uses_is_409_tag_in_use(api: Any, owner: Any) -> None:
    NoteFactory(owner=owner, tags=["work"])
    saved = make(api, groups=[["work"]])
    err = assert_error(api.delete(reverse("tag-detail", args=["work"])), 409, "tag_in_use")
    assert err["filters"] == [{"id": saved["id"], "name": "Work"}]
    assert Tag.objects.filter(owner=owner, name="work").exists()
    api.delete(detail(saved["id"]))
    assert api.delete(reverse("tag-detail", args=["work"])).status_code == 204
