"""/api/{type}/{id}/history/…: list, read a version, diff, restore (SPEC §6, §3.4)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from content import history, services
from content.history import Actor
from content.models import Bookmark, Item, Note
from content.tests.factories import NoteFactory
from content.tests.helpers import MODELS, assert_error, db_state, detail_url
from content.tests.history_support import current, large_document, numbers, ref, update
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def history_url(kind: str, pk: Any, version: int | None = None, what: str = "") -> str:
    if version is None:
        return reverse(f"{kind}-history", kwargs={"pk": pk})
    name = f"{kind}-history-{what or 'version'}"
    return reverse(name, kwargs={"pk": pk, "version": version})


def create(owner: Any, kind: str, **data: Any) -> Item:
    return services.create_item(owner=owner, model=MODELS[kind], data=data, actor=Actor())


@pytest.fixture
def note(owner: Any) -> Note:
    """Versions: 1 create, 2 content (API token, source cli), 3 title+tags (admin); one event."""
    item = create(owner, "note", title="Plan", content="one\ntwo\nthree", tags=["a"])
    update(owner, item, Actor(source="cli", token_prefix="tdly_abcdefg"), content="one\n2\nthree")
    services.archive_item(owner=owner, ref=ref(item), actor=Actor(source="admin"))
    update(owner, item, Actor(source="admin"), title="Plan B", tags=["b"])
    assert isinstance(item, Note)
    return item


# --- list ---------------------------------------------------------------------------------------


def test_history_lists_versions_and_events_newest_first(api: Any, note: Note) -> None:
    response = api.get(history_url("note", note.pk), format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 4
    assert body["next"] is None
    assert body["previous"] is None
    entries = body["results"]
    assert [(e["version"], e["action"]) for e in entries] == [
        (3, "update"),
        (None, "archive"),
        (2, "update"),
        (1, "create"),
    ]
    newest = entries[0]
    assert newest["changed_fields"] == ["tags", "title"]
    assert newest["metadata"] == {"title": "Plan B", "description": None, "tags": ["b"]}
    assert newest["source"] == "admin"
    assert newest["token_prefix"] is None
    assert entries[2]["source"] == "cli"
    assert entries[2]["token_prefix"] == "tdly_abcdefg"
    assert set(newest) == {
        "id",
        "version",
        "action",
        "changed_fields",
        "metadata",
        "source",
        "token_prefix",
        "created_at",
    }


def test_history_paginates_with_limit_and_offset(api: Any, note: Note) -> None:
    first = api.get(history_url("note", note.pk), {"limit": 2}).json()
    assert [e["version"] for e in first["results"]] == [3, None]
    assert first["count"] == 4
    assert first["previous"] is None
    second = api.get(first["next"]).json()
    assert [e["version"] for e in second["results"]] == [2, 1]
    assert second["next"] is None
    assert second["previous"]


def test_history_filters_by_action_and_source(api: Any, note: Note) -> None:
    url = history_url("note", note.pk)
    body = api.get(url, {"action": ["create", "archive"]}).json()
    assert [e["action"] for e in body["results"]] == ["archive", "create"]
    body = api.get(url, {"source": " Admin "}).json()
    assert [e["version"] for e in body["results"]] == [3, None]
    assert api.get(url, {"source": "nobody"}).json()["count"] == 0


def test_history_rejects_an_unknown_action_and_a_bad_limit(api: Any, note: Note) -> None:
    url = history_url("note", note.pk)
    body = assert_error(api.get(url, {"action": "edit"}), 400, "validation_error")
    assert "action" in body["fields"]
    assert_error(api.get(url, {"limit": 0}), 400, "validation_error")


def test_writes_through_the_api_record_source_and_token_prefix(api: Any, owner: Any) -> None:
    response = api.post(
        reverse("note-list"),
        {"title": "T", "content": "x"},
        format="json",
        HTTP_X_REQUEST_SOURCE="  My-Script  ",
    )
    pk = response.json()["id"]
    api.patch(
        reverse("note-str-replace", args=[pk]), {"old_str": "x", "new_str": "y"}, format="json"
    )
    entries = api.get(history_url("note", pk)).json()["results"]
    assert [(e["version"], e["source"]) for e in entries] == [(2, "api"), (1, "my-script")]
    assert entries[0]["token_prefix"] == api.token[:12]


def test_history_of_an_item_in_the_trash_is_still_readable(api: Any, owner: Any) -> None:
    item = create(owner, "note", title="T", content="x")
    services.trash_item(owner=owner, ref=ref(item), actor=Actor())
    entries = api.get(history_url("note", item.pk)).json()["results"]
    assert [e["action"] for e in entries] == ["delete", "create"]


def test_history_list_costs_a_constant_number_of_queries(
    api: Any, owner: Any, django_assert_max_num_queries: Any
) -> None:
    item = create(owner, "note", title="T", content="a b c d e f g h")
    for letter in "abcdefgh":
        update(owner, item, content=current(item).replace(letter, letter.upper()))  # type: ignore[union-attr]
    # token auth (2) + the revocation generation check (cold cache), item, count, page
    with django_assert_max_num_queries(6):
        response = api.get(history_url("note", item.pk))
    assert len(response.json()["results"]) == 9


# --- one version --------------------------------------------------------------------------------


def test_version_returns_its_content_and_metadata(api: Any, note: Note) -> None:
    body = api.get(history_url("note", note.pk, 1)).json()
    assert body["item_id"] == str(note.pk)
    assert body["type"] == "note"
    assert body["version"] == 1
    assert body["action"] == "create"
    assert body["content"] == "one\ntwo\nthree"
    assert body["metadata"] == {"title": "Plan", "description": None, "tags": ["a"]}
    assert body["content_metadata"] == {
        "total_lines": 3,
        "start_line": 1,
        "end_line": 3,
        "is_partial": False,
    }


def test_version_supports_partial_reads(api: Any, note: Note) -> None:
    body = api.get(history_url("note", note.pk, 2), {"start_line": 2, "end_line": 9}).json()
    assert body["content"] == "2\nthree"
    assert body["content_metadata"] == {
        "total_lines": 3,
        "start_line": 2,
        "end_line": 3,
        "is_partial": True,
    }
    response = api.get(history_url("note", note.pk, 2), {"start_line": 4})
    assert "exceeds total lines (3)" in assert_error(response, 400, "invalid_line_range")["message"]


def test_version_with_null_content_has_null_metadata_and_refuses_line_ranges(
    api: Any, owner: Any
) -> None:
    item = create(owner, "note", title="empty")
    body = api.get(history_url("note", item.pk, 1)).json()
    assert body["content"] is None
    assert body["content_metadata"] is None
    response = api.get(history_url("note", item.pk, 1), {"start_line": 1})
    assert_error(response, 400, "invalid_line_range")


@pytest.mark.parametrize("version", [0, 4, 99999999999999999999])
def test_a_version_that_is_not_kept_is_not_found(api: Any, note: Note, version: int) -> None:
    body = assert_error(api.get(history_url("note", note.pk, version)), 404, "not_found")
    assert "Versions 1 to 3 are kept" in body["message"]


# --- diff ---------------------------------------------------------------------------------------


def test_diff_shows_the_content_change_and_metadata_before_and_after(api: Any, note: Note) -> None:
    body = api.get(history_url("note", note.pk, 2, "diff")).json()
    assert body["version"] == 2
    assert body["previous_version"] == 1
    assert body["content_changed"] is True
    assert body["diff"] == (
        f"--- note/{note.pk} v1\n+++ note/{note.pk} v2\n"
        "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n\\ No newline at end of file\n"
    )
    assert (body["lines_added"], body["lines_removed"], body["truncated"]) == (1, 1, False)
    assert body["before_metadata"] == body["after_metadata"]


def test_diff_of_a_metadata_only_version_has_no_content_diff(api: Any, note: Note) -> None:
    body = api.get(history_url("note", note.pk, 3, "diff")).json()
    assert body["content_changed"] is False
    assert body["diff"] == ""
    assert body["changed_fields"] == ["tags", "title"]
    assert body["before_metadata"]["title"] == "Plan"
    assert body["after_metadata"]["title"] == "Plan B"


def test_diff_of_version_1_is_against_nothing(api: Any, note: Note) -> None:
    body = api.get(history_url("note", note.pk, 1, "diff"), {"context_lines": 0}).json()
    assert body["previous_version"] is None
    assert body["before_metadata"] is None
    assert body["diff"].startswith("--- /dev/null\n")
    assert "@@ -0,0 +1,3 @@\n+one\n+two\n+three\n" in body["diff"]


def test_diff_of_a_one_line_edit_in_a_large_note_is_small(api: Any, owner: Any) -> None:
    text = large_document(1_000_000)
    item = create(owner, "note", title="big", content=text)
    line = text.split("\n")[10_000]
    services.edit_content(
        owner=owner, ref=ref(item), old_str=line, new_str="CHANGED", actor=Actor()
    )
    body = api.get(history_url("note", item.pk, 2, "diff")).json()
    assert body["diff"].count("\n") == 2 + 1 + 7 + 1  # headers, hunk header, 3+1+3 lines, +1
    assert "@@ -9998,7 +9998,7 @@" in body["diff"]
    assert "+CHANGED\n" in body["diff"]


def test_diff_rejects_bad_context_lines(api: Any, note: Note) -> None:
    response = api.get(history_url("note", note.pk, 2, "diff"), {"context_lines": 99})
    assert_error(response, 400, "validation_error")


# --- restore ------------------------------------------------------------------------------------


def test_restore_puts_back_content_and_metadata_as_a_new_restore_version(
    api: Any, note: Note
) -> None:
    response = api.post(history_url("note", note.pk, 1, "restore"), HTTP_X_REQUEST_SOURCE="ui")
    assert response.status_code == 200
    body = response.json()
    assert body["restored_from"] == 1
    assert body["version"] == 4
    assert body["item"]["content"] == "one\ntwo\nthree"
    assert body["item"]["title"] == "Plan"
    assert body["item"]["tags"] == ["a"]
    assert body["item"]["state"] == "archived"  # the archive state is not part of a version
    row = Note.objects.get(pk=note.pk)
    assert (row.content, row.title, row.tag_names()) == ("one\ntwo\nthree", "Plan", ["a"])
    assert row.is_archived
    latest = history.get_version(note, 4)
    assert latest.action == "restore"
    assert latest.source == "ui"
    assert latest.changed_fields == ["content", "tags", "title"]
    assert history.reconstruct(note, 4) == history.reconstruct(note, 1)


def test_restoring_the_current_version_is_a_400(api: Any, note: Note) -> None:
    before = db_state()
    response = api.post(history_url("note", note.pk, 3, "restore"))
    assert (
        "already the current version" in assert_error(response, 400, "validation_error")["message"]
    )
    assert db_state() == before


def test_restoring_a_missing_version_is_a_404(api: Any, note: Note) -> None:
    assert_error(api.post(history_url("note", note.pk, 9, "restore")), 404, "not_found")


def test_restoring_an_item_in_the_trash_is_a_404(api: Any, note: Note, owner: Any) -> None:
    services.trash_item(owner=owner, ref=ref(note), actor=Actor())
    before = db_state()
    assert_error(api.post(history_url("note", note.pk, 1, "restore")), 404, "not_found")
    assert db_state() == before


def test_restoring_a_bookmark_whose_old_url_is_taken_is_a_409(api: Any, owner: Any) -> None:
    bookmark = create(owner, "bookmark", url="https://old.example/")
    update(owner, bookmark, url="https://new.example/")
    other = create(owner, "bookmark", url="https://old.example/")
    before = db_state()
    body = assert_error(
        api.post(history_url("bookmark", bookmark.pk, 1, "restore")), 409, "url_conflict"
    )
    assert body["existing_id"] == str(other.pk)
    assert db_state() == before


def test_restoring_a_prompt_brings_back_name_arguments_and_template(api: Any, owner: Any) -> None:
    prompt = create(
        owner,
        "prompt",
        name="greet",
        content="Hello {{ who }}",
        arguments=[{"name": "who", "required": True}],
    )
    services.update_item(
        owner=owner,
        ref=ref(prompt),
        data={
            "name": "welcome",
            "content": "Welcome {{ guest }}",
            "arguments": [{"name": "guest"}],
        },
        actor=Actor(),
    )
    response = api.post(history_url("prompt", prompt.pk, 1, "restore"))
    assert response.status_code == 200, response.json()
    row = Prompt.objects.get(pk=prompt.pk)
    assert (row.name, row.content) == ("greet", "Hello {{ who }}")
    assert row.arguments == [{"name": "who", "description": None, "required": True}]
    assert numbers(prompt) == [1, 2, 3]


def test_restoring_a_prompt_whose_name_is_taken_is_a_409(api: Any, owner: Any) -> None:
    prompt = create(owner, "prompt", name="greet", content="Hi")
    services.update_item(owner=owner, ref=ref(prompt), data={"name": "hello"}, actor=Actor())
    create(owner, "prompt", name="greet", content="Other")
    response = api.post(history_url("prompt", prompt.pk, 1, "restore"))
    assert_error(response, 409, "name_conflict")
    assert Prompt.objects.get(pk=prompt.pk).name == "hello"


def test_restore_honours_if_match(api: Any, note: Note) -> None:
    response = api.post(history_url("note", note.pk, 1, "restore"), HTTP_IF_MATCH='"1"')
    assert_error(response, 412, "precondition_failed")
    etag = api.get(detail_url("note", note.pk))["ETag"]
    response = api.post(history_url("note", note.pk, 1, "restore"), HTTP_IF_MATCH=etag)
    assert response.status_code == 200


def test_bookmark_history_works_like_notes(api: Any, owner: Any) -> None:
    bookmark = create(owner, "bookmark", url="https://a.example/", content="v1")
    update(owner, bookmark, content="v2", url="https://b.example/")
    body = api.get(history_url("bookmark", bookmark.pk, 1)).json()
    assert body["content"] == "v1"
    assert body["metadata"]["url"] == "https://a.example/"
    api.post(history_url("bookmark", bookmark.pk, 1, "restore"))
    assert Bookmark.objects.get(pk=bookmark.pk).url == "https://a.example/"


# --- access -------------------------------------------------------------------------------------


def all_urls(kind: str, pk: Any) -> list[tuple[str, str]]:
    return [
        ("get", history_url(kind, pk)),
        ("get", history_url(kind, pk, 1)),
        ("get", history_url(kind, pk, 1, "diff")),
        ("post", history_url(kind, pk, 1, "restore")),
    ]


@pytest.mark.parametrize("kind", ["note", "bookmark", "prompt"])
def test_a_strangers_item_history_is_not_found(other_api: Any, owner: Any, kind: str) -> None:
    bodies = {
        "note": {"title": "T", "content": "x"},
        "bookmark": {"url": "https://x.example"},
        "prompt": {"name": "p", "content": "x"},
    }
    item = create(owner, kind, **bodies[kind])
    update(owner, item, content="y")
    before = db_state()
    for method, url in all_urls(kind, item.pk):
        assert_error(getattr(other_api, method)(url), 404, "not_found")
    assert db_state() == before


def test_anonymous_history_requests_are_401(anon: Any, note: Note) -> None:
    for method, url in all_urls("note", note.pk):
        response = getattr(anon, method)(url)
        assert_error(response, 401, "not_authenticated")
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_history_of_an_unknown_or_malformed_id_is_not_found(api: Any) -> None:
    assert_error(api.get(history_url("note", "not-a-uuid")), 404, "not_found")
    missing = NoteFactory.build().pk
    assert_error(api.get(history_url("note", missing)), 404, "not_found")


def test_openapi_schema_documents_the_history_endpoints() -> None:
    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schema = out.getvalue()
    for kind in ("notes", "bookmarks", "prompts"):
        for path in ("history/", "history/{version}/", "history/{version}/diff/"):
            assert f"/api/{kind}/{{id}}/{path}:" in schema
        assert f"/api/{kind}/{{id}}/history/{{version}}/restore/:" in schema
