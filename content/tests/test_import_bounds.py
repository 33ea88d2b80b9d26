"""The import report is bounded whatever the file holds, and hostile files fail cleanly (SPEC §14)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from content.models import Bookmark, Note, Tag
from content.portability.netscape import NetscapeEntry, parse_netscape
from content.tests.portability_support import upload

pytestmark = pytest.mark.django_db

HEAD = "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n"


def _netscape(body: str) -> str:
    return f"{HEAD}{body}</DL><p>\n"


def test_a_file_of_repeats_lists_the_first_thousand_skips_in_file_order_and_counts_all(
    api: Any, owner: Any
) -> None:
    line = '<DT><A HREF="https://example.com/same">Same</A>\n'
    response = upload(api, _netscape(line * 2500))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["created"]["bookmark"] == 1
    assert body["skipped_count"] == 2499
    assert len(body["skipped"]) == 1000
    assert [s["index"] for s in body["skipped"]] == list(range(1, 1001))
    assert Bookmark.objects.filter(owner=owner).count() == 1


def test_skips_found_in_the_account_and_in_the_file_keep_file_order(api: Any, owner: Any) -> None:
    Bookmark.objects.create(owner=owner, url="https://example.com/0")
    lines = "".join(f'<DT><A HREF="https://example.com/{n % 2}">t</A>\n' for n in range(1200))
    body = upload(api, _netscape(lines)).json()
    # Entry 0 exists in the account, entry 1 is created, every later entry repeats one of them.
    assert body["created"]["bookmark"] == 1
    assert body["skipped_count"] == 1199
    assert [s["index"] for s in body["skipped"]][:3] == [0, 2, 3]
    assert len(body["skipped"]) == 1000


def test_skipped_titles_and_urls_are_cut_to_200_characters(api: Any) -> None:
    url = "https://example.com/" + "x" * 1400
    title = "t" * 300
    line = f'<DT><A HREF="{url}">{title}</A>\n'
    body = upload(api, _netscape(line * 2)).json()
    skip = body["skipped"][0]
    assert len(skip["url"]) == 200
    assert skip["url"].endswith("…")
    assert skip["url"].startswith("https://example.com/xxx")
    assert len(skip["title"]) == 200


def test_warnings_are_capped_at_100_with_a_count(api: Any) -> None:
    body = upload(api, _netscape("</UL>\n" * 150 + '<DT><A HREF="https://a.example/">a</A>\n'))
    payload = body.json()
    assert body.status_code == 200, payload
    assert payload["errors_count"] == 150
    assert len(payload["errors"]) == 100
    assert "stray </UL>" in payload["errors"][0]


def test_an_entry_with_more_than_100_tags_is_skipped_without_splitting_them_all(
    api: Any, owner: Any
) -> None:
    tags = ",".join(f"t{n}" for n in range(50_000))
    lines = f'<DT><A HREF="https://a.example/" TAGS="{tags}">many</A>\n'
    lines += '<DT><A HREF="https://b.example/" TAGS="x,y">few</A>\n'
    body = upload(api, _netscape(lines)).json()
    assert body["created"]["bookmark"] == 1
    assert body["skipped_count"] == 1
    assert "more than 100 tags" in body["skipped"][0]["reason"]
    assert Bookmark.objects.filter(owner=owner).get().url == "https://b.example/"
    assert sorted(Tag.objects.filter(owner=owner).values_list("name", flat=True)) == ["x", "y"]


def test_a_reading_list_folder_nested_in_a_folder_is_a_tag() -> None:
    entries, _ = parse_netscape(
        _netscape(
            "<DT><H3>Reading List</H3>\n<DL><p>\n"
            '<DT><A HREF="https://top.example/">top</A>\n</DL><p>\n'
            "<DT><H3>Work</H3>\n<DL><p>\n<DT><H3>Favorites</H3>\n<DL><p>\n"
            '<DT><A HREF="https://nested.example/">nested</A>\n</DL><p>\n</DL><p>\n'
        )
    )
    top, nested = entries
    assert isinstance(top, NetscapeEntry)
    assert isinstance(nested, NetscapeEntry)
    assert top.folders == []
    assert nested.folders == ["Work", "Favorites"]


@pytest.mark.parametrize(
    "raw",
    [
        '{"format": "tiddly", "version": 1, "items": [{"type": "note", "title": "\\ud800"}]}',
        '{"format": "tiddly", "version": 1, "items": [{"type": "note", "\\udc00": "x"}]}',
        '{"format": "tiddly", "version": 1, "items": [{"type": "note", "title": "a\\ud83d"}]}',
    ],
)
def test_a_lone_surrogate_in_a_json_file_makes_it_malformed(api: Any, owner: Any, raw: str) -> None:
    response = upload(api, raw, name="export.json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_import"
    assert "surrogate" in body["message"]
    assert body["position"] == {"line": 1, "column": raw.index("\\u") + 1}
    assert not Bookmark.objects.filter(owner=owner).exists()


def test_a_surrogate_pair_and_an_escaped_backslash_are_fine(api: Any, owner: Any) -> None:
    items = [
        {"type": "note", "title": "smile 😀", "content": "a literal \\ud800 stays text"},
    ]
    raw = json.dumps({"format": "tiddly", "version": 1, "items": items})  # escapes the emoji
    assert "\\ud83d\\ude00" in raw
    response = upload(api, raw, name="export.json")
    assert response.status_code == 200, response.json()
    note = Note.objects.get(owner=owner)
    assert note.title == "smile 😀"
    assert note.content == "a literal \\ud800 stays text"
