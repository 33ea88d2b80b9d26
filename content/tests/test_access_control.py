"""Another owner's items are invisible (404, never 403) and every endpoint needs authentication.

Each case is checked both ways: the stranger gets 404 `not_found` and the database is unchanged,
then the same request by the item's owner succeeds — so the 404 comes from ownership, not from a
malformed request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.tests.factories import FACTORIES, PromptFactory, TagFactory
from content.tests.helpers import assert_error, db_state

pytestmark = pytest.mark.django_db

PAST = timedelta(hours=1)


@dataclass(frozen=True)
class Case:
    method: str
    url_name: str
    body: dict[str, Any] | None = None
    query: str = ""
    state: str = "active"  # the state the item must be in for the owner's request to succeed
    by_name: bool = False

    def url(self, item: Any) -> str:
        if self.by_name:
            return reverse(self.url_name, kwargs={"name": item.name}) + self.query
        return reverse(self.url_name, args=[item.pk]) + self.query


def _item_cases(kind: str) -> list[tuple[str, Case]]:
    cases = [
        Case("get", f"{kind}-detail"),
        Case("get", f"{kind}-detail", query="?start_line=1&end_line=1"),
        Case("patch", f"{kind}-detail", {"title": "hijacked"}),
        Case("delete", f"{kind}-detail"),
        Case("delete", f"{kind}-detail", query="?permanent=true"),
        Case("post", f"{kind}-archive"),
        Case("post", f"{kind}-unarchive", state="archived"),
        Case("post", f"{kind}-restore", state="deleted"),
        Case("post", f"{kind}-track-usage"),
        Case("get", f"{kind}-search", query="?q=Hello"),
        Case("patch", f"{kind}-str-replace", {"old_str": "Hello", "new_str": "Bye"}),
    ]
    if kind == "prompt":
        cases += [
            Case("post", "prompt-render", {"arguments": {"who": "x"}}),
            Case("get", "prompt-by-name", by_name=True),
            Case("patch", "prompt-by-name", {"title": "hijacked"}, by_name=True),
            Case(
                "patch",
                "prompt-str-replace-by-name",
                {"old_str": "Hello", "new_str": "Bye"},
                by_name=True,
            ),
        ]
    return [(kind, case) for case in cases]


ITEM_CASES = [pair for kind in FACTORIES for pair in _item_cases(kind)]


def _strangers_item(kind: str, other: Any, state: str) -> Any:
    past = timezone.now() - PAST
    extra = {"archived_at": past} if state == "archived" else {}
    extra |= {"deleted_at": past} if state == "deleted" else {}
    return FACTORIES[kind](owner=other, content="Hello {{ who }}!", tags=["secret"], **extra)


@pytest.mark.parametrize(
    ("kind", "case"), ITEM_CASES, ids=[f"{c.method}-{c.url_name}{c.query}" for _, c in ITEM_CASES]
)
def test_another_users_item_is_404_and_unchanged(
    api: Any, other_api: Any, other: Any, kind: str, case: Case
) -> None:
    item = _strangers_item(kind, other, case.state)
    before = db_state()
    response = getattr(api, case.method)(case.url(item), case.body, format="json")
    assert_error(response, 404, "not_found")
    assert db_state() == before
    control = getattr(other_api, case.method)(case.url(item), case.body, format="json")
    assert control.status_code < 300, control.content[:300]


def test_same_prompt_name_of_another_user_does_not_leak(api: Any, other: Any) -> None:
    # By-name access resolves names among the caller's prompts only.
    PromptFactory(owner=other, name="shared-name")
    assert_error(
        api.get(reverse("prompt-by-name", kwargs={"name": "shared-name"})), 404, "not_found"
    )


@pytest.mark.parametrize(
    ("method", "body"), [("patch", {"name": "renamed"}), ("delete", None)], ids=["rename", "delete"]
)
def test_another_users_tag_is_404_and_unchanged(
    api: Any, other_api: Any, other: Any, method: str, body: Any
) -> None:
    TagFactory(owner=other, name="theirs")
    before = db_state()
    url = reverse("tag-detail", kwargs={"name": "theirs"})
    assert_error(getattr(api, method)(url, body, format="json"), 404, "not_found")
    assert db_state() == before
    assert getattr(other_api, method)(url, body, format="json").status_code < 300


def test_renaming_my_tag_does_not_touch_a_strangers_tag_of_the_same_name(
    api: Any, owner: Any, other: Any
) -> None:
    TagFactory(owner=owner, name="same")
    theirs = TagFactory(owner=other, name="same")
    assert (
        api.patch(
            reverse("tag-detail", kwargs={"name": "same"}), {"name": "mine"}, format="json"
        ).status_code
        == 200
    )
    theirs.refresh_from_db()
    assert theirs.name == "same"


@pytest.mark.parametrize("view", ["active", "archived", "deleted"])
def test_lists_never_show_another_users_items(api: Any, other: Any, view: str) -> None:
    for kind in FACTORIES:
        _strangers_item(kind, other, view)
    for url_name in ("note-list", "bookmark-list", "prompt-list", "content-list"):
        body = api.get(reverse(url_name), {"view": view}).json()
        assert body["count"] == 0, url_name
        assert body["results"] == [], url_name
    assert api.get(reverse("tag-list"), {"include_inactive": "true"}).json() == []


# --- anonymous ----------------------------------------------------------------------------------

ANON_ITEM = "0190b8a4-0000-7000-8000-000000000000"


def _anonymous_requests() -> list[tuple[str, str]]:
    requests: list[tuple[str, str]] = []
    for kind in ("note", "bookmark", "prompt"):
        requests += [("get", reverse(f"{kind}-list")), ("post", reverse(f"{kind}-list"))]
        detail = reverse(f"{kind}-detail", args=[ANON_ITEM])
        requests += [("get", detail), ("patch", detail), ("delete", detail)]
        for action in ("archive", "unarchive", "restore", "track-usage"):
            requests.append(("post", reverse(f"{kind}-{action}", args=[ANON_ITEM])))
        requests.append(("get", reverse(f"{kind}-search", args=[ANON_ITEM]) + "?q=x"))
        requests.append(("patch", reverse(f"{kind}-str-replace", args=[ANON_ITEM])))
    by_name = reverse("prompt-by-name", kwargs={"name": "x"})
    requests += [
        ("post", reverse("prompt-render", args=[ANON_ITEM])),
        ("get", by_name),
        ("patch", by_name),
        ("patch", reverse("prompt-str-replace-by-name", kwargs={"name": "x"})),
        ("get", reverse("content-list")),
        ("get", reverse("tag-list")),
        ("patch", reverse("tag-detail", kwargs={"name": "x"})),
        ("delete", reverse("tag-detail", kwargs={"name": "x"})),
        ("get", reverse("token-list")),
        ("post", reverse("token-list")),
        ("patch", reverse("token-detail", args=[ANON_ITEM])),
        ("delete", reverse("token-detail", args=[ANON_ITEM])),
    ]
    return requests


ANON_REQUESTS = _anonymous_requests()


@pytest.mark.parametrize(
    ("method", "url"), ANON_REQUESTS, ids=[f"{m}-{u}" for m, u in ANON_REQUESTS]
)
def test_anonymous_requests_are_401_everywhere(
    anon: Any, owner: Any, method: str, url: str
) -> None:
    FACTORIES["note"](owner=owner)
    before = db_state()
    response = getattr(anon, method)(url, {"title": "x"}, format="json")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")
    assert db_state() == before


@pytest.mark.parametrize(("method", "url"), ANON_REQUESTS[:6])
def test_invalid_token_is_401_invalid_token_everywhere(method: str, url: str) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer tdly_wrong")
    assert_error(getattr(client, method)(url, {}, format="json"), 401, "invalid_token")
