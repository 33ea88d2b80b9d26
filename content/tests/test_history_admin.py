"""Version history in the admin (SPEC §6, §9): the table, the diff page, restore-to-version."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from content import history, services
from content.history import Actor
from content.models import Note
from content.tests.history_support import numbers, ref, update
from content.tests.test_admin import form_data
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def version_url(item: Any, version: int, what: str = "version") -> str:
    label = f"{item._meta.app_label}_{item._meta.model_name}"
    return reverse(f"admin:{label}_history_{what}", args=[item.pk, version])


def change_url(item: Any) -> str:
    return reverse(f"admin:{item._meta.app_label}_{item._meta.model_name}_change", args=[item.pk])


def texts(response: Any) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def history_page_url(item: Any) -> str:
    return reverse(f"admin:{item._meta.app_label}_{item._meta.model_name}_history", args=[item.pk])


@pytest.fixture
def superuser(admin_user: Any) -> Any:
    return admin_user


@pytest.fixture
def note(superuser: Any) -> Note:
    """v1 create (api), v2 content edit (mcp-content, token), v3 title (api)."""
    item = services.create_item(
        owner=superuser,
        model=Note,
        data={"title": "Plan", "content": "one\ntwo\nthree\n"},
        actor=Actor(),
    )
    update(
        superuser,
        item,
        Actor(source="mcp-content", token_prefix="tdly_abcdefg"),
        content="one\n2\nthree\n",
    )
    update(superuser, item, title="Plan B")
    assert isinstance(item, Note)
    return item


def test_change_page_shows_the_history_table(admin_client: Client, note: Note) -> None:
    response = admin_client.get(change_url(note))
    assert response.status_code == 200
    rows = response.context["item_history"]["rows"]
    assert [(r["row"].version, r["row"].action) for r in rows] == [
        (3, "update"),
        (2, "update"),
        (1, "create"),
    ]
    page = response.content.decode()
    assert 'id="version-history"' in page
    assert "mcp-content" in page
    assert "tdly_abcdefg" in page
    assert "content" in rows[1]["changed"]
    assert rows[0]["restore_url"] is None  # the current version
    assert rows[1]["restore_url"] == version_url(note, 2, "restore")
    assert page.count("Restore…") == 2


def test_saving_the_change_form_records_a_version_with_source_admin(
    admin_client: Client, note: Note
) -> None:
    body = form_data(admin_client, change_url(note), content="edited in the admin\n")
    response = admin_client.post(change_url(note), body)
    assert response.status_code == 302, response.context["adminform"].form.errors
    row = history.get_version(note, 4)
    assert row.source == "admin"
    assert row.changed_fields == ["content"]
    assert history.reconstruct(note, 4) == "edited in the admin\n"


def test_version_page_shows_the_diff_metadata_and_a_restore_button(
    admin_client: Client, note: Note
) -> None:
    response = admin_client.get(version_url(note, 2))
    assert response.status_code == 200
    assert ("removed", "-two") in response.context["diff_lines"]
    assert ("added", "+2") in response.context["diff_lines"]
    page = response.content.decode()
    assert "Restore this version" in page
    assert 'id="version-diff"' in page
    current = admin_client.get(version_url(note, 3))
    assert current.context["is_current"] is True
    assert "Restore this version" not in current.content.decode()
    titles = {m["field"]: m for m in current.context["metadata_rows"]}
    assert titles["title"]["before"] == "Plan"
    assert titles["title"]["after"] == "Plan B"
    assert titles["title"]["changed"] is True


def test_history_page_lists_every_row(admin_client: Client, note: Note, superuser: Any) -> None:
    services.archive_item(owner=superuser, ref=ref(note), actor=Actor(source="admin"))
    response = admin_client.get(history_page_url(note))
    assert response.status_code == 200
    actions = [r["row"].action for r in response.context["item_history"]["rows"]]
    assert actions == ["archive", "update", "update", "create"]


def test_restore_button_restores_content_and_metadata_as_a_new_version(
    admin_client: Client, note: Note
) -> None:
    response = admin_client.post(version_url(note, 1, "restore"), {"confirm": "yes"}, follow=True)
    assert response.redirect_chain[-1][0] == change_url(note)
    assert "Restored version 1 as a new version." in texts(response)
    row = Note.objects.get(pk=note.pk)
    assert (row.title, row.content) == ("Plan", "one\ntwo\nthree\n")
    latest = history.get_version(note, 4)
    assert (latest.action, latest.source) == ("restore", "admin")


def test_restore_asks_for_confirmation_before_restoring(admin_client: Client, note: Note) -> None:
    page = admin_client.get(version_url(note, 1, "restore"))
    assert page.status_code == 200
    assert "Yes, restore version 1" in page.content.decode()
    unconfirmed = admin_client.post(version_url(note, 1, "restore"))
    assert unconfirmed.status_code == 200
    assert "Yes, restore version 1" in unconfirmed.content.decode()
    assert admin_client.delete(version_url(note, 1, "restore")).status_code == 405
    assert numbers(note) == [1, 2, 3]


def test_restore_without_a_csrf_token_is_refused(superuser: Any, note: Note) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(superuser)
    assert client.post(version_url(note, 1, "restore"), {"confirm": "yes"}).status_code == 403
    assert numbers(note) == [1, 2, 3]


def test_restoring_an_archived_prompts_old_version_keeps_it_archived(
    admin_client: Client, superuser: Any
) -> None:
    prompt = services.create_item(
        owner=superuser,
        model=Prompt,
        data={"name": "greet", "content": "Hi {{ who }}", "arguments": [{"name": "who"}]},
        actor=Actor(),
    )
    update(superuser, prompt, content="Hello {{ who }}!")
    services.archive_item(owner=superuser, ref=ref(prompt), actor=Actor())
    response = admin_client.post(version_url(prompt, 1, "restore"), {"confirm": "yes"}, follow=True)
    assert "Restored version 1 as a new version. It is still archived." in texts(response)
    row = Prompt.objects.get(pk=prompt.pk)
    assert row.content == "Hi {{ who }}"
    assert row.is_archived


def test_a_failed_restore_shows_the_services_message_and_changes_nothing(
    admin_client: Client, superuser: Any
) -> None:
    prompt = services.create_item(
        owner=superuser, model=Prompt, data={"name": "greet", "content": "Hi"}, actor=Actor()
    )
    update(superuser, prompt, name="hello")
    services.create_item(
        owner=superuser, model=Prompt, data={"name": "greet", "content": "Yo"}, actor=Actor()
    )
    response = admin_client.post(version_url(prompt, 1, "restore"), {"confirm": "yes"}, follow=True)
    assert response.redirect_chain[-1][0] == version_url(prompt, 1)
    assert any("was not restored" in t and "greet" in t for t in texts(response))
    assert Prompt.objects.get(pk=prompt.pk).name == "hello"
    assert numbers(prompt) == [1, 2]


def test_an_item_in_the_trash_shows_history_but_cannot_be_restored(
    admin_client: Client, note: Note, superuser: Any
) -> None:
    services.trash_item(owner=superuser, ref=ref(note), actor=Actor())
    response = admin_client.get(change_url(note))
    assert all(r["restore_url"] is None for r in response.context["item_history"]["rows"])
    assert admin_client.get(version_url(note, 1)).context["can_restore"] is False
    assert admin_client.post(version_url(note, 1, "restore"), {"confirm": "yes"}).status_code == 403
    assert numbers(note) == [1, 2, 3]


def test_another_staff_users_item_history_is_not_found(note: Note, other: Any) -> None:
    other.is_staff = True
    other.save()
    client = Client()
    client.force_login(other)
    assert client.get(version_url(note, 1)).status_code == 404
    assert client.get(history_page_url(note)).status_code == 404
    assert client.post(version_url(note, 1, "restore"), {"confirm": "yes"}).status_code == 404
    assert numbers(note) == [1, 2, 3]


def test_a_pruned_version_page_redirects_with_a_message(
    admin_client: Client, note: Note, settings: Any
) -> None:
    settings.TIDDLY_HISTORY_DAYS = 1
    history.item_versions(note).filter(version=1).update(
        created_at=timezone.now() - timedelta(days=5)
    )
    history.prune_item("note", note.pk)
    response = admin_client.get(version_url(note, 1), follow=True)
    assert response.redirect_chain[-1][0] == history_page_url(note)
    assert any("not in its history" in t for t in texts(response))
