"""The editing core beyond one replacement (SPEC §4.3): replace_all, multi-edit plans, dry-run diffs."""

from __future__ import annotations

import difflib
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from content.history.codec import apply_patch
from content.text import replace_levels
from content.text.diff import TextDiff, unified_diff
from content.text.replace import (
    EXACT,
    INDENTATION_RELATIVE,
    MAX_EDITS,
    WHITESPACE_NORMALIZED,
    Edit,
    EditResult,
    MultipleMatches,
    NoMatch,
    OverlappingEdits,
    find_replacement,
    plan_edits,
    replace_all,
)

# --- replace_all --------------------------------------------------------------------------------


def test_replace_all_exact_replaces_every_occurrence_and_counts_them() -> None:
    plan = replace_all("a x b x\nx", "x", "yy")
    assert plan.new_content == "a yy b yy\nyy"
    assert plan.results == (EditResult(EXACT, 1, 3),)
    assert [r.line for r in plan.replacements] == [1, 1, 2]


def test_replace_all_whitespace_normalized_replaces_every_match_keeping_line_endings() -> None:
    plan = replace_all("foo  \r\nbar\r\nfoo\t\r\nbaz", "foo\nbar", "X")
    assert plan.results == (EditResult(WHITESPACE_NORMALIZED, 1, 1),)
    plan = replace_all("a \nb\na\t\nb\n", "a\nb", "c")
    assert plan.results == (EditResult(WHITESPACE_NORMALIZED, 1, 2),)
    assert plan.new_content == "c\nc\n"


def test_replace_all_indentation_relative_reindents_new_str_per_match() -> None:
    text = "  if a:\n    x\n\tif a:\n\t  x\n"
    plan = replace_all(text, "if a:\n  x\n", "if b:\n  y\n")
    assert plan.results == (EditResult(INDENTATION_RELATIVE, 1, 2),)
    assert plan.new_content == "  if b:\n    y\n\tif b:\n\t  y\n"


def test_replace_all_counts_overlapping_candidates_once() -> None:
    plan = replace_all("aaaa", "aa", "b")
    assert (plan.new_content, plan.results[0].replacements) == ("bb", 2)


def test_replace_all_without_any_match_is_no_match() -> None:
    with pytest.raises(NoMatch) as excinfo:
        replace_all("abc", "zzz", "y")
    assert excinfo.value.edit_index == 0


def test_replace_all_of_whitespace_only_old_str_without_exact_match_is_no_match() -> None:
    with pytest.raises(NoMatch):
        replace_all("a\nb\n" * 50_000, " \n\t", "x")


# --- multi-edit plans ---------------------------------------------------------------------------


def test_multi_edit_matches_every_edit_against_the_original_and_applies_them_at_once() -> None:
    text = "one\ntwo\nthree\nfour\n"
    plan = plan_edits(text, [Edit("three", "3"), Edit("one", "1\n1"), Edit("two", "two")])
    assert plan.new_content == "1\n1\ntwo\n3\nfour\n"
    assert plan.results == (
        EditResult(EXACT, 3, 1),
        EditResult(EXACT, 1, 1),
        EditResult(EXACT, 2, 1),
    )
    assert plan.spans == [(0, 3, "1\n1"), (4, 7, "two"), (8, 13, "3")]
    assert [r.edit_index for r in plan.replacements] == [1, 2, 0]


def test_multi_edit_does_not_see_the_text_earlier_edits_insert() -> None:
    plan = plan_edits("a b", [Edit("a", "c"), Edit("b", "x")])
    assert plan.new_content == "c x"
    with pytest.raises(NoMatch) as excinfo:
        plan_edits("a b", [Edit("a", "zz"), Edit("zz", "y")])
    assert excinfo.value.edit_index == 1


def test_multi_edit_with_overlapping_matches_names_both_edits_and_their_lines() -> None:
    text = "alpha\nbeta\ngamma\ndelta\n"
    with pytest.raises(OverlappingEdits) as excinfo:
        plan_edits(text, [Edit("delta", "d"), Edit("beta\ngamma", "x"), Edit("gamma\ndel", "y")])
    assert excinfo.value.edit_indexes == [1, 2]
    assert excinfo.value.lines == [2, 3]


def test_multi_edit_with_the_same_old_str_twice_overlaps() -> None:
    with pytest.raises(OverlappingEdits) as excinfo:
        plan_edits("x\ny\n", [Edit("y", "1"), Edit("y", "2")])
    assert (excinfo.value.edit_indexes, excinfo.value.lines) == ([0, 1], [2, 2])


def test_multi_edit_spans_that_only_touch_do_not_overlap() -> None:
    assert plan_edits("abcd", [Edit("cd", "2"), Edit("ab", "1")]).new_content == "12"


def test_multi_edit_failing_edit_carries_its_index() -> None:
    with pytest.raises(MultipleMatches) as excinfo:
        plan_edits("x\nx\ny", [Edit("y", "z"), Edit("x", "w")])
    assert (excinfo.value.edit_index, excinfo.value.total) == (1, 2)
    with pytest.raises(NoMatch) as no_match:
        plan_edits("x\ny", [Edit("y", "z"), Edit("x", "w"), Edit("nothing here", "")])
    assert no_match.value.edit_index == 2


def test_multi_edit_mixes_levels_and_replace_all() -> None:
    text = "class A:\n    def f():\n        return 1\nx = 1  \ny = x\nx = 1\n"
    plan = plan_edits(
        text,
        [
            Edit("def f():\n    return 1", "def f():\n    return 2"),
            Edit("y = x", "y = x + 1"),
            Edit("x = 1", "x = 2", replace_all=True),
        ],
    )
    assert [r.match_type for r in plan.results] == [INDENTATION_RELATIVE, EXACT, EXACT]
    assert plan.results[2].replacements == 2
    assert (
        plan.new_content == "class A:\n    def f():\n        return 2\nx = 2  \ny = x + 1\nx = 2\n"
    )


@pytest.mark.parametrize("edits", [[], [Edit("a", "b")] * (MAX_EDITS + 1)])
def test_multi_edit_rejects_no_edits_and_too_many(edits: list[Edit]) -> None:
    with pytest.raises(ValueError, match="edits"):
        plan_edits("a", edits)


def test_multi_edit_rejects_an_empty_old_str_naming_the_edit() -> None:
    with pytest.raises(ValueError, match=r"old_str must not be empty \(edit 1\)"):
        plan_edits("a", [Edit("a", "b"), Edit("", "c")])


def test_single_edit_api_keeps_working_through_the_plan() -> None:
    replacement = find_replacement("a\nb\n", "b", "c")
    assert (replacement.start, replacement.end, replacement.line) == (2, 3, 2)
    with pytest.raises(MultipleMatches) as excinfo:
        find_replacement("b b", "b", "c")
    assert excinfo.value.edit_index == 0


def test_plan_reverse_ops_restore_the_original_through_the_history_codec() -> None:
    text = "one\ntwo\nthree\n"
    plan = plan_edits(text, [Edit("three", "3!"), Edit("one", ""), Edit("two", "two")])
    ops = plan.reverse_ops()
    assert ops == [(0, 0, "one"), (5, 2, "three")]
    patch = json.dumps(ops, ensure_ascii=False, separators=(",", ":"))
    assert apply_patch(plan.new_content, patch) == text
    assert plan.changed
    assert not plan_edits(text, [Edit("two", "two")]).changed


# --- unified diff -------------------------------------------------------------------------------


def _difflib(old: str, new: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        "before",
        "after",
        n=context,
        lineterm="\n",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def test_diff_of_a_small_change_in_a_long_text_numbers_the_hunk_in_the_whole_text() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 1001))
    plan = plan_edits(text, [Edit("line 500\n", "changed\n")])
    diff, truncated = plan.diff().text, plan.diff().truncated
    assert not truncated
    assert diff == (
        "--- before\n+++ after\n@@ -497,7 +497,7 @@\n line 497\n line 498\n line 499\n"
        "-line 500\n+changed\n line 501\n line 502\n line 503\n"
    )
    assert diff == _difflib(text, plan.new_content)


def test_diff_of_distant_edits_has_one_hunk_each_and_near_ones_share_a_hunk() -> None:
    text = "".join(f"l{n}\n" for n in range(100))
    plan = plan_edits(text, [Edit("l10\n", "A\n"), Edit("l17\n", "B\nB\n"), Edit("l80\n", "")])
    diff = plan.diff().text
    assert diff.count("@@ -") == 2
    assert diff == _difflib(text, plan.new_content)


def test_diff_marks_a_last_line_without_newline() -> None:
    diff = unified_diff("a\nb", "a\nc").text
    assert (
        diff
        == "--- before\n+++ after\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


def test_diff_of_unchanged_text_is_empty() -> None:
    assert unified_diff("same\n", "same\n") == TextDiff("", False, 0, 0)
    assert plan_edits("a", [Edit("a", "a")]).diff() == TextDiff("", False, 0, 0)


def test_diff_is_cut_at_max_chars_and_says_so() -> None:
    text = "".join(f"line {n}\n" for n in range(3000))
    plan = replace_all(text, "line", "row")
    found = plan.diff(max_chars=1000)
    diff, truncated = found.text, found.truncated
    assert truncated
    assert len(diff) == 1000
    assert _difflib(text, plan.new_content).startswith(diff)


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=150)
@given(
    lines=st.lists(st.text(alphabet="abc", min_size=1, max_size=4), min_size=1, max_size=12),
    data=st.data(),
)
def test_property_multi_edit_of_unique_exact_matches_equals_splicing_sorted_spans(
    lines: list[str], data: st.DataObject
) -> None:
    text = "\n".join(f"{index}:{line}" for index, line in enumerate(lines))
    chosen = data.draw(
        st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=5, unique=True)
    )
    edits = [
        Edit(f"{index}:{lines[index]}", data.draw(st.text("xyz\n", max_size=4))) for index in chosen
    ]
    assume(all(text.count(edit.old_str) == 1 for edit in edits))
    expected_spans = sorted((text.index(e.old_str), e) for e in edits)
    expected, cursor = "", 0
    for start, edit in expected_spans:
        expected += text[cursor:start] + edit.new_str
        cursor = start + len(edit.old_str)
    expected += text[cursor:]
    plan = plan_edits(text, edits)
    assert plan.new_content == expected
    assert [r.match_type for r in plan.results] == [EXACT] * len(edits)
    assert [r.line for r in plan.results] == [index + 1 for index in chosen]


@settings(max_examples=200)
@given(
    text=st.text(alphabet="ab\n", max_size=40),
    old=st.text(alphabet="ab\n", min_size=1, max_size=3),
    new=st.text(alphabet="xy\n", max_size=3),
)
def test_property_replace_all_equals_str_replace_for_exact_matches(
    text: str, old: str, new: str
) -> None:
    assume(old in text)
    plan = replace_all(text, old, new)
    assert plan.results[0].match_type == EXACT
    assert plan.results[0].replacements == text.count(old)
    assert plan.new_content == text.replace(old, new)


@settings(max_examples=200)
@given(
    lines=st.lists(st.sampled_from(["a", "b", "c", "", "a b"]), max_size=40),
    data=st.data(),
    context=st.integers(0, 4),
)
def test_property_diff_equals_difflib_over_the_whole_texts(
    lines: list[str], data: st.DataObject, context: int
) -> None:
    # numbered lines: one best alignment, so a local diff must equal difflib's global one
    lines = [f"{number}{line}" for number, line in enumerate(lines)]
    text = "\n".join(lines) + data.draw(st.sampled_from(["", "\n"]))
    count = len(lines)
    chosen = sorted(data.draw(st.lists(st.integers(0, max(count - 1, 0)), max_size=4, unique=True)))
    assume(count and chosen)
    starts = [sum(len(line) + 1 for line in lines[:index]) for index in chosen]
    spans = [
        (
            start,
            min(start + len(lines[index]) + 1, len(text)),
            data.draw(st.sampled_from(["", "z\n", "q", "a\n"])),
        )
        for start, index in zip(starts, chosen, strict=True)
    ]
    new, cursor = "", 0
    for start, end, new_text in spans:
        new += text[cursor:start] + new_text
        cursor = end
    new += text[cursor:]
    found = unified_diff(text, new, context=context, spans=spans, max_chars=10**9)
    diff, truncated = found.text, found.truncated
    assert not truncated
    assert diff == _difflib(text, new, context)


_LINE = st.tuples(st.sampled_from(["", " ", "  ", "\t"]), st.sampled_from(["a", "b", ""]))


@settings(max_examples=300)
@given(
    before=st.lists(_LINE, max_size=8),
    after=st.lists(_LINE, max_size=8),
    indent=st.sampled_from(["", " ", "  "]),
    shift=st.sampled_from(["", " ", "\t", "    "]),
    blank=st.sampled_from(["", " ", "\t ", "  \r"]),
    contents=st.lists(st.sampled_from(["a", "b", ""]), min_size=2, max_size=5),
    newline=st.booleans(),
)
def test_property_the_same_indent_prefilter_never_hides_a_level_3_match(
    before: list[tuple[str, str]],
    after: list[tuple[str, str]],
    indent: str,
    shift: str,
    blank: str,
    contents: list[str],
    newline: bool,
) -> None:
    old_str = "\n".join(indent + c if c else "" for c in contents) + ("\n" if newline else "")
    block = replace_levels._Block.parse(old_str)
    assume(block.non_blank)
    embedded = [shift + indent + c if c else blank for c in contents]
    lines = [i + c for i, c in before] + embedded + [i + c for i, c in after]
    text = "\n".join(lines)
    exact = replace_levels._token_blocks(replace_levels.Document(text), block, None)
    pattern = replace_levels._same_indent_pattern(block)
    assert pattern is not None
    if exact.total:
        assert pattern.search(text) is not None
