"""The pure text-editing core (SPEC §4.1-4.3): examples first, then hypothesis properties."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from content.text import replace_levels, search
from content.text.lines import LineRangeError, LineWindow, count_lines, read_lines
from content.text.replace import (
    EXACT,
    INDENTATION_RELATIVE,
    MAX_REPORTED_MATCHES,
    NO_MATCH_SUGGESTION,
    WHITESPACE_NORMALIZED,
    MultipleMatches,
    NoMatch,
    Replacement,
    find_replacement,
)
from content.text.search import TextMatch, field_contains, search_text


def replace(text: str, old_str: str, new_str: str) -> tuple[str, Replacement]:
    replacement = find_replacement(text, old_str, new_str)
    return replacement.apply(text), replacement


# --- line counting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 1), ("a", 1), ("a\n", 2), ("a\nb\n", 3), ("a\r\nb", 2), ("\n\n", 3)],
)
def test_count_lines_counts_like_split_on_newline(text: str, expected: int) -> None:
    assert count_lines(text) == expected


# --- partial read -------------------------------------------------------------------------------


def test_read_lines_of_null_content_without_parameters_is_none() -> None:
    assert read_lines(None) is None


@pytest.mark.parametrize(("start", "end"), [(1, None), (None, 1), (1, 1)])
def test_read_lines_of_null_content_with_any_parameter_is_an_error(
    start: int | None, end: int | None
) -> None:
    with pytest.raises(LineRangeError, match=r"^Content is empty; cannot retrieve lines$"):
        read_lines(None, start, end)


def test_read_lines_without_parameters_returns_everything_not_partial() -> None:
    assert read_lines("a\nb\n") == LineWindow("a\nb\n", 3, 1, 3, False)


def test_read_lines_selects_lines_joined_without_trailing_newline() -> None:
    assert read_lines("one\ntwo\nthree\nfour", 2, 3) == LineWindow("two\nthree", 4, 2, 3, True)


def test_read_lines_defaults_the_missing_bound() -> None:
    assert read_lines("a\nb\nc", start_line=2) == LineWindow("b\nc", 3, 2, 3, True)
    assert read_lines("a\nb\nc", end_line=2) == LineWindow("a\nb", 3, 1, 2, True)


def test_read_lines_clamps_an_end_past_the_last_line() -> None:
    assert read_lines("a\nb", 2, 99) == LineWindow("b", 2, 2, 2, True)


def test_read_lines_of_empty_content_is_one_empty_line_and_partial_when_asked() -> None:
    assert read_lines("", 1) == LineWindow("", 1, 1, 1, True)
    assert read_lines("") == LineWindow("", 1, 1, 1, False)


def test_read_lines_returns_the_empty_last_line_after_a_trailing_newline() -> None:
    assert read_lines("a\nb\n", 3, 3) == LineWindow("", 3, 3, 3, True)


def test_read_lines_keeps_the_carriage_return_of_crlf_lines() -> None:
    assert read_lines("a\r\nb\r\n", 1, 1) == LineWindow("a\r", 3, 1, 1, True)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (0, None, "start_line must be >= 1"),
        (None, 0, "end_line must be >= 1"),
        (-3, 2, "start_line must be >= 1"),
        (10, None, "start_line (10) exceeds total lines (2)"),
        (10, 12, "start_line (10) exceeds total lines (2)"),
        (2, 1, "start_line (2) must be <= end_line (1)"),
    ],
)
def test_read_lines_rejects_an_invalid_range_with_a_message(
    start: int | None, end: int | None, message: str
) -> None:
    with pytest.raises(LineRangeError) as excinfo:
        read_lines("a\nb", start, end)
    assert str(excinfo.value) == message


def test_read_lines_finds_lines_deep_in_a_long_text() -> None:
    text = "\n".join(f"line {number}" for number in range(1, 200_001))
    window = read_lines(text, 150_000, 150_002)
    assert window == LineWindow(
        "line 150000\nline 150001\nline 150002", 200_000, 150_000, 150_002, True
    )


# --- within-item search -------------------------------------------------------------------------


def test_search_reports_start_line_and_two_lines_of_context_each_side() -> None:
    text = "l1\nl2\nl3 needle\nl4\nl5\nl6"
    assert search_text(text, "needle") == [TextMatch(3, "l1\nl2\nl3 needle\nl4\nl5")]


def test_search_context_is_clipped_to_the_document() -> None:
    text = "needle\nl2\nl3\nl4 needle"
    assert search_text(text, "needle", context_lines=1) == [
        TextMatch(1, "needle\nl2"),
        TextMatch(4, "l3\nl4 needle"),
    ]


def test_search_with_zero_context_lines_returns_just_the_matched_lines() -> None:
    assert search_text("a\nb x\nc", "x", context_lines=0) == [TextMatch(2, "b x")]


def test_search_multi_line_query_reports_its_start_and_context_to_its_last_line() -> None:
    text = "l1\nl2\nbegin\nend\nl5\nl6\nl7"
    assert search_text(text, "gin\nen", context_lines=1) == [TextMatch(3, "l2\nbegin\nend\nl5")]


def test_search_query_ending_in_a_newline_ends_on_the_next_line() -> None:
    assert search_text("a\nb\nc\nd", "b\n", context_lines=0) == [TextMatch(2, "b\nc")]


def test_search_is_case_insensitive_by_default() -> None:
    assert [match.line for match in search_text("Foo\nfoo\nFOO", "fOo")] == [1, 2, 3]


def test_search_can_be_case_sensitive() -> None:
    assert [m.line for m in search_text("Foo\nfoo\nFOO", "foo", case_sensitive=True)] == [2]


def test_search_finds_non_overlapping_occurrences_left_to_right() -> None:
    assert len(search_text("aaaa", "aa")) == 2
    assert len(search_text("aaa", "aa")) == 1


def test_search_reports_every_occurrence_on_one_line_separately() -> None:
    assert search_text("x\nab ab ab\ny", "ab", context_lines=0) == [TextMatch(2, "ab ab ab")] * 3


def test_search_treats_the_query_literally_never_as_a_regex() -> None:
    assert search_text("abc", "a.c") == []
    assert [m.line for m in search_text("x\nf(a[0]*)", "(a[0]*)")] == [2]


def test_search_without_a_match_is_an_empty_list() -> None:
    assert search_text("abc", "zzz") == []


def test_search_keeps_positions_right_when_lowercasing_changes_length() -> None:
    # "İ".lower() is two characters, so this exercises the offset-preserving fallback.
    text = "İstanbul\nfoo\nISTANBUL"
    assert search_text(text, "FOO", context_lines=0) == [TextMatch(2, "foo")]
    assert [m.line for m in search_text(text, "istanbul")] == [1, 3]


def test_search_context_on_a_huge_line_is_cut_around_the_match() -> None:
    text = "a" * 10_000 + "needle" + "b" * 10_000
    [match] = search_text(text, "needle")
    side = search.SEARCH_CONTEXT_CHARS
    assert match.context == "…" + "a" * side + "needle" + "b" * side + "…"


def test_search_rejects_an_empty_query() -> None:
    with pytest.raises(ValueError, match="query"):
        search_text("abc", "")


def test_field_contains_matches_case_insensitively_and_skips_null() -> None:
    assert field_contains("My Title", "title")
    assert not field_contains("My Title", "title", case_sensitive=True)
    assert not field_contains(None, "title")
    assert not field_contains("My Title", "other")


# --- str-replace: exact -------------------------------------------------------------------------


def test_str_replace_exact_unique_match_replaces_it_and_reports_its_line() -> None:
    result, replacement = replace("a\nb\nold text\nc", "old text", "new text")
    assert result == "a\nb\nnew text\nc"
    assert (replacement.match_type, replacement.line) == (EXACT, 3)


def test_str_replace_multi_line_old_str_can_change_the_line_count() -> None:
    result, _ = replace("a\nb\nc\nd", "b\nc", "x")
    assert result == "a\nx\nd"


def test_str_replace_with_empty_new_str_deletes_the_match() -> None:
    result, replacement = replace("keep\ndrop me\nkeep", "drop me\n", "")
    assert result == "keep\nkeep"
    assert replacement.new_text == ""


def test_str_replace_counts_overlapping_candidates_once() -> None:
    result, replacement = replace("aaa", "aa", "b")
    assert (result, replacement.start) == ("ba", 0)


def test_str_replace_prefers_an_exact_match_over_a_normalized_one() -> None:
    _, replacement = replace("foo  \nbar\nfoo\nbar", "foo\nbar", "x")
    assert (replacement.match_type, replacement.line) == (EXACT, 3)


def test_str_replace_with_two_matches_lists_both_lines_with_context() -> None:
    text = "l1\nl2\nl3 dup\nl4\nl5\nl6\nl7 dup\nl8"
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement(text, "dup", "x")
    assert excinfo.value.match_type == EXACT
    assert excinfo.value.total == 2
    assert excinfo.value.matches == [
        TextMatch(3, "l1\nl2\nl3 dup\nl4\nl5"),
        TextMatch(7, "l5\nl6\nl7 dup\nl8"),
    ]
    assert excinfo.value.suggestion == "Include more surrounding context to ensure uniqueness"


def test_str_replace_reports_at_most_twenty_matches_but_the_full_total() -> None:
    text = "\n".join(["dup"] * 25)
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement(text, "dup", "x")
    assert excinfo.value.total == 25
    assert len(excinfo.value.matches) == MAX_REPORTED_MATCHES
    assert [m.line for m in excinfo.value.matches] == list(range(1, 21))


def test_str_replace_rejects_an_empty_old_str() -> None:
    with pytest.raises(ValueError, match="old_str"):
        find_replacement("abc", "", "x")


def test_str_replace_where_new_str_equals_old_str_leaves_the_text_unchanged() -> None:
    result, _ = replace("a\nb", "b", "b")
    assert result == "a\nb"


# --- str-replace: whitespace_normalized ---------------------------------------------------------


def test_str_replace_matches_lf_old_str_in_crlf_content_and_keeps_the_line_ending() -> None:
    result, replacement = replace("a\r\nb\r\nc\r\n", "a\nb", "x\ny")
    assert replacement.match_type == WHITESPACE_NORMALIZED
    assert result == "x\ny\r\nc\r\n"


def test_str_replace_matches_crlf_old_str_in_lf_content() -> None:
    result, replacement = replace("a\nb\nc", "b\r\nc", "z")
    assert (result, replacement.match_type, replacement.line) == ("a\nz", WHITESPACE_NORMALIZED, 2)


def test_str_replace_ignores_trailing_whitespace_in_the_content() -> None:
    result, replacement = replace("hello  \nworld", "hello\nworld", "bye")
    assert (result, replacement.match_type) == ("bye", WHITESPACE_NORMALIZED)


def test_str_replace_ignores_trailing_whitespace_in_old_str() -> None:
    result, replacement = replace("x\nfoo = 1\nbar\n", "foo = 1   \nbar", "baz")
    assert (result, replacement.match_type, replacement.line) == (
        "x\nbaz\n",
        WHITESPACE_NORMALIZED,
        2,
    )


def test_str_replace_match_ending_at_a_line_end_consumes_its_trailing_whitespace() -> None:
    result, _ = replace("x = 1   \ny = 2", "x = 1\t", "x = 9")
    assert result == "x = 9\ny = 2"


def test_str_replace_consumed_trailing_whitespace_stops_before_the_crlf() -> None:
    result, _ = replace("x = 1  \r\ny = 2\r\n", "x = 1\t", "x = 9")
    assert result == "x = 9\r\ny = 2\r\n"


def test_str_replace_old_str_ending_in_the_next_lines_indentation_takes_that_indentation() -> None:
    result, _ = replace("if a:  \n    b()", "if a:\n    ", "if z:\n    ")
    assert result == "if z:\n    b()"


def test_str_replace_partial_line_normalized_match_replaces_only_matched_characters() -> None:
    result, replacement = replace("call(x)  # note\nnext", "call(x)\t", "call(y)")
    assert replacement.match_type == WHITESPACE_NORMALIZED
    assert result == "call(y)  # note\nnext"


def test_str_replace_normalized_multiple_matches_report_original_lines() -> None:
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement("x \ny\nother\nx\t\ny", "x\ny ", "z")
    assert excinfo.value.match_type == WHITESPACE_NORMALIZED
    assert [m.line for m in excinfo.value.matches] == [1, 4]
    assert excinfo.value.matches[1].context == "y\nother\nx\t\ny"


# --- str-replace: indentation_relative ----------------------------------------------------------

CLASS_TEXT = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"


def test_str_replace_matches_a_block_the_agent_stripped_of_indentation_and_reindents_new_str() -> (
    None
):
    result, replacement = replace(
        CLASS_TEXT, "def f(self):\n    return 1", "def f(self):\n    return 10\n\n    # done"
    )
    assert (replacement.match_type, replacement.line) == (INDENTATION_RELATIVE, 2)
    assert result == (
        "class A:\n    def f(self):\n        return 10\n\n        # done\n\n"
        "    def g(self):\n        return 2\n"
    )


def test_str_replace_matches_a_block_the_agent_indented_more_and_dedents_new_str() -> None:
    text = "def f():\n  return 1\n"
    result, replacement = replace(
        text, "    def f():\n      return 1", "    def f():\n      return 2"
    )
    assert replacement.match_type == INDENTATION_RELATIVE
    assert result == "def f():\n  return 2\n"


def test_str_replace_leaves_new_lines_indented_less_than_the_added_prefix_alone() -> None:
    text = "def f():\n  return 1\n"
    result, _ = replace(text, "    def f():\n      return 1", "    def f():\n      return 2\n# end")
    assert result == "def f():\n  return 2\n# end\n"


def test_str_replace_indentation_match_lets_blank_lines_differ_in_whitespace() -> None:
    result, replacement = replace("    a\n\n    b\nz", "a\n  \nb", "c\n\nd")
    assert replacement.match_type == INDENTATION_RELATIVE
    assert result == "    c\n\n    d\nz"


def test_str_replace_indentation_match_maps_a_changed_outer_prefix_such_as_tab_for_spaces() -> None:
    result, _ = replace("\tif x:\n\t    y()\n", "    if x:\n        y()", "    if x:\n        z()")
    assert result == "\tif x:\n\t    z()\n"


def test_str_replace_matches_a_block_at_two_spaces_where_the_text_has_four() -> None:
    text = "def f():\n    x = 1\n    y = 2\n"
    result, replacement = replace(text, "  x = 1\n  y = 2", "  x = 10\n  y = 20\n  z = 30")
    assert replacement.match_type == INDENTATION_RELATIVE
    assert result == "def f():\n    x = 10\n    y = 20\n    z = 30\n"


def test_str_replace_does_not_rescale_nested_indentation_widths() -> None:
    # Two spaces per level where the text has four is a ratio, not one shift: no match.
    with pytest.raises(NoMatch):
        find_replacement("def f():\n    if x:\n        y()\n", "def f():\n  if x:\n    y()", "z")


def test_str_replace_indentation_match_needs_one_uniform_change() -> None:
    with pytest.raises(NoMatch):
        find_replacement("    a\n        b\n", "a\nb", "x")


def test_str_replace_indentation_match_with_trailing_newline_includes_the_line_break() -> None:
    result, _ = replace("  a\n  b\nc", "a\nb\n", "x\n")
    assert result == "  x\nc"


def test_str_replace_indentation_match_in_crlf_content_keeps_the_final_line_ending() -> None:
    result, replacement = replace("    a\r\n    b\r\nc", "a\nb", "x\ny")
    assert replacement.match_type == INDENTATION_RELATIVE
    assert result == "    x\n    y\r\nc"


def test_str_replace_indentation_relative_with_two_matches_lists_both() -> None:
    text = "  a\n  b\nmid\n    a\n    b"
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement(text, "a\nb", "x")
    assert excinfo.value.match_type == INDENTATION_RELATIVE
    assert (excinfo.value.total, [m.line for m in excinfo.value.matches]) == (2, [1, 4])


def test_str_replace_indentation_search_stays_correct_on_periodic_blocks() -> None:
    # Identical lines make a candidate on every line: the search switches to its token scan.
    text = "\n".join(["x"] * 5000)
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement(text, "\n".join(["  x"] * 1000), "y")
    assert (excinfo.value.total, [m.line for m in excinfo.value.matches[:3]]) == (
        5,
        [1, 1001, 2001],
    )
    with pytest.raises(NoMatch):
        find_replacement(text, "  x\n" + "\n".join(["x"] * 999), "y")


def test_str_replace_indentation_token_scan_finds_the_one_block_that_fits() -> None:
    text = "\n".join(["  x"] * 3000 + ["  x", "    x", "  x"])
    old = "x\n  x\nx"
    result, replacement = replace(text, old, "z\n  z")
    assert (replacement.match_type, replacement.line) == (INDENTATION_RELATIVE, 3001)
    assert result.endswith("  x\n  z\n    z")


# --- str-replace: no match ----------------------------------------------------------------------


@pytest.mark.parametrize("old_str", ["   ", "\n\n\n", " \t\n  ", "\r\n", "\t \n"])
def test_str_replace_whitespace_only_old_str_without_exact_match_is_no_match(old_str: str) -> None:
    text = "a\n\nb \t\n\tc"
    with pytest.raises(NoMatch) as excinfo:
        find_replacement(text, old_str, "x")
    assert excinfo.value.suggestion == NO_MATCH_SUGGESTION


def test_str_replace_whitespace_only_old_str_still_matches_exactly() -> None:
    result, _ = replace("a   b", "   ", "_")
    assert result == "a_b"


def test_str_replace_no_match_names_a_clearly_close_line() -> None:
    text = "def f():\n    x = 1\n    return foo(bar)\n"
    with pytest.raises(NoMatch) as excinfo:
        find_replacement(text, "return foo(baz)", "y")
    error = excinfo.value
    assert str(error) == "The specified text was not found in the content"
    assert (error.closest_line, error.closest_text) == (3, "    return foo(bar)")
    assert error.suggestion == NO_MATCH_SUGGESTION + ' Closest line (line 3): "    return foo(bar)"'


def test_str_replace_no_match_uses_the_first_non_blank_line_of_old_str() -> None:
    with pytest.raises(NoMatch) as excinfo:
        find_replacement("alpha\nbeta gamma\ndelta", "\n  beta gamme\nzzz", "y")
    assert excinfo.value.closest_line == 2


def test_str_replace_no_match_without_a_close_line_gives_the_plain_suggestion() -> None:
    with pytest.raises(NoMatch) as excinfo:
        find_replacement("alpha\nbeta\n", "something else entirely", "y")
    assert (excinfo.value.suggestion, excinfo.value.closest_line) == (NO_MATCH_SUGGESTION, None)


def test_str_replace_no_match_skips_the_hint_for_a_very_short_first_line() -> None:
    with pytest.raises(NoMatch) as excinfo:
        find_replacement("abc\nxyz", "abd", "y")
    assert excinfo.value.closest_line is None


def test_str_replace_no_match_truncates_a_long_closest_line() -> None:
    long_line = "word " * 100
    with pytest.raises(NoMatch) as excinfo:
        find_replacement(long_line, long_line.strip() + "!", "y")
    assert excinfo.value.closest_text == long_line[:200] + "…"


def test_str_replace_no_match_compares_only_the_beginning_of_huge_lines() -> None:
    # A full fuzzy ratio of two near-identical 300 KB lines would take minutes.
    line = "0123456789" * 30_000
    with pytest.raises(NoMatch) as excinfo:
        find_replacement(line, line[:-1] + "!", "y")
    assert excinfo.value.closest_line == 1
    assert excinfo.value.closest_text == line[:200] + "…"


def test_str_replace_on_empty_content_is_no_match() -> None:
    with pytest.raises(NoMatch):
        find_replacement("", "anything", "y")


# --- properties ---------------------------------------------------------------------------------

WORDS = st.text(alphabet="abcdef(): ", min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=150)
@given(text=st.text(alphabet="abcde \n\t\r", max_size=60), data=st.data(), new=st.text(max_size=8))
def test_property_unique_exact_match_replaces_like_str_replace(
    text: str, data: st.DataObject, new: str
) -> None:
    start = data.draw(st.integers(0, max(len(text) - 1, 0)))
    end = data.draw(st.integers(start + 1, max(len(text), start + 1)))
    old = text[start:end]
    assume(old and text.count(old) == 1)
    replacement = find_replacement(text, old, new)
    assert replacement.match_type == EXACT
    assert replacement.apply(text) == text.replace(old, new, 1)


def _normalize(text: str) -> str:
    return "\n".join(line.rstrip(" \t\r") for line in text.split("\n"))


TRAILING = st.sampled_from(["", " ", "\t", "  ", "\r", " \r", "\t "])


@settings(max_examples=150)
@given(
    contents=st.lists(WORDS, min_size=2, max_size=7),
    data=st.data(),
    new=st.text(alphabet="xy \n", max_size=6),
)
def test_property_whitespace_normalized_match_never_touches_other_lines(
    contents: list[str], data: st.DataObject, new: str
) -> None:
    text = "\n".join(content + data.draw(TRAILING) for content in contents)
    first = data.draw(st.integers(0, len(contents) - 1))
    last = data.draw(st.integers(first, len(contents) - 1))
    old = "\n".join(content + data.draw(TRAILING) for content in contents[first : last + 1])
    old += data.draw(st.sampled_from(["", "\n"])) if last + 1 < len(contents) else ""
    try:
        replacement = find_replacement(text, old, new)
    except MultipleMatches:
        assume(False)
        return
    event(replacement.match_type)
    span = text[replacement.start : replacement.end]
    assert _normalize(span) == _normalize(old)
    lines = text.split("\n")
    start_index = replacement.line - 1
    end_index = start_index + span.count("\n")
    result = replacement.apply(text)
    before = "".join(line + "\n" for line in lines[:start_index])
    after = "".join("\n" + line for line in lines[end_index + 1 :])
    assert result.startswith(before)
    assert result.endswith(after)
    assert text[: replacement.start].count("\n") == start_index


@settings(max_examples=200)
@given(
    text=st.text(alphabet="ab\n\r", max_size=30),
    start=st.none() | st.integers(-1, 12),
    end=st.none() | st.integers(-1, 12),
)
def test_property_read_lines_agrees_with_split_based_slicing(
    text: str, start: int | None, end: int | None
) -> None:
    lines = text.split("\n")
    assert count_lines(text) == len(lines)
    first = 1 if start is None else start
    last = len(lines) if end is None else end
    if first < 1 or last < 1 or first > len(lines) or first > last:
        with pytest.raises(LineRangeError):
            read_lines(text, start, end)
        return
    window = read_lines(text, start, end)
    last = min(last, len(lines))
    expected_partial = start is not None or end is not None
    assert window == LineWindow(
        "\n".join(lines[first - 1 : last]), len(lines), first, last, expected_partial
    )


INDENTS = st.sampled_from(["", "  ", "    ", "\t"])
PREFIXES = st.sampled_from([" ", "  ", "    ", "\t", "\t  "])
BLOCK_LINE = st.one_of(st.tuples(INDENTS, WORDS), st.just(("", "")))
OUTSIDE = st.lists(st.text(alphabet="xyz ", min_size=1, max_size=6), max_size=3)


@settings(max_examples=150)
@given(
    block=st.lists(BLOCK_LINE, min_size=1, max_size=5),
    ends=st.tuples(st.tuples(INDENTS, WORDS), st.tuples(INDENTS, WORDS)),
    new_block=st.lists(BLOCK_LINE, min_size=1, max_size=4),
    prefix=PREFIXES,
    agent_added=st.booleans(),
    before=OUTSIDE,
    after=OUTSIDE,
    blank_ws=st.sampled_from(["", " ", "\t\t"]),
)
def test_property_indentation_relative_reindents_new_str_by_the_same_change(
    block: list[tuple[str, str]],
    ends: tuple[tuple[str, str], tuple[str, str]],
    new_block: list[tuple[str, str]],
    prefix: str,
    agent_added: bool,
    before: list[str],
    after: list[str],
    blank_ws: str,
) -> None:
    lines = [ends[0], *block, ends[1]]  # non-blank first and last lines

    def render(pairs: list[tuple[str, str]], extra: str, blank: str) -> list[str]:
        return [extra + indent + content if content else blank for indent, content in pairs]

    # The text's block is indented by `prefix` more than the agent's copy, or, when the agent
    # added the prefix, the agent's copy (and its new_str) carries it and the text does not.
    text_extra, agent_extra = ("", prefix) if agent_added else (prefix, "")
    text = "\n".join([*before, *render(lines, text_extra, blank_ws), *after])
    old = "\n".join(render(lines, agent_extra, ""))
    new = "\n".join(render(new_block, agent_extra, ""))
    result, replacement = replace(text, old, new)
    assert replacement.match_type == INDENTATION_RELATIVE
    assert replacement.line == len(before) + 1
    assert result == "\n".join([*before, *render(new_block, text_extra, ""), *after])


def _naive_search(text: str, query: str, case_sensitive: bool, context: int) -> list[TextMatch]:
    haystack, needle = (text, query) if case_sensitive else (text.lower(), query.lower())
    lines = text.split("\n")
    matches, position = [], 0
    while position <= len(haystack) - len(needle):
        if haystack[position : position + len(needle)] != needle:
            position += 1
            continue
        line = text[:position].count("\n") + 1
        last = line + needle.count("\n")
        window = lines[max(line - 1 - context, 0) : last + context]
        matches.append(TextMatch(line, "\n".join(window)))
        position += len(needle)
    return matches


@settings(max_examples=200)
@given(
    text=st.text(alphabet="aAb\n", max_size=40),
    query=st.text(alphabet="aAb\n", min_size=1, max_size=3),
    case_sensitive=st.booleans(),
    context=st.integers(0, 3),
)
def test_property_search_finds_exactly_the_naive_non_overlapping_occurrences(
    text: str, query: str, case_sensitive: bool, context: int
) -> None:
    found = search_text(text, query, case_sensitive=case_sensitive, context_lines=context)
    assert found == _naive_search(text, query, case_sensitive, context)


LINE_INDENTS = st.sampled_from(["", " ", "  ", "\t", "  \t"])
LINE_CONTENTS = st.sampled_from(["a", "b", "", "a b"])
INDENTED_LINES = st.lists(st.tuples(LINE_INDENTS, LINE_CONTENTS), min_size=1, max_size=12)


def _outcome(text: str, old: str) -> tuple[object, ...]:
    try:
        return ("replaced", find_replacement(text, old, "  n\nm\n\n  o"))
    except MultipleMatches as error:
        return ("multiple", error.match_type, error.total, error.matches)
    except NoMatch as error:
        return ("none", error.suggestion)


def _shifted_window(lines: list[tuple[str, str]], data: st.DataObject) -> list[tuple[str, str]]:
    """A window of ``lines`` as an agent might copy it: shifted, sometimes with one line off."""
    first = data.draw(st.integers(0, len(lines) - 1))
    window = lines[first : data.draw(st.integers(first + 1, len(lines)))]
    if data.draw(st.booleans()):
        prefix = data.draw(st.sampled_from([" ", "  ", "\t"]))
        window = [(prefix + indent, content) for indent, content in window]
    else:
        window = [(indent.lstrip(" "), content) for indent, content in window]
    if data.draw(st.booleans()):
        position = data.draw(st.integers(0, len(window) - 1))
        window[position] = (data.draw(LINE_INDENTS), window[position][1])
    return window


@settings(max_examples=150)
@given(text_lines=INDENTED_LINES, data=st.data(), old_ends_with_newline=st.booleans())
def test_property_indentation_token_scan_agrees_with_direct_checks(
    text_lines: list[tuple[str, str]], data: st.DataObject, old_ends_with_newline: bool
) -> None:
    text = "\n".join(indent + content for indent, content in text_lines)
    old_lines = _shifted_window(text_lines, data)
    old = "\n".join(indent + content for indent, content in old_lines)
    old += "\n" if old_ends_with_newline else ""
    assume(old.strip())
    direct = _outcome(text, old)
    with mock.patch.object(replace_levels, "_DIRECT_WORK_FACTOR", 0):
        tokens = _outcome(text, old)
    event(str(direct[1].match_type) if direct[0] == "replaced" else direct[0])
    assert tokens == direct


def test_search_text_limited_lists_at_most_limit_matches_but_counts_all():
    from content.text.search import search_text_limited

    text = "\n".join(["x e x"] * 50)
    matches, total = search_text_limited(text, "e", limit=3)
    assert total == 50
    assert [m.line for m in matches] == [1, 2, 3]
