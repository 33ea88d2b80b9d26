"""The admin for bookmarks, notes, tags and history (SPEC §9): lists, filters, search, actions
that call the services, forms that save through them, and owner scoping for staff users.

Prompt-specific behaviour (template validation on the form) is in prompts/tests/test_admin.py.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.messages import get_messages
from django.forms import MultiWidget
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from content import services
from content.history import Actor
from content.models import Bookmark, Item, ItemVersion, Note, Tag
from content.services import ItemRef
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

ADMIN_URLS = {Bookmark: "content_bookmark", Note: "content_note", Prompt: "prompts_prompt"}
DATA = {
    Bookmark: {"url": "https://example.com/a", "title": "Example"},
    Note: {"title": "A note", "content": "line one\nline two\n"},
    Prompt: {"name": "review", "content": "Review {{ code }}", "arguments": [{"name": "code"}]},
}


# --- helpers shared with prompts/ and tiddly/ admin tests ---------------------------------------


def changelist_url(model: type, **query: str) -> str:
    url = reverse(f"admin:{ADMIN_URLS.get(model) or _label(model)}_changelist")
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def change_url(obj: Any) -> str:
    return reverse(f"admin:{ADMIN_URLS.get(type(obj)) or _label(type(obj))}_change", args=[obj.pk])


def add_url(model: type) -> str:
    return reverse(f"admin:{ADMIN_URLS.get(model) or _label(model)}_add")


def _label(model: type) -> str:
    return f"{model._meta.app_label}_{model._meta.model_name}"


def form_data(client: Client, page: str, /, **changes: Any) -> dict[str, Any]:
    """The POST body the admin form at ``page`` would send unchanged, with ``changes`` applied."""
    form = client.get(page).context["adminform"].form
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if isinstance(field.widget, MultiWidget):
            parts = value if isinstance(value, list) else field.widget.decompress(value)
            data.update({f"{name}_{i}": "" if p is None else str(p) for i, p in enumerate(parts)})
        else:
            data[name] = "" if value is None else value
    data.update(changes)
    return data


def shown_pks(response: Any) -> set[Any]:
    return {obj.pk for obj in response.context["cl"].result_list}


def texts(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def run_action(client: Client, model: type, action: str, items: list[Any], **extra: Any) -> Any:
    body = {"action": action, "_selected_action": [str(i.pk) for i in items], **extra}
    return client.post(changelist_url(model), body, follow=True)


def create(model: type[Item], owner: Any, **data: Any) -> Any:
    return services.create_item(
        owner=owner, model=model, data={**DATA[model], **data}, actor=Actor()
    )


def fresh(obj: Any) -> Any:
    return type(obj).objects.get(pk=obj.pk)


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def other_staff(other: Any) -> Any:
    other.is_staff = True
    other.save()
    return other


@pytest.fixture
def states(staff: Any) -> dict[str, dict[type, Item]]:
    """One bookmark, note and prompt in each state: active, scheduled, archived, deleted."""
    now = timezone.now()
    result: dict[str, dict[type, Item]] = {}
    for n, state in enumerate(["active", "scheduled", "archived", "deleted"]):
        result[state] = {}
        for model in (Bookmark, Note, Prompt):
            unique = {
                Bookmark: {"url": f"https://example.com/{state}"},
                Note: {"title": f"Note {state}"},
                Prompt: {"name": f"prompt-{n}"},
            }[model]
            item = create(model, staff, **unique)
            if state == "scheduled":
                item.archived_at = now + timedelta(days=3)
            if state == "archived":
                item.archived_at = now - timedelta(days=1)
            if state == "deleted":
                item.deleted_at = now
            item.save()
            result[state][model] = item
    return result


# --- lists, filters, search ---------------------------------------------------------------------

STATE_FILTERS = {
    None: {"active", "scheduled", "archived", "deleted"},
    "active": {"active", "scheduled"},
    "scheduled": {"scheduled"},
    "archived": {"archived"},
    "deleted": {"deleted"},
}


@pytest.mark.parametrize("model", [Bookmark, Note, Prompt])
@pytest.mark.parametrize("state", list(STATE_FILTERS))
def test_changelist_state_filter_shows_the_items_in_that_state(
    staff_client: Client, states: dict, model: type, state: str | None
) -> None:
    response = staff_client.get(changelist_url(model, **({"state": state} if state else {})))

    assert response.status_code == 200
    assert shown_pks(response) == {states[s][model].pk for s in STATE_FILTERS[state]}


@pytest.mark.parametrize("model", [Bookmark, Note, Prompt])
def test_changelist_shows_state_tags_and_content_length(staff_client: Client, staff: Any, model):
    item = create(model, staff, tags=["python", "ai"], content="{{ code }}" + "x" * 1224)
    services.archive_item(owner=staff, ref=ItemRef(model, pk=item.pk), actor=Actor())

    html = staff_client.get(changelist_url(model)).content.decode()

    assert '<span class="tiddly-tag">ai</span> <span class="tiddly-tag">python</span>' in html
    assert "1,234" in html
    # Relative times, the exact one on hover (SPEC §9).
    assert re.search(r'archived <time datetime="20[^"]+" title="20[^"]+">just now</time>', html)


def test_changelist_is_a_constant_number_of_queries(
    staff_client: Client, staff: Any, django_assert_max_num_queries: Any
) -> None:
    for n in range(30):
        create(Bookmark, staff, url=f"https://example.com/{n}", tags=[f"t{n}", "common"])

    with django_assert_max_num_queries(12):
        response = staff_client.get(changelist_url(Bookmark))

    assert len(shown_pks(response)) == 30


@pytest.mark.parametrize(
    ("query", "expected"),
    [("needle", {"content"}), ("EXAMPLE.org", {"url"}), ("Findable", {"title", "description"})],
)
def test_search_matches_title_description_url_and_content(
    staff_client: Client, staff: Any, query: str, expected: set[str]
) -> None:
    made = {
        "content": create(Bookmark, staff, url="https://a.com/", content="a needle in a haystack"),
        "url": create(Bookmark, staff, url="https://example.org/page"),
        "title": create(Bookmark, staff, url="https://b.com/", title="Findable title"),
        "description": create(Bookmark, staff, url="https://c.com/", description="findable"),
        "none": create(Bookmark, staff, url="https://d.com/", title="nothing here"),
    }

    response = staff_client.get(changelist_url(Bookmark, q=query))

    assert shown_pks(response) == {made[k].pk for k in expected}


def test_search_by_id_finds_the_item(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff)
    create(Note, staff, title="Another")

    response = staff_client.get(changelist_url(Note, q=str(note.pk)))

    assert shown_pks(response) == {note.pk}


def test_tag_filter_shows_only_items_with_that_tag(staff_client: Client, staff: Any) -> None:
    tagged = create(Note, staff, tags=["work"])
    create(Note, staff, title="untagged")

    response = staff_client.get(changelist_url(Note, tag="work"))

    assert shown_pks(response) == {tagged.pk}


# --- lifecycle actions --------------------------------------------------------------------------


def test_archive_action_archives_through_the_service(staff_client: Client, staff: Any) -> None:
    notes = [create(Note, staff, title=f"n{i}") for i in range(2)]

    response = run_action(staff_client, Note, "archive_selected", notes)

    assert all(fresh(n).is_archived for n in notes)
    assert "Archived: 2 notes." in texts(response)
    events = ItemVersion.objects.filter(item_id__in=[n.pk for n in notes], action="archive")
    assert sorted(e.source for e in events) == ["admin", "admin"]


def test_unarchive_action_makes_archived_items_active(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff)
    services.archive_item(owner=staff, ref=ItemRef(Note, pk=note.pk), actor=Actor())

    response = run_action(staff_client, Note, "unarchive_selected", [note])

    assert fresh(note).archived_at is None
    assert "Unarchived (active again): 1 note." in texts(response)


def test_unarchive_action_names_each_item_that_is_not_archived(
    staff_client: Client, staff: Any
) -> None:
    note = create(Note, staff, title="Still active")

    response = run_action(staff_client, Note, "unarchive_selected", [note])

    assert texts(response) == [
        "Note “Still active” was left as it was: This note is not archived, so it cannot be "
        "unarchived."
    ]


def test_trash_and_restore_actions_set_and_clear_deleted_at(
    staff_client: Client, staff: Any
) -> None:
    bookmark = create(Bookmark, staff)

    run_action(staff_client, Bookmark, "trash_selected", [bookmark])
    assert fresh(bookmark).deleted_at is not None

    response = run_action(staff_client, Bookmark, "restore_selected", [bookmark])
    assert fresh(bookmark).deleted_at is None
    assert "Restored from the trash: 1 bookmark." in texts(response)
    assert list(
        ItemVersion.objects.filter(item_id=bookmark.pk, version=None).values_list(
            "action", "source"
        )
    ) == [("undelete", "admin"), ("delete", "admin")]


def test_restore_action_reports_a_taken_url_and_restores_the_others(
    staff_client: Client, staff: Any
) -> None:
    clashing = create(Bookmark, staff, url="https://taken.example/", title="Old copy")
    fine = create(Bookmark, staff, url="https://fine.example/")
    for item in (clashing, fine):
        services.trash_item(owner=staff, ref=ItemRef(Bookmark, pk=item.pk), actor=Actor())
    create(Bookmark, staff, url="https://taken.example/", title="New copy")

    response = run_action(staff_client, Bookmark, "restore_selected", [clashing, fine])

    assert fresh(clashing).deleted_at is not None
    assert fresh(fine).deleted_at is None
    errors = [m for m in texts(response) if "Old copy" in m]
    assert len(errors) == 1
    assert "url 'https://taken.example/' already exists" in errors[0]
    assert "Restored from the trash: 1 bookmark." in texts(response)


def test_archive_action_refuses_items_in_the_trash(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff, title="Trashed")
    services.trash_item(owner=staff, ref=ItemRef(Note, pk=note.pk), actor=Actor())

    response = run_action(staff_client, Note, "archive_selected", [note])

    assert fresh(note).archived_at is None
    assert texts(response) == [
        "Note “Trashed” was left as it was: It is in the trash; restore it from the trash first."
    ]


def test_delete_permanently_asks_first_then_erases_item_and_history(
    staff_client: Client, staff: Any
) -> None:
    note = create(Note, staff, title="Doomed")
    services.update_item(
        owner=staff, ref=ItemRef(Note, pk=note.pk), data={"content": "v2"}, actor=Actor()
    )

    confirm = staff_client.post(
        changelist_url(Note), {"action": "delete_permanently", "_selected_action": [note.pk]}
    )
    assert confirm.status_code == 200
    assert "deleted for good, together with their version" in confirm.content.decode()
    assert Note.objects.filter(pk=note.pk).exists()

    response = run_action(staff_client, Note, "delete_permanently", [note], post="yes")

    assert not Note.objects.filter(pk=note.pk).exists()
    assert not ItemVersion.objects.filter(item_id=note.pk).exists()
    assert "Deleted permanently: 1 note." in texts(response)


def test_delete_from_the_change_page_erases_history_too(staff_client: Client, staff: Any):
    bookmark = create(Bookmark, staff, tags=["kept"])

    page = staff_client.get(reverse("admin:content_bookmark_delete", args=[bookmark.pk]))
    assert dict(page.context["model_count"]) == {"bookmarks": 1, "history records": 1}
    staff_client.post(reverse("admin:content_bookmark_delete", args=[bookmark.pk]), {"post": "yes"})

    assert not Bookmark.objects.filter(pk=bookmark.pk).exists()
    assert not ItemVersion.objects.filter(item_id=bookmark.pk).exists()
    assert Tag.objects.filter(name="kept").exists()


@pytest.mark.parametrize("model", [Bookmark, Note, Prompt])
def test_django_delete_selected_is_replaced(staff_client: Client, model: type) -> None:
    actions = staff_client.get(changelist_url(model)).context["action_form"]
    names = [name for name, _ in actions.fields["action"].choices]

    assert "delete_selected" not in names
    assert {
        "archive_selected",
        "unarchive_selected",
        "trash_selected",
        "restore_selected",
        "delete_permanently",
    } <= set(names)


# --- add/change forms ---------------------------------------------------------------------------


def test_add_bookmark_saves_through_the_service_for_the_staff_user(
    staff_client: Client, staff: Any
) -> None:
    data = form_data(staff_client, add_url(Bookmark), url="https://example.com", tags="Read, ai")

    response = staff_client.post(add_url(Bookmark), data)

    assert response.status_code == 302
    bookmark = Bookmark.objects.get()
    assert bookmark.owner == staff
    assert bookmark.url == "https://example.com/"  # normalised by the service
    assert bookmark.tag_names() == ["ai", "read"]
    version = ItemVersion.objects.get(item_id=bookmark.pk)
    assert (version.version, version.action, version.source) == (1, "create", "admin")


def test_add_bookmark_with_a_taken_url_shows_the_conflict_on_the_url_field(
    staff_client: Client, staff: Any
) -> None:
    create(Bookmark, staff, url="https://example.com/a")
    data = form_data(staff_client, add_url(Bookmark), url="https://example.com/a")

    response = staff_client.post(add_url(Bookmark), data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "A bookmark with url 'https://example.com/a' already exists" in errors["url"][0]
    assert change_url(Bookmark.objects.get()) in errors["url"][1]
    assert Bookmark.objects.count() == 1


def test_add_with_an_invalid_tag_names_it_on_the_tags_field(staff_client: Client) -> None:
    data = form_data(staff_client, add_url(Note), title="T", tags="fine, not valid!")

    response = staff_client.post(add_url(Note), data)

    assert response.context["adminform"].form.errors["tags"] == [
        "Invalid tag 'not valid!'. Use lowercase letters, numbers and single hyphens "
        "(e.g. 'machine-learning')."
    ]
    assert not Note.objects.exists()


def test_note_without_title_gets_the_service_message(staff_client: Client) -> None:
    response = staff_client.post(add_url(Note), form_data(staff_client, add_url(Note)))

    assert response.context["adminform"].form.errors["title"] == [
        "A note's title is required and cannot be blank."
    ]


def test_too_long_title_gets_the_field_limit_message(staff_client: Client, settings: Any) -> None:
    settings.TIDDLY_LIMITS = {**settings.TIDDLY_LIMITS, "title": 5}
    data = form_data(staff_client, add_url(Note), title="123456")

    response = staff_client.post(add_url(Note), data)

    assert response.context["adminform"].form.errors["title"] == [
        "title is 6 characters long; the limit is 5. Shorten it and retry."
    ]


def test_change_note_records_an_admin_version_and_keeps_line_endings(
    staff_client: Client, staff: Any
) -> None:
    note = create(Note, staff, content="one\ntwo\n", tags=["a"])
    url = change_url(note)
    # A browser posts a textarea with CRLF line endings.
    data = form_data(staff_client, url, content="one\r\nTWO\r\n", tags="a, b")

    response = staff_client.post(url, data)

    assert response.status_code == 302
    note = fresh(note)
    assert note.content == "one\nTWO\n"
    assert note.tag_names() == ["a", "b"]
    latest = ItemVersion.objects.filter(item_id=note.pk).order_by("-version").first()
    assert (latest.version, latest.source) == (2, "admin")
    assert latest.changed_fields == ["content", "tags"]


def test_saving_an_unchanged_form_records_no_version(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff, content="one\ntwo\n", archived_at=timezone.now() + timedelta(days=1))
    before = fresh(note).updated_at
    url = change_url(note)

    response = staff_client.post(url, form_data(staff_client, url))

    assert response.status_code == 302
    assert fresh(note).updated_at == before
    assert ItemVersion.objects.filter(item_id=note.pk).count() == 1


def test_change_with_a_future_archived_at_schedules_the_archive(
    staff_client: Client, staff: Any
) -> None:
    note = create(Note, staff)
    url = change_url(note)
    data = form_data(staff_client, url, archived_at_0="2099-01-01", archived_at_1="10:00:00")

    staff_client.post(url, data)

    note = fresh(note)
    assert note.archived_at.year == 2099
    assert note.state == "active"


def test_stale_form_is_refused_without_overwriting(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff, content="original")
    url = change_url(note)
    data = form_data(staff_client, url, content="from the admin")
    services.update_item(
        owner=staff, ref=ItemRef(Note, pk=note.pk), data={"content": "from an agent"}, actor=Actor()
    )

    response = staff_client.post(url, data)

    assert response.status_code == 200
    assert "changed (by someone else" in response.context["adminform"].form.non_field_errors()[0]
    assert fresh(note).content == "from an agent"


def test_item_in_the_trash_is_read_only(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff)
    services.trash_item(owner=staff, ref=ItemRef(Note, pk=note.pk), actor=Actor())

    page = staff_client.get(change_url(note))
    post = staff_client.post(change_url(note), {"title": "changed"})

    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert post.status_code == 403


# --- owner scoping ------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [Bookmark, Note, Prompt])
def test_staff_user_sees_only_their_own_items(
    staff_client: Client, staff: Any, other_staff: Any, model: type
) -> None:
    mine = create(model, staff)
    theirs = create(model, other_staff)

    listed = staff_client.get(changelist_url(model))
    page = staff_client.get(change_url(theirs))
    action = run_action(staff_client, model, "trash_selected", [theirs])

    assert shown_pks(listed) == {mine.pk}
    assert page.status_code == 302  # Django's "does not exist" redirect, nothing disclosed
    assert fresh(theirs).deleted_at is None
    assert action.status_code == 200


def test_staff_user_does_not_see_owner_column_or_filter(staff_client: Client) -> None:
    response = staff_client.get(changelist_url(Note))

    assert "owner" not in response.context["cl"].list_display
    assert all(f.title != "owner" for f in response.context["cl"].filter_specs)


def test_staff_add_form_has_no_owner_field(staff_client: Client) -> None:
    form = staff_client.get(add_url(Note)).context["adminform"].form

    assert "owner" not in form.fields


def test_superuser_sees_everyone_and_picks_the_owner(
    admin_client: Client, staff: Any, other_staff: Any
) -> None:
    mine, theirs = create(Note, staff), create(Note, other_staff)

    listed = admin_client.get(changelist_url(Note))
    data = form_data(admin_client, add_url(Note), title="For other", owner=other_staff.pk)
    admin_client.post(add_url(Note), data)

    assert {mine.pk, theirs.pk} <= shown_pks(listed)
    assert "owner" in listed.context["cl"].list_display
    assert Note.objects.get(title="For other").owner == other_staff


def test_superuser_actions_act_as_the_items_owner(admin_client: Client, staff: Any) -> None:
    note = create(Note, staff)

    run_action(admin_client, Note, "archive_selected", [note])

    assert fresh(note).is_archived
    assert ItemVersion.objects.get(item_id=note.pk, action="archive").owner == staff


def test_non_staff_user_cannot_use_the_admin(owner: Any) -> None:
    client = Client()
    client.force_login(owner)

    assert client.get(changelist_url(Note)).status_code == 302


# --- tags ---------------------------------------------------------------------------------------


def test_tag_changelist_counts_items_per_type(staff_client: Client, staff: Any) -> None:
    create(Note, staff, tags=["shared"])
    create(Note, staff, title="second", tags=["shared"])
    create(Bookmark, staff, tags=["shared"])

    response = staff_client.get(changelist_url(Tag))
    tag = response.context["cl"].result_list[0]

    assert (tag.name, tag.n_bookmarks, tag.n_notes, tag.n_prompts) == ("shared", 1, 2, 0)


def test_tag_rename_goes_through_the_service(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff, tags=["old"])
    tag = Tag.objects.get(name="old")

    response = staff_client.post(change_url(tag), {"name": "  New-Name "})

    assert response.status_code == 302
    assert fresh(note).tag_names() == ["new-name"]


def test_tag_rename_to_an_existing_name_shows_the_conflict(staff_client: Client, staff):
    create(Note, staff, tags=["one", "two"])
    tag = Tag.objects.get(name="one")

    response = staff_client.post(change_url(tag), {"name": "two"})

    assert response.context["adminform"].form.errors["name"] == [
        "A tag named 'two' already exists. Pick another name, or delete one of the tags."
    ]
    assert fresh(tag).name == "one"


def test_tag_delete_detaches_it_from_items(staff_client: Client, staff: Any) -> None:
    note = create(Note, staff, tags=["gone", "kept"])
    tag = Tag.objects.get(name="gone")

    run_action(staff_client, Tag, "delete_selected", [tag], post="yes")

    assert fresh(note).tag_names() == ["kept"]
    assert not Tag.objects.filter(pk=tag.pk).exists()


def test_staff_user_sees_only_their_own_tags(staff_client, staff, other_staff) -> None:
    create(Note, staff, tags=["mine"])
    create(Note, other_staff, tags=["theirs"])

    response = staff_client.get(changelist_url(Tag))

    assert [t.name for t in response.context["cl"].result_list] == ["mine"]


# --- history (read-only) ------------------------------------------------------------------------


def test_history_changelist_is_read_only_and_searchable_by_item_id(
    staff_client: Client, staff: Any
) -> None:
    note = create(Note, staff)
    create(Note, staff, title="other")

    response = staff_client.get(changelist_url(ItemVersion, q=str(note.pk)))
    version = ItemVersion.objects.get(item_id=note.pk)
    page = staff_client.get(change_url(version))

    assert [v.item_id for v in response.context["cl"].result_list] == [note.pk]
    # The only action is the revert by token (test_revert.py); nothing edits history rows.
    choices = [name for name, _ in response.context["action_form"].fields["action"].choices]
    assert [c for c in choices if c] == ["revert_token"]
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert change_url(note) in page.content.decode()


# --- SPEC §9 polish -----------------------------------------------------------------------------


def test_a_large_note_opens_with_an_excerpt_and_saving_metadata_keeps_its_content(
    staff_client: Client, staff: Any, settings: Any
) -> None:
    settings.TIDDLY_ADMIN_INLINE_CONTENT_CHARS = 1_000
    big = "".join(f"line {n}\n" for n in range(2_000))
    note = create(Note, staff, content=big)

    page = staff_client.get(change_url(note))

    html = page.content.decode()
    assert page.status_code == 200
    assert "content" not in page.context["adminform"].form.fields
    assert "Load all of it into the editor" in html
    assert "line 1999" not in html  # the tail is not inlined
    saved = staff_client.post(
        change_url(note), form_data(staff_client, change_url(note), title="T")
    )
    assert saved.status_code == 302
    after = fresh(note)
    assert (after.title, after.content) == ("T", big)


def test_a_large_note_can_still_be_opened_in_the_editor_on_request(
    staff_client: Client, staff: Any, settings: Any
) -> None:
    settings.TIDDLY_ADMIN_INLINE_CONTENT_CHARS = 1_000
    note = create(Note, staff, content="x" * 5_000)

    page = staff_client.get(change_url(note) + "?edit_content=1")

    assert "content" in page.context["adminform"].form.fields


def test_the_tag_filter_offers_only_tags_that_type_uses(staff_client: Client, staff: Any) -> None:
    create(Note, staff, tags=["note-only"])
    create(Bookmark, staff, tags=["bookmark-only"])

    page = staff_client.get(changelist_url(Note))

    tag_filter = next(f for f in page.context["cl"].filter_specs if f.parameter_name == "tag")
    offered = {value for value, _ in tag_filter.lookup_choices}
    assert offered == {"note-only"}


def test_validating_an_admin_form_writes_nothing_and_saving_it_goes_through_the_service(
    staff: Any,
) -> None:
    from content.admin.items import NoteAdmin

    note = create(Note, staff)
    model_admin = NoteAdmin(Note, admin.site)
    request = type("R", (), {"user": staff, "GET": {}})()
    form_class = model_admin.get_form(request, note, change=True)
    form = form_class(
        data={
            "title": "Renamed",
            "description": "",
            "content": note.content,
            "tags": "",
            "archived_at_0": "",
            "archived_at_1": "",
            "loaded_updated_at": note.updated_at.isoformat(),
        },
        instance=fresh(note),
    )

    assert form.is_valid(), form.errors
    assert fresh(note).title == "A note"  # validated, not written
    assert ItemVersion.objects.filter(item_id=note.pk).count() == 1

    saved = form.save()

    assert fresh(note).title == "Renamed"
    assert saved.pk == note.pk
    latest = ItemVersion.objects.filter(item_id=note.pk).order_by("-created_at").first()
    assert (latest.version, latest.source) == (2, "admin")
