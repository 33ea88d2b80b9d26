from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from content.history.codec import (
    MAX_DIFF_MIDDLE,
    apply_patch,
    make_patch,
    patch_size,
    span_patch,
)

# A small alphabet makes shared prefixes, suffixes and middles likely; the full one
# exercises unicode (astral characters, combining marks, \r\n) byte-for-byte.
small_text = st.text(alphabet="ab\r\n é😀", max_size=60)
any_text = st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=200)
texts = st.one_of(small_text, any_text)


@st.composite
def span_edits(draw: st.DrawFn, text: str) -> tuple[int, int, str]:
    """(start, end, replacement) of an edit to ``text``."""
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    return start, end, draw(texts)


def apply_edit(text: str, start: int, end: int, replacement: str) -> str:
    return text[:start] + replacement + text[end:]


def edit_patch(old: str, start: int, end: int, replacement: str) -> str:
    return span_patch(start=start, new_len=len(replacement), old_text=old[start:end])


def document(lines: int = 20_000, width: int = 49, seed: int = 0) -> str:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz     "
    return "".join("".join(rng.choices(alphabet, k=width)) + "\n" for _ in range(lines))


# --------------------------------------------------------------------------- round trips


@given(new=texts, old=texts)
def test_make_patch_restores_old_from_new_for_any_pair(new: str, old: str) -> None:
    assert apply_patch(new, make_patch(new, old)) == old


@given(data=st.data(), old=texts)
def test_make_patch_restores_old_after_a_local_edit(data: st.DataObject, old: str) -> None:
    new = apply_edit(old, *data.draw(span_edits(old)))
    assert apply_patch(new, make_patch(new, old)) == old


@given(data=st.data(), old=texts)
def test_span_patch_restores_old_after_a_single_span_edit(data: st.DataObject, old: str) -> None:
    start, end, replacement = data.draw(span_edits(old))
    new = apply_edit(old, start, end, replacement)
    assert apply_patch(new, edit_patch(old, start, end, replacement)) == old


@settings(max_examples=50)
@given(data=st.data(), first=texts, steps=st.integers(1, 12))
def test_chain_of_edits_reconstructs_every_version_newest_to_oldest(
    data: st.DataObject, first: str, steps: int
) -> None:
    versions, patches = [first], []
    for _ in range(steps):
        old = versions[-1]
        if data.draw(st.booleans()):
            start, end, replacement = data.draw(span_edits(old))
            new = apply_edit(old, start, end, replacement)
            patches.append(edit_patch(old, start, end, replacement))
        else:
            new = data.draw(texts)
            patches.append(make_patch(new, old))
        versions.append(new)

    content = versions[-1]
    for index in range(len(patches) - 1, -1, -1):
        content = apply_patch(content, patches[index])
        assert content == versions[index]


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.integers(0, 300_000) | st.sampled_from([255, 256, 257, 65_536, 131_071]),
    suffix=st.integers(0, 300_000) | st.sampled_from([255, 256, 257, 65_536, 131_071]),
    new_mid=st.text(alphabet="xy", max_size=5),
    old_mid=st.text(alphabet="xy", min_size=1, max_size=5),
)
def test_long_common_prefix_and_suffix_are_trimmed_exactly(
    prefix: int, suffix: int, new_mid: str, old_mid: str
) -> None:
    # Lengths straddle the chunk sizes of the prefix/suffix scan.
    new = "p" * prefix + new_mid + "s" * suffix
    old = "p" * prefix + old_mid + "s" * suffix
    patch = make_patch(new, old)
    assert apply_patch(new, patch) == old
    assert patch_size(patch) < 60


def test_identical_texts_give_an_empty_patch() -> None:
    assert make_patch("same", "same") == "[]"
    assert apply_patch("same", "[]") == "same"


def test_ops_are_positions_in_the_new_text() -> None:
    assert make_patch("aXc", "abc") == '[[1,1,"b"]]'
    assert span_patch(start=1, new_len=1, old_text="b") == '[[1,1,"b"]]'


def test_large_middles_become_a_single_replace_op() -> None:
    new, old = "x" * MAX_DIFF_MIDDLE, "y" * MAX_DIFF_MIDDLE
    patch = make_patch(new, old)
    assert patch == f'[[0,{MAX_DIFF_MIDDLE},"{old}"]]'
    assert apply_patch(new, patch) == old


def test_crlf_and_unicode_survive_exactly() -> None:
    old, new = "line 1\r\nzwei 😀\r\ne\u0301\n", "line 1\nzwei 😃\r\n"
    assert apply_patch(new, make_patch(new, old)) == old


# --------------------------------------------------------------------------- sizes


def test_single_line_edit_in_a_large_document_gives_a_small_patch() -> None:
    old = document()
    line_start = old.index("\n", 500_000) + 1
    new = apply_edit(old, line_start, line_start + 10, "edited!")
    assert patch_size(make_patch(new, old)) < 200
    patch = edit_patch(old, line_start, line_start + 10, "edited!")
    assert patch_size(patch) < 200


def test_hundred_single_line_span_edits_of_a_million_chars_stay_under_100_kb() -> None:
    rng = random.Random(1)
    text = document()
    assert len(text) == 1_000_000
    total = 0
    for _ in range(100):
        start = text.index("\n", rng.randrange(len(text) - 100)) + 1
        end = text.index("\n", start)
        replacement = "".join(rng.choices("xyz ", k=rng.randint(0, 80)))
        total += patch_size(edit_patch(text, start, end, replacement))
        text = apply_edit(text, start, end, replacement)
    assert total < 100_000


def test_patch_size_counts_utf8_bytes() -> None:
    assert patch_size('[[0,0,"é"]]') == 12


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "patch",
    [
        "",
        "not json",
        "{}",
        '"text"',
        "[1]",
        "[[0,0]]",
        '[[0,0,"a","b"]]',
        '[[-1,0,"a"]]',
        '[[0,-1,"a"]]',
        "[[0,0,5]]",
        '[["0",0,"a"]]',
        '[[true,0,"a"]]',
        '[[0.5,0,"a"]]',
    ],
)
def test_malformed_patch_raises_value_error(patch: str) -> None:
    with pytest.raises(ValueError, match="malformed patch"):
        apply_patch("hello", patch)


@pytest.mark.parametrize(
    "patch",
    [
        '[[4,2,""]]',  # runs past the end
        '[[9,0,"x"]]',  # starts past the end
        '[[2,2,"x"],[3,0,"y"]]',  # overlapping ops
        '[[3,0,"x"],[1,0,"y"]]',  # out of order
    ],
)
def test_patch_that_does_not_fit_the_text_raises_value_error(patch: str) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        apply_patch("hello", patch)


def test_span_patch_rejects_negative_positions() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        span_patch(start=-1, new_len=0, old_text="x")
