"""Public share pages (SPEC §17.4): the page, the .md view, headers, 404s, throttle, Save a copy."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from content.history import Actor
from content.models import Bookmark, HistoryAction, ItemVersion, Note, Share, token_digest
from content.queries import ItemRef
from content.services import create_item, sharing, trash_item
from prompts.models import Prompt

ACTOR = Actor(source="test")
HOSTILE = """# Title

<script>document.title = "pwned"</script>
<img src=x onerror="window.pwned = 1">
[click](javascript:alert(1)) and [ok](https://example.com/a)
<a href="javascript:alert(2)">raw</a>
"""


def _note(owner: Any, content: str = HOSTILE, **extra: Any) -> Note:
    data: Any = {"title": "Shared note", "description": "What I found", "content": content}
    return create_item(owner=owner, model=Note, data={**data, **extra}, actor=ACTOR)


def _share(owner: Any, item: Any) -> Share:
    ref = ItemRef(type(item), pk=item.pk)
    return sharing.share_item(owner=owner, ref=ref, origin="http://testserver", actor=ACTOR).share


def _csp(response: Any) -> str:
    return str(response["Content-Security-Policy"])


def test_the_page_renders_sanitised_html_with_strict_headers(owner: Any) -> None:
    share = _share(owner, _note(owner, tags=["reading"]))
    response = Client().get(f"/s/{share.token}")
    assert response.status_code == 200
    body = response.content.decode()
    assert "<h1>Title</h1>" in body
    assert "Shared note" in body
    assert "What I found" in body
    assert "reading" in body
    # Raw HTML comes out as text, never as markup; no javascript: URL survives.
    assert "<script>document.title" not in body
    assert "&lt;script&gt;" in body
    assert "<img src=" not in body.split('class="content"')[1]
    assert "javascript:" not in re.sub(r"&lt;.*?&gt;|\[click\]\(javascript:alert\(1\)\)", "", body)
    assert 'href="https://example.com/a"' in body
    assert "<script" not in body.replace("&lt;script", "")
    assert " style=" not in body
    assert "<style" not in body
    assert response["X-Robots-Tag"].startswith("noindex")
    assert response["Referrer-Policy"] == "no-referrer"
    csp = _csp(response)
    assert "script-src 'none'" in csp
    assert "default-src 'none'" in csp
    assert "unsafe-inline" not in csp


def test_markdown_view_is_the_raw_text(owner: Any) -> None:
    share = _share(owner, _note(owner))
    response = Client().get(f"/s/{share.token}.md")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content.decode() == HOSTILE
    assert response["X-Robots-Tag"].startswith("noindex")


def test_bookmark_page_shows_its_url(owner: Any) -> None:
    bookmark = create_item(
        owner=owner, model=Bookmark, data={"url": "https://example.org/x", "title": "B"},
        actor=ACTOR,
    )  # fmt: skip
    response = Client().get(f"/s/{_share(owner, bookmark).token}")
    assert 'href="https://example.org/x"' in response.content.decode()


def test_prompt_page_shows_template_and_arguments(owner: Any) -> None:
    prompt = create_item(
        owner=owner,
        model=Prompt,
        data={
            "name": "greet",
            "content": "Hello {{ who }} <b>bold</b>{{ mood }}",
            "arguments": [
                {"name": "who", "description": "Whom to greet", "required": True},
                {"name": "mood", "description": "How", "required": False},
            ],
        },
        actor=ACTOR,
    )
    body = Client().get(f"/s/{_share(owner, prompt).token}").content.decode()
    assert "Hello {{ who }} &lt;b&gt;bold&lt;/b&gt;{{ mood }}" in body
    assert "Whom to greet" in body
    assert "<code>mood</code>" in body
    assert "required" in body
    assert "optional" in body


def test_unknown_revoked_and_trashed_answer_the_same_404(owner: Any) -> None:
    note = _note(owner)
    share = _share(owner, note)
    client = Client()
    missing = client.get("/s/" + "A" * 43)
    rotated_old = share.token
    sharing.share_item(owner=owner, ref=ItemRef(Note, pk=note.pk), rotate=True, actor=ACTOR)
    revoked = client.get(f"/s/{rotated_old}")
    trashed_note = _note(owner, title="Other")
    trashed_share = _share(owner, trashed_note)
    trash_item(owner=owner, ref=ItemRef(Note, pk=trashed_note.pk), actor=ACTOR)
    trashed = client.get(f"/s/{trashed_share.token}")
    for response in (missing, revoked, trashed, client.get(f"/s/{trashed_share.token}.md")):
        assert response.status_code == 404
        assert response.content == missing.content
        assert response["X-Robots-Tag"].startswith("noindex")
        assert "unsafe-inline" not in _csp(response)


def test_unshare_stops_the_link(owner: Any) -> None:
    note = _note(owner)
    share = _share(owner, note)
    sharing.unshare_item(owner=owner, ref=ItemRef(Note, pk=note.pk), actor=ACTOR)
    assert Client().get(f"/s/{share.token}").status_code == 404
    assert not Share.objects.exists()
    actions = list(
        ItemVersion.objects.filter(item_id=note.pk)
        .order_by("created_at")
        .values_list("action", flat=True)
    )
    assert actions == [HistoryAction.CREATE, HistoryAction.SHARE, HistoryAction.UNSHARE]


def test_tokens_are_256_bit_and_stored_with_their_digest(owner: Any) -> None:
    share = _share(owner, _note(owner))
    assert len(share.token) >= 43  # 32 bytes in URL-safe base64
    assert share.token_hash == token_digest(share.token)


def test_throttled_per_client_ip(owner: Any, settings: Any) -> None:
    settings.TIDDLY_SHARE_THROTTLE_PER_MINUTE = 3
    share = _share(owner, _note(owner))
    client = Client(REMOTE_ADDR="203.0.113.9")
    codes = [client.get(f"/s/{share.token}").status_code for _ in range(3)]
    codes.append(client.get("/s/" + "B" * 43).status_code)
    assert codes == [200, 200, 200, 429]
    assert int(client.get(f"/s/{share.token}")["Retry-After"]) >= 1
    # Another address has its own allowance.
    assert Client(REMOTE_ADDR="203.0.113.10").get(f"/s/{share.token}").status_code == 200


def test_save_a_copy_for_a_signed_in_visitor(owner: Any, other: Any) -> None:
    prompt = create_item(
        owner=owner, model=Prompt,
        data={"name": "greet", "title": "G", "content": "Hi {{ who }}", "tags": ["x"],
              "arguments": [{"name": "who", "description": "d", "required": True}]},
        actor=ACTOR,
    )  # fmt: skip
    token = _share(owner, prompt).token
    anonymous = Client()
    page = anonymous.get(f"/s/{token}").content.decode()
    assert "Save a copy" not in page
    visitor = Client(enforce_csrf_checks=True)
    visitor.force_login(other)
    page = visitor.get(f"/s/{token}").content.decode()
    assert "Save a copy" in page
    confirm = visitor.get(f"/s/{token}/copy")
    assert (
        confirm["Referrer-Policy"] == "same-origin"
    )  # a POST under no-referrer sends Origin: null
    page = confirm.content.decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf is not None
    # Without the CSRF token the form post is refused.
    assert visitor.post(f"/s/{token}/copy").status_code == 403
    response = visitor.post(f"/s/{token}/copy", {"csrfmiddlewaretoken": csrf.group(1)})
    assert response.status_code == 201
    copy = Prompt.objects.get(owner=other)
    assert (copy.name, copy.title, copy.content, copy.tag_names()) == (
        "greet", "G", "Hi {{ who }}", ["x"]
    )  # fmt: skip
    assert copy.arguments == prompt.arguments
    # The same name again -> 409 with a message, nothing written.
    again = visitor.post(f"/s/{token}/copy", {"csrfmiddlewaretoken": csrf.group(1)})
    assert again.status_code == 409
    assert "already exists" in again.content.decode()
    assert Prompt.objects.filter(owner=other).count() == 1


def test_save_a_copy_needs_a_sign_in(owner: Any) -> None:
    token = _share(owner, _note(owner)).token
    response = Client().post(f"/s/{token}/copy")
    assert response.status_code == 401
    assert not Note.objects.exclude(owner=owner).exists()


@pytest.mark.parametrize("rotate", [False, True])
def test_share_again_keeps_or_rotates_the_token(owner: Any, rotate: bool) -> None:
    note = _note(owner)
    first = _share(owner, note)
    outcome = sharing.share_item(
        owner=owner, ref=ItemRef(Note, pk=note.pk), rotate=rotate, actor=ACTOR
    )
    assert outcome.created is rotate
    assert (outcome.share.token != first.token) is rotate
    assert Share.objects.count() == 1


def test_the_owner_is_not_offered_a_copy_of_their_own_item(owner: Any) -> None:
    note = _note(owner)
    token = _share(owner, note).token
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    page = client.get(f"/s/{token}")
    assert page.status_code == 200
    assert "Save a copy" not in page.content.decode()
    confirm = client.get(f"/s/{token}/copy")
    assert confirm.status_code == 409
    assert "in your account already" in confirm.content.decode()
    assert "csrfmiddlewaretoken" not in confirm.content.decode()
    client = Client()  # no CSRF enforcement: the refusal is the view's, not the token check's
    client.force_login(owner)
    assert client.post(f"/s/{token}/copy").status_code == 409
    assert Note.objects.filter(owner=owner).count() == 1


def test_each_type_declares_whether_its_content_is_a_template() -> None:
    assert (Note.content_is_template, Bookmark.content_is_template) == (False, False)
    assert Prompt.content_is_template is True
