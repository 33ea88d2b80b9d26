"""The Netscape bookmark-file parser and writer (pure functions, no database)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from content.models import Bookmark
from content.portability.netscape import (
    NetscapeEntry,
    NetscapeError,
    parse_netscape,
    parse_timestamp,
    write_netscape,
)
from content.portability.records import ImportSkip

FIXTURES = Path(__file__).parent / "fixtures" / "netscape"


def _summary(name: str) -> list[tuple[Any, ...]]:
    entries, warnings = parse_netscape((FIXTURES / name).read_bytes())
    assert warnings == []
    out: list[tuple[Any, ...]] = []
    for e in entries:
        if isinstance(e, ImportSkip):
            out.append((e.index, "skip", e.url, e.reason.split(":")[0]))
        else:
            stamp = int(e.add_date.timestamp()) if e.add_date else None
            out.append((e.index, e.url, e.title, e.folders, e.tags, stamp, e.archived))
    return out


def test_chrome_export_folders_become_tags_except_bookmarks_bar_and_other_bookmarks() -> None:
    assert _summary("chrome.html") == [
        (0, "https://www.python.org/", "Welcome to Python.org", [], [], 1700000001, False),
        (
            1,
            "https://docs.djangoproject.com/en/5.2/",
            "Django documentation | Django & friends",
            ["Dev Tools"],
            [],
            1700000004,
            False,
        ),
        (
            2,
            "https://example.com/caf%C3%A9?a=1&b=2",
            "Crème brûlée — 日本語のタイトル",
            ["Dev Tools", "Café ☕"],
            [],
            1700000007,
            False,
        ),
        (3, "skip", 'javascript:alert("hi")', "javascript"),
        (4, "https://www.python.org/", "Python, again", [], [], 1700000011, False),
        (5, "skip", "chrome://settings/", "chrome"),
    ]


def test_firefox_export_reads_tags_descriptions_last_modified_and_skips_place_and_file() -> None:
    entries, _ = parse_netscape((FIXTURES / "firefox.html").read_bytes())
    by_index = {e.index: e for e in entries}
    assert isinstance(by_index[0], ImportSkip)
    assert by_index[0].url.startswith("place:")
    assert isinstance(by_index[6], ImportSkip)
    assert by_index[6].url.startswith("file:")
    mdn = by_index[2]
    assert isinstance(mdn, NetscapeEntry)
    assert mdn.tags == ["html", "Web Dev", "reference"]
    assert mdn.description == "The <html> reference & guides"
    assert mdn.last_modified == datetime.fromtimestamp(1690000020, tz=UTC)
    assert mdn.folders == []  # the Bookmarks Menu is the root, not a tag
    ete = by_index[4]
    assert isinstance(ete, NetscapeEntry)
    # The toolbar (PERSONAL_TOOLBAR_FOLDER) is a root; its folder description is not an entry's.
    assert (ete.title, ete.folders, ete.tags) == ("Été — Wikipédia", ["Recherche"], ["été"])
    assert ete.description == "Saison « chaude »"
    assert by_index[3].folders == []
    assert by_index[3].description is None
    assert by_index[7].folders == []  # type: ignore[union-attr]  # UNFILED_BOOKMARKS_FOLDER


def test_safari_export_without_dates_or_outer_list_keeps_nested_folders() -> None:
    assert _summary("safari.html") == [
        (0, "https://www.apple.com/", "Apple", [], [], None, False),
        (1, "https://www.zürich.com/de", "Zürich Tourismus", ["Reise & Urlaub"], [], None, False),
        (
            2,
            "https://example.ch/matterhorn",
            "Matterhorn \u2013 4478 m",
            ["Reise & Urlaub", "Gebirge"],
            [],
            None,
            False,
        ),
        (3, "https://www.apple.com/", "Apple (reading list copy)", [], [], None, False),
    ]


def test_edge_export_drops_favorites_bar_and_other_favorites() -> None:
    summary = _summary("edge.html")
    assert summary[1] == (
        1,
        "https://client-a.example.com/dashboard?tab=1&view=2",
        "Dashboard <prod>",
        ["Work", "Client A"],
        [],
        1710000007,
        False,
    )
    assert summary[2][3] == []
    assert summary[3][1] == "skip"
    assert summary[4][2] == "Ελληνικά"


def test_pocket_export_reads_time_added_tags_and_the_read_archive() -> None:
    assert _summary("pocket.html") == [
        (
            0,
            "https://example.com/article?utm_source=pocket&x=2",
            "An article & more",
            [],
            ["reading", "long read"],
            1600000000,
            False,
        ),
        (1, "https://ja.example.com/%E8%A8%98%E4%BA%8B", "日本語の記事", [], [], 1600000100, False),
        (2, "https://example.com/done", "Finished piece", [], ["done"], 1500000000, True),
        (
            3,
            "https://example.com/article?utm_source=pocket&x=2",
            "An article (archived copy)",
            [],
            [],
            1600000000,
            True,
        ),
    ]


def test_linkding_export_reads_notes_and_its_archived_pseudo_tag() -> None:
    entries, _ = parse_netscape((FIXTURES / "linkding.html").read_bytes())
    first, japanese, old, again = entries
    assert isinstance(first, NetscapeEntry)
    assert (
        first.description == "Self-hosted bookmark manager that is designed be to be minimal & fast"
    )
    assert first.notes == "Try the **Docker** image"
    assert japanese.tags == ["日本語", "Reading List"]  # type: ignore[union-attr]
    assert (old.title, old.tags, old.archived) == ('Old "archived" page', ["archive-me"], True)  # type: ignore[union-attr]
    assert again.url == first.url
    assert again.index == 3


def test_karakeep_export_reads_tags_and_the_note() -> None:
    summary = _summary("karakeep.html")
    assert summary[0][1:5] == (
        "https://karakeep.app/",
        "Karakeep \u2013 the bookmark everything app",
        [],
        ["tools", "self-hosting"],
    )
    assert summary[1][2] == "Über Umlaute"
    assert summary[3] == (3, "skip", "about:blank", "about")


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(b"<html><body><p>Just a page</p></body></html>", 1, id="not-a-bookmark-file"),
        pytest.param(b"", 1, id="empty"),
        pytest.param(b'{"format": "tiddly"}', 1, id="json"),
    ],
)
def test_a_file_without_doctype_lists_or_pocket_links_is_not_a_bookmark_file(
    data: bytes, line: int
) -> None:
    with pytest.raises(NetscapeError, match="not a bookmark file") as info:
        parse_netscape(data)
    assert (info.value.line, info.value.column) == (line, 1)


def test_a_truncated_file_names_the_open_folder_and_the_end_position() -> None:
    whole = (FIXTURES / "chrome.html").read_bytes()
    cut = whole[: whole.index("Crème".encode())]
    with pytest.raises(NetscapeError, match="folder 'Café ☕' opened on line 16") as info:
        parse_netscape(cut)
    assert info.value.line == cut.count(b"\n") + 1


def test_binary_garbage_and_non_utf8_bytes_are_malformed_with_their_position() -> None:
    with pytest.raises(NetscapeError, match="binary") as info:
        parse_netscape(b"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n  \x00\x01\x02")
    assert (info.value.line, info.value.column) == (3, 3)
    with pytest.raises(NetscapeError, match="not UTF-8") as info:
        parse_netscape(b"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT>\xff\xfe")
    assert info.value.line == 3


def test_timestamps_in_seconds_milliseconds_and_microseconds_and_garbage() -> None:
    expected = datetime.fromtimestamp(1700000000, tz=UTC)
    assert parse_timestamp("1700000000") == expected
    assert parse_timestamp("1700000000000") == expected
    assert parse_timestamp("1700000000000000") == expected
    assert parse_timestamp("soon") is None
    assert parse_timestamp("0") is None
    assert parse_timestamp("-5") is None


def _bookmark(**values: Any) -> Any:
    tags = values.pop("tags", [])
    stamp = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    defaults = {"description": None, "created_at": stamp, "updated_at": stamp}
    # An unsaved Bookmark: the writer names untitled ones by the one display title (SPEC §9).
    bookmark = Bookmark(**{**defaults, **values})
    bookmark.prefetched_tag_names = tags
    return bookmark


def test_the_writer_escapes_everything_and_its_output_parses_back() -> None:
    bookmarks = [
        _bookmark(
            url='https://example.com/?a=1&b="2"',
            title="<Tom & Jerry> — ünïcode",
            description="Line & <b>bold</b>",
            tags=["cartoons", "a-b"],
        ),
        _bookmark(url="https://example.org/", title=None),
    ]
    document = "".join(write_netscape(bookmarks))
    assert document.startswith("<!DOCTYPE NETSCAPE-Bookmark-file-1>\n")
    assert '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">' in document
    assert "<DL><p>" in document
    assert document.endswith("</DL><p>\n")
    assert 'ADD_DATE="1714564800" LAST_MODIFIED="1714564800" TAGS="a-b,cartoons"' in document
    assert "&lt;b&gt;bold&lt;/b&gt;" in document
    entries, _ = parse_netscape(document)
    first, second = entries
    assert isinstance(first, NetscapeEntry)
    assert isinstance(second, NetscapeEntry)
    assert (first.url, first.title, first.description, first.tags) == (
        'https://example.com/?a=1&b="2"',
        "<Tom & Jerry> — ünïcode",
        "Line & <b>bold</b>",
        ["a-b", "cartoons"],
    )
    assert first.add_date == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert (second.title, second.description) == ("example.org", None)
