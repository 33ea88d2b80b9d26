"""The chunker (SPEC §16): pure, linear, chunks partition the content with exact line ranges."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from content.text.chunks import MAX_CHARS, content_chunks, header_text, item_chunks
from content.text.lines import read_lines

line = st.one_of(st.just(""), st.just("# Heading"), st.text(alphabet="ab c\r", max_size=300))


@settings(max_examples=200, deadline=None)
@given(st.lists(line, max_size=80))
def test_chunks_partition_the_lines_and_ranges_feed_partial_read(lines: list[str]) -> None:
    content = "\n".join(lines)
    chunks = list(content_chunks(content, min_chars=100, max_chars=400))
    expected_line = 1
    for chunk in chunks:
        assert chunk.start_line is not None
        assert chunk.end_line is not None
        assert chunk.start_line >= expected_line
        # lines skipped between chunks are whitespace only (dropped chunks)
        skipped = (
            read_lines(content, expected_line, chunk.start_line - 1)
            if chunk.start_line > expected_line
            else None
        )
        assert skipped is None or not skipped.content.strip()
        window = read_lines(content, chunk.start_line, chunk.end_line)
        assert window is not None
        assert window.content == chunk.text
        assert content[chunk.start_char : chunk.start_char + len(chunk.text)] == chunk.text
        assert chunk.text.strip()
        expected_line = chunk.end_line + 1
    rest = content.split("\n")[expected_line - 1 :]
    assert not "\n".join(rest).strip()


def test_chunks_cut_at_paragraphs_and_headings_within_bounds() -> None:
    paragraph = ("word " * 60).strip()  # 299 characters
    content = "\n\n".join(f"## Part {i}\n{paragraph}\n{paragraph}" for i in range(40))
    chunks = list(content_chunks(content))
    assert len(chunks) > 5
    for chunk in chunks[:-1]:
        assert 1_000 <= len(chunk.text) <= MAX_CHARS
        assert chunk.text.startswith("## Part") or chunk.text.startswith("\n")  # a boundary


def test_a_single_huge_line_is_one_chunk_and_empty_content_none() -> None:
    assert [c.start_line for c in content_chunks("x" * 10_000)] == [1]
    assert list(content_chunks("")) == []
    assert list(content_chunks(None)) == []
    assert list(content_chunks("\n\n   \n")) == []


def test_header_chunk_holds_title_description_tags_and_extra() -> None:
    chunks = item_chunks(
        title="Kubernetes",
        description="node upkeep",
        tags=["ops", "k8s"],
        extra=["https://x.example", None],
        content="body",
    )
    assert chunks[0].field == "header"
    assert chunks[0].start_line is None
    assert chunks[0].text == "Kubernetes\nnode upkeep\nops k8s\nhttps://x.example"
    assert chunks[1].field == "content"
    assert (chunks[1].start_line, chunks[1].end_line) == (1, 1)
    assert header_text(title=None, description="", tags=[]) == ""


def test_ten_megabyte_note_is_cut_in_one_pass() -> None:
    content = "\n".join(f"line {i} of a very long note about many things" for i in range(200_000))
    chunks = list(content_chunks(content))
    assert chunks[0].start_line == 1
    assert chunks[-1].end_line == 200_000
    assert sum(len(c.text) + 1 for c in chunks) == len(content) + 1
