"""/account/tokens/: a person without staff rights lists, creates and revokes their own API
tokens (SPEC §8)."""

from __future__ import annotations

import re
import uuid
from html import unescape
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tiddly.models import ApiToken, hash_token
from tiddly.scopes import ALL_SCOPES

pytestmark = pytest.mark.django_db
PAGE = "/account/tokens/"


@pytest.fixture
def person(db: None) -> Any:
    return get_user_model().objects.create_user(username="nina", password="pw-nina-123")


@pytest.fixture
def browser(person: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(person)
    return client


def _csrf(client: Client) -> str:
    page = client.get(PAGE)
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert match is not None
    return match.group(1)


def _ticked_scopes(html: str) -> list[str]:
    boxes = re.findall(r'<input type="checkbox" name="scopes" value="([^"]+)"[^>]*>', html)
    ticked = re.findall(r'<input type="checkbox" name="scopes" value="([^"]+)"[^>]* checked', html)
    assert boxes == list(ALL_SCOPES)
    return ticked


def test_anonymous_visitors_go_to_the_login_page_and_come_back(person: Any) -> None:
    client = Client()
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"] == "/oauth/login?next=" + quote(PAGE)

    login = client.get(response["Location"])
    assert login.status_code == 200
    fields = dict(re.findall(r'name="(csrfmiddlewaretoken|next)" value="([^"]*)"', login.text))
    posted = client.post(
        response["Location"], {**fields, "username": "nina", "password": "pw-nina-123"}
    )
    assert posted.status_code == 302
    assert posted["Location"] == PAGE
    assert client.get(PAGE).status_code == 200


def test_a_person_without_staff_rights_creates_a_token_shown_once(
    browser: Client, person: Any
) -> None:
    assert not person.is_staff
    page = browser.get(PAGE)
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    assert _ticked_scopes(page.content.decode()) == list(ALL_SCOPES)

    response = browser.post(
        PAGE,
        {
            "csrfmiddlewaretoken": _csrf(browser),
            "name": " laptop ",
            "scopes": ["content:read", "prompts:read"],
            "expires_in_days": "30",
        },
    )

    assert response.status_code == 201
    html = response.content.decode()
    shown = re.search(r'id="tiddly-token"[^>]*value="([^"]+)"', html)
    assert shown is not None
    plaintext = unescape(shown.group(1))
    assert plaintext.startswith("tdly_")
    token = ApiToken.objects.get()
    assert (token.owner, token.name, token.token_hash) == (person, "laptop", hash_token(plaintext))
    assert token.scopes == "content:read prompts:read"
    assert token.expires_at is not None
    assert "no-store" in response["Cache-Control"]
    # Shown once: the list shows the prefix, never the plaintext again.
    again = browser.get(PAGE).content.decode()
    assert plaintext not in again
    assert token.prefix in again
    # And it works, with its scopes.
    api = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert api.get("/api/notes/").status_code == 200
    assert api.post("/api/notes/", {"title": "x"}, "application/json").status_code == 403


def test_saving_the_form_as_is_gives_all_four_scopes(browser: Client) -> None:
    response = browser.post(
        PAGE,
        {"csrfmiddlewaretoken": _csrf(browser), "name": "default", "scopes": list(ALL_SCOPES)},
    )
    assert response.status_code == 201
    assert ApiToken.objects.get().scopes == " ".join(ALL_SCOPES)


@pytest.mark.parametrize(
    "data",
    [
        {"name": "", "scopes": ["content:read"]},
        {"name": "x" * 101, "scopes": ["content:read"]},
        {"name": "n", "scopes": []},
        {"name": "n", "scopes": ["admin"]},
        {"name": "n", "scopes": ["content:read"], "expires_in_days": "0"},
        {"name": "n", "scopes": ["content:read"], "expires_in_days": "soon"},
    ],
    ids=["no-name", "long-name", "no-scope", "unknown-scope", "zero-days", "not-a-number"],
)
def test_a_bad_form_is_400_and_creates_nothing(browser: Client, data: dict[str, Any]) -> None:
    response = browser.post(PAGE, {"csrfmiddlewaretoken": _csrf(browser), **data})
    assert response.status_code == 400
    assert 'class="errorlist' in response.content.decode()
    assert not ApiToken.objects.exists()


def test_posting_without_csrf_is_refused(browser: Client) -> None:
    response = browser.post(PAGE, {"name": "n", "scopes": ["content:read"]})
    assert response.status_code == 403
    assert not ApiToken.objects.exists()


def test_the_list_shows_only_your_own_tokens(browser: Client, person: Any, other: Any) -> None:
    ApiToken.issue(owner=person, name="mine")
    ApiToken.issue(owner=other, name="theirs")
    html = browser.get(PAGE).content.decode()
    assert "mine" in html
    assert "theirs" not in html


def test_revoking_your_token_stops_it(browser: Client, person: Any) -> None:
    token, plaintext = ApiToken.issue(owner=person, name="gone")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert api.get("/api/notes/").status_code == 200

    response = browser.post(f"{PAGE}{token.pk}/revoke/", {"csrfmiddlewaretoken": _csrf(browser)})

    assert response.status_code == 302
    assert response["Location"] == PAGE
    assert not ApiToken.objects.exists()
    assert api.get("/api/notes/").status_code == 401


@pytest.mark.parametrize("which", ["other", "unknown", "malformed"])
def test_another_users_or_an_unknown_token_is_404(browser: Client, other: Any, which: str) -> None:
    theirs, _ = ApiToken.issue(owner=other, name="theirs")
    token_id = {"other": str(theirs.pk), "unknown": str(uuid.uuid4()), "malformed": "nope"}[which]
    response = browser.post(f"{PAGE}{token_id}/revoke/", {"csrfmiddlewaretoken": _csrf(browser)})
    assert response.status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_revoke_is_post_only(browser: Client, person: Any) -> None:
    token, _ = ApiToken.issue(owner=person, name="kept")
    assert browser.get(f"{PAGE}{token.pk}/revoke/").status_code == 405
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_the_landing_page_links_to_it(client: Client) -> None:
    assert 'href="/account/tokens/"' in client.get("/").content.decode()
