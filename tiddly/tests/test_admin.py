"""API tokens in the admin (SPEC §8, §9): issued with ApiToken.issue, plaintext shown once, the
hash never shown, and each staff user sees only their own tokens."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tiddly.models import ApiToken, hash_token
from tiddly.scopes import ALL_SCOPES

pytestmark = pytest.mark.django_db
ALL = {"scopes": list(ALL_SCOPES)}  # the add form's checkboxes start all ticked


def _url(name: str, *args: Any) -> str:
    return reverse(f"admin:tiddly_apitoken_{name}", args=args)


def test_adding_a_token_shows_the_plaintext_once(staff_client: Client, staff: Any) -> None:
    response = staff_client.post(
        _url("add"), {"name": "laptop", "expires_at_0": "", "expires_at_1": "", **ALL}
    )

    assert response.status_code == 200
    plaintext = response.context["plaintext"]
    assert plaintext.startswith("tdly_")
    assert plaintext in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get()
    assert (token.owner, token.name, token.token_hash) == (staff, "laptop", hash_token(plaintext))
    # Never again: not on the list, not on the token's page, not in a stored message.
    for page in (_url("changelist"), _url("change", token.pk)):
        html = staff_client.get(page).content.decode()
        assert plaintext not in html
        assert token.token_hash not in html
        assert token.prefix in html


def test_the_issued_token_authenticates_api_requests(staff_client: Client) -> None:
    response = staff_client.post(
        _url("add"), {"name": "cli", "expires_at_0": "", "expires_at_1": "", **ALL}
    )

    api = Client(headers={"Authorization": f"Bearer {response.context['plaintext']}"})
    assert api.get("/api/notes/").status_code == 200


def test_token_with_an_expiry_is_listed_with_its_status(staff_client: Client, staff: Any) -> None:
    ApiToken.issue(owner=staff, name="old", expires_at=timezone.now() - timedelta(days=1))
    ApiToken.issue(owner=staff, name="forever")

    expired = staff_client.get(_url("changelist") + "?status=expired")
    html = staff_client.get(_url("changelist")).content.decode()

    assert [t.name for t in expired.context["cl"].result_list] == ["old"]
    assert "valid, never expires" in html
    assert "expired 20" in html


def test_rename_keeps_the_secret(staff_client: Client, staff: Any) -> None:
    token, plaintext = ApiToken.issue(owner=staff, name="old name")

    response = staff_client.post(
        _url("change", token.pk),
        {"name": "new name", "expires_at_0": "", "expires_at_1": "", **ALL},
    )

    assert response.status_code == 302
    token.refresh_from_db()
    assert (token.name, token.token_hash) == ("new name", hash_token(plaintext))


def test_delete_revokes_the_token(staff_client: Client, staff: Any) -> None:
    token, plaintext = ApiToken.issue(owner=staff, name="gone")

    staff_client.post(
        _url("changelist"),
        {"action": "delete_selected", "_selected_action": [token.pk], "post": "yes"},
    )

    assert not ApiToken.objects.exists()
    api = Client(headers={"Authorization": f"Bearer {plaintext}"})
    assert api.get("/api/notes/").status_code == 401


def test_staff_user_sees_only_their_own_tokens(staff_client: Client, other: Any) -> None:
    theirs, _ = ApiToken.issue(owner=other, name="theirs")

    listed = staff_client.get(_url("changelist"))
    page = staff_client.get(_url("change", theirs.pk))

    assert list(listed.context["cl"].result_list) == []
    assert page.status_code == 302


def test_superuser_issues_a_token_for_another_user(admin_client: Client, staff: Any) -> None:
    form = admin_client.get(_url("add")).context["adminform"].form
    assert "owner" in form.fields

    response = admin_client.post(
        _url("add"),
        {"owner": staff.pk, "name": "for owner", "expires_at_0": "", "expires_at_1": "", **ALL},
    )

    assert response.status_code == 200
    assert ApiToken.objects.get().owner == staff


def test_token_pages_never_offer_the_hash_field(admin_client: Client, staff: Any) -> None:
    token, _ = ApiToken.issue(owner=staff, name="x")

    for page in (_url("add"), _url("change", token.pk)):
        response = admin_client.get(page)
        assert "token_hash" not in response.content.decode()


def _form_as_rendered(html: str) -> dict[str, Any]:
    """What a browser posts for the add form untouched: text inputs' values, ticked boxes."""
    data: dict[str, Any] = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]*)"', tag)
        if name is None or 'type="submit"' in tag:
            continue
        kind = re.search(r'type="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if kind and kind.group(1) == "checkbox":
            if " checked" in tag:
                data.setdefault(name.group(1), []).append(
                    unescape(value.group(1)) if value else "on"
                )
        else:
            data[name.group(1)] = unescape(value.group(1)) if value else ""
    return data


def test_the_add_form_starts_with_all_four_scopes_and_saves_as_is(
    staff_client: Client, staff: Any
) -> None:
    page = staff_client.get(_url("add"))
    assert page.status_code == 200
    form = _form_as_rendered(page.content.decode())
    assert form["scopes"] == list(ALL_SCOPES)

    response = staff_client.post(_url("add"), {**form, "name": "as is"})

    assert response.status_code == 200, response.context["adminform"].form.errors
    token = ApiToken.objects.get()
    assert token.scopes == " ".join(ALL_SCOPES)
    assert response.context["plaintext"].startswith("tdly_")
