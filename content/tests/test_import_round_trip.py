"""Import that round-trips (SPEC §14, round 4): your own export imported again creates nothing
new; each match says how it was found; renamed tags are listed; nested folders keep their tag."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from content.models import Bookmark, Note
from content.tests.portability_support import download, upload
from prompts.models import Prompt

pytestmark = pytest.mark.django_db


def _seed(api: Any) -> None:
    for body in (
        {"url": "https://example.com/a", "title": "A", "capture": False},
        {"url": "https://example.com/b", "title": "B", "tags": ["read"], "capture": False},
    ):
        assert api.post("/api/bookmarks/", body, format="json").status_code == 201
    for title in ("Plans", "Plans", "Ideas"):  # two notes may share a title
        assert (
            api.post("/api/notes/", {"title": title, "content": "x"}, format="json").status_code
            == 201
        )
    prompt = {"name": "greet", "content": "Hi {{ who }}", "arguments": [{"name": "who"}]}
    assert api.post("/api/prompts/", prompt, format="json").status_code == 201


def _counts(owner: Any) -> tuple[int, int, int]:
    return tuple(m.objects.filter(owner=owner).count() for m in (Bookmark, Note, Prompt))  # type: ignore[return-value]


def _export(api: Any) -> bytes:
    response = download(api, format="json")
    assert response.status_code == 200
    return bytes(response.body)


def test_reimporting_your_own_export_with_update_creates_nothing(api: Any, owner: Any) -> None:
    _seed(api)
    exported = _export(api)
    response = upload(api, exported, "tiddly.json", on_conflict="update")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["created"] == {"bookmark": 0, "note": 0, "prompt": 0}
    assert body["updated"] == {"bookmark": 2, "note": 3, "prompt": 1}
    assert _counts(owner) == (2, 3, 1)
    by_type = {(m["type"], m["matched_by"]) for m in body["matched"]}
    assert by_type == {("bookmark", "url"), ("note", "id"), ("prompt", "id")}
    assert body["matched_count"] == 6
    assert {m["action"] for m in body["matched"]} == {"updated"}
    ids = {str(pk) for pk in Note.objects.filter(owner=owner).values_list("pk", flat=True)}
    assert {m["id"] for m in body["matched"] if m["type"] == "note"} == ids


def test_reimporting_your_own_export_with_skip_skips_every_entry(api: Any, owner: Any) -> None:
    _seed(api)
    response = upload(api, _export(api), "tiddly.json", on_conflict="skip")
    assert response.status_code == 200
    body = response.json()
    assert body["created"] == {"bookmark": 0, "note": 0, "prompt": 0}
    assert body["skipped_count"] == 6
    assert all("already exists" in s["reason"] for s in body["skipped"])
    assert {m["action"] for m in body["matched"]} == {"skipped"}
    assert _counts(owner) == (2, 3, 1)


def test_a_prompt_without_a_known_id_matches_by_name(api: Any, owner: Any) -> None:
    _seed(api)
    document = json.loads(_export(api))
    document["items"] = [i for i in document["items"] if i["type"] == "prompt"]
    document["items"][0]["id"] = str(uuid.uuid4())
    document["items"][0]["description"] = "from the file"
    body = upload(api, json.dumps(document), "t.json", on_conflict="update").json()
    assert body["matched"] == [
        {
            "index": 0,
            "type": "prompt",
            "id": str(Prompt.objects.get(owner=owner).pk),
            "matched_by": "name",
            "action": "updated",
        }
    ]
    assert Prompt.objects.get(owner=owner).description == "from the file"


def test_another_accounts_export_creates_its_notes_and_leaves_theirs_alone(
    api: Any, other_api: Any, owner: Any, other: Any
) -> None:
    _seed(other_api)
    body = upload(api, _export(other_api), "t.json", on_conflict="update").json()
    assert body["created"] == {"bookmark": 2, "note": 3, "prompt": 1}
    assert body["matched"] == []
    assert _counts(owner) == (2, 3, 1)
    assert _counts(other) == (2, 3, 1)
    assert not set(Note.objects.filter(owner=owner).values_list("pk", flat=True)) & set(
        Note.objects.filter(owner=other).values_list("pk", flat=True)
    )


TAGGED = """<!DOCTYPE NETSCAPE-Bookmark-file-1>
<DL><p>
<DT><A HREF="https://isocpp.org/" TAGS="C++,C,C#,Dev Tools,dev_tools">C++</A>
<DT><A HREF="https://example.com/c" TAGS="C!">C</A>
</DL><p>"""


def test_renamed_tags_are_listed_and_different_tags_stay_different(api: Any, owner: Any) -> None:
    body = upload(api, TAGGED).json()
    bookmark = Bookmark.objects.get(owner=owner, url="https://isocpp.org/")
    assert bookmark.tag_names() == ["c", "c-plus-plus", "c-sharp", "dev-tools"]
    assert Bookmark.objects.get(owner=owner, url="https://example.com/c").tag_names() == ["c-2"]
    assert body["tags_renamed"] == [
        {"from": "C++", "to": "c-plus-plus"},
        {"from": "C", "to": "c"},
        {"from": "C#", "to": "c-sharp"},
        {"from": "Dev Tools", "to": "dev-tools"},
        {"from": "dev_tools", "to": "dev-tools"},
        {"from": "C!", "to": "c-2"},
    ]
    assert body["tags_renamed_count"] == 6


CHROME_NESTED = """<!DOCTYPE NETSCAPE-Bookmark-file-1>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
    <DL><p>
        <DT><H3>Reading List</H3>
        <DL><p>
            <DT><A HREF="https://ja.wikipedia.org/wiki/%E6%9D%B1%E4%BA%AC%E9%83%BD">東京都 - Wikipedia</A>
        </DL><p>
    </DL><p>
    <DT><H3>Reading List</H3>
    <DL><p>
        <DT><A HREF="https://example.com/top">At the top, the browser's own</A>
    </DL><p>
</DL><p>"""


def test_a_nested_folder_named_like_a_browser_root_keeps_its_tag(api: Any, owner: Any) -> None:
    response = upload(api, CHROME_NESTED)
    assert response.status_code == 200
    assert response.json()["created"]["bookmark"] == 2
    tokyo = Bookmark.objects.get(owner=owner, title="東京都 - Wikipedia")
    assert tokyo.tag_names() == ["reading-list"]
    top = Bookmark.objects.get(owner=owner, url="https://example.com/top")
    assert top.tag_names() == []
