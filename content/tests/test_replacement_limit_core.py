"""The replacement limit of the text core (SPEC §4.3 Cost): counted first, refused up front."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from content.text.replace import (
    EXACT,
    INDENTATION_RELATIVE,
    WHITESPACE_NORMALIZED,
    Edit,
    NoMatch,
    TooManyReplacements,
    plan_edits,
)


def refused(text: str, edits: list[Edit], limit: int) -> TooManyReplacements:
    with pytest.raises(TooManyReplacements) as excinfo:
        plan_edits(text, edits, max_replacements=limit)
    return excinfo.value


def test_exact_replace_all_past_the_limit_is_refused_with_the_full_count() -> None:
    error = refused("a" * 101, [Edit("a", "b", replace_all=True)], 100)
    assert (error.count, error.limit, error.edit_index, error.at_least) == (101, 100, 0, False)
    assert str(error) == "the edits would make 101 replacements; the limit is 100"


def test_exact_replace_all_at_the_limit_is_planned() -> None:
    plan = plan_edits("a" * 100, [Edit("a", "b", replace_all=True)], max_replacements=100)
    assert (plan.results[0].match_type, plan.results[0].replacements) == (EXACT, 100)
    assert plan.new_content == "b" * 100


def test_whitespace_level_replace_all_past_the_limit_is_refused_with_the_full_count() -> None:
    text = "a \n" * 101  # "a\n" only matches once trailing whitespace is ignored
    error = refused(text, [Edit("a\n", "b\n", replace_all=True)], 100)
    assert (error.count, error.at_least) == (101, False)


def test_whitespace_level_replace_all_at_the_limit_is_planned() -> None:
    text = "a \r\n" * 100
    plan = plan_edits(text, [Edit("a\n", "b\n", replace_all=True)], max_replacements=100)
    assert (plan.results[0].match_type, plan.results[0].replacements) == (
        WHITESPACE_NORMALIZED,
        100,
    )
    assert plan.new_content == "b\n" * 100  # each match is a whole "a \r\n" line


def test_indentation_level_replace_all_past_the_limit_is_refused_without_scanning_on() -> None:
    text = "  a\n" * 500
    error = refused(text, [Edit("\ta\n", "\tb\n", replace_all=True)], 100)
    assert (error.count, error.at_least) == (101, True)  # level 3 stops counting past the limit
    assert "at least 101" in str(error)


def test_indentation_level_replace_all_at_the_limit_is_planned() -> None:
    plan = plan_edits(
        "  a\n" * 100, [Edit("\ta\n", "\tb\n", replace_all=True)], max_replacements=100
    )
    assert (plan.results[0].match_type, plan.results[0].replacements) == (INDENTATION_RELATIVE, 100)
    assert plan.new_content == "  b\n" * 100


def test_the_limit_counts_every_edit_of_a_request_and_names_the_one_past_it() -> None:
    edits = [Edit("x", "1", replace_all=True), Edit("y", "2", replace_all=True)]
    error = refused("x" * 60 + "y" * 60, edits, 100)
    assert (error.count, error.edit_index) == (120, 1)


def test_single_edits_count_one_each() -> None:
    edits = [Edit(f"<{n}>", "") for n in range(5)]
    text = "".join(f"<{n}>" for n in range(5))
    assert refused(text, edits, 4).count == 5
    assert plan_edits(text, edits, max_replacements=5).new_content == ""


def test_without_a_limit_nothing_is_refused() -> None:
    plan = plan_edits("a" * 1000, [Edit("a", "b", replace_all=True)])
    assert plan.results[0].replacements == 1000


@settings(max_examples=200)
@given(
    text=st.text(alphabet="ab \n", max_size=40),
    old=st.sampled_from(["a", "b\n", "a b", "ab"]),
    new=st.text(alphabet="xy\n", max_size=6),
)
def test_property_new_length_is_the_length_of_the_new_content(
    text: str, old: str, new: str
) -> None:
    try:
        plan = plan_edits(text, [Edit(old, new, replace_all=True)])
    except NoMatch:
        return
    assert plan.new_length == len(plan.new_content)
