from __future__ import annotations

from typing import Any

import pytest

from prompts.templating import (
    RenderError,
    TemplateValidationError,
    render_template,
    validate_template,
)


def args(*names: str, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"name": n, "description": "", "required": n in required} for n in names]


def validation_message(content: str | None, names: list[str]) -> str:
    with pytest.raises(TemplateValidationError) as info:
        validate_template(content, names)
    return str(info.value)


def render_message(content: str | None, arguments: list[dict[str, Any]], values: dict) -> str:
    with pytest.raises(RenderError) as info:
        render_template(content, arguments, values)
    return str(info.value)


# --------------------------------------------------------------------------- validation


def test_validate_accepts_template_whose_variables_match_arguments() -> None:
    validate_template("Hello {{ name }}, you are {{ age }}", ["age", "name"])


def test_validate_accepts_static_content_without_arguments() -> None:
    validate_template("No variables here.", [])


@pytest.mark.parametrize("content", [None, "", "   ", "\n\t\n"])
def test_validate_rejects_blank_content(content: str | None) -> None:
    assert validation_message(content, []) == "Template content is required and cannot be blank."


def test_validate_reports_syntax_error_with_line_and_jinja_message() -> None:
    message = validation_message("line one\nHello {{ unclosed", ["unclosed"])
    assert message == (
        "Invalid Jinja2 syntax on line 2: "
        "unexpected end of template, expected 'end of print statement'."
    )


def test_validate_reports_unknown_filter_as_syntax_error_without_traceback_text() -> None:
    message = validation_message("{{ x|nosuchfilter }}", ["x"])
    assert message == "Invalid Jinja2 syntax on line 1: No filter named 'nosuchfilter'."


def test_validate_lists_undefined_variables_sorted() -> None:
    assert validation_message("{{ b }} {{ a }} {{ known }}", ["known"]) == (
        "Template uses undefined variable(s): a, b. "
        "Add them to arguments or remove them from the template."
    )


def test_validate_lists_unused_arguments_sorted() -> None:
    assert validation_message("{{ used }}", ["zeta", "used", "alpha"]) == (
        "Unused argument(s): alpha, zeta. Remove them from arguments or use them in the template."
    )


def test_validate_reports_undefined_before_unused_in_one_message() -> None:
    assert validation_message("{{ a }}", ["b"]) == (
        "Template uses undefined variable(s): a. "
        "Add them to arguments or remove them from the template. "
        "Unused argument(s): b. Remove them from arguments or use them in the template."
    )


def test_validate_does_not_flag_names_bound_by_set_for_and_macros() -> None:
    content = (
        "{% set greeting = 'hi' %}{{ greeting }}"
        "{% for item in items %}{{ loop.index }}{{ item }}{% endfor %}"
        "{% macro shout(text) %}{{ text|upper }}{% endmacro %}{{ shout(greeting) }}"
        "{% set ns = namespace(count=0) %}{{ ns.count }}"
    )
    validate_template(content, ["items"])


def test_validate_does_not_flag_jinja_globals() -> None:
    content = (
        "{% for i in range(3) %}{{ i }}{% endfor %}"
        "{% set c = cycler('a', 'b') %}{{ c.next() }}"
        "{% set j = joiner(',') %}{{ j() }}"
        "{{ dict(a=1) }}{{ lipsum(1) }}"
    )
    validate_template(content, [])


def test_validate_counts_argument_shadowing_a_global_as_used() -> None:
    validate_template("{{ range }}", ["range"])


def test_validate_refuses_huge_constant_expression_quickly() -> None:
    # Compile-time folding would otherwise build a 10 GB string during validation.
    validate_template("{{ 'a' * 10**10 }}", [])


# --------------------------------------------------------------------------- rendering


def test_render_substitutes_values_and_applies_filters() -> None:
    out = render_template("Hi {{ name|upper }}!", args("name", required=("name",)), {"name": "bo"})
    assert out == "Hi BO!"


def test_render_loops_over_list_values() -> None:
    content = "{% for t in topics %}- {{ t.title }}\n{% endfor %}"
    values = {"topics": [{"title": "a"}, {"title": "b"}]}
    assert render_template(content, args("topics"), values) == "- a\n- b\n"


def test_render_accepts_any_json_values() -> None:
    content = "{{ n + 1 }} {{ f }} {{ flag }} {{ nothing }} {{ obj['k'][1] }}"
    values = {"n": 1, "f": 1.5, "flag": True, "nothing": None, "obj": {"k": [0, "x"]}}
    out = render_template(content, args("n", "f", "flag", "nothing", "obj"), values)
    assert out == "2 1.5 True None x"


def test_render_gives_optional_arguments_not_supplied_an_empty_string() -> None:
    content = "A{{ opt }}B{% if opt %}never{% endif %}"
    assert render_template(content, args("opt"), {}) == "AB"


def test_render_preserves_whitespace_and_trailing_newline() -> None:
    content = "  indented {{ x }}\n\n  tail\n"
    assert render_template(content, args("x"), {"x": "y"}) == "  indented y\n\n  tail\n"


@pytest.mark.parametrize("content", [None, ""])
def test_render_of_empty_content_is_empty(content: str | None) -> None:
    assert render_template(content, [], {}) == ""


def test_render_rejects_unknown_arguments_naming_valid_ones() -> None:
    message = render_message("{{ b }}{{ a }}", args("b", "a"), {"x": 1, "a": 1, "w": 2})
    assert message == "Unknown argument(s): w, x. Valid arguments: a, b"


def test_render_rejects_unknown_arguments_when_none_are_declared() -> None:
    assert render_message("static", [], {"x": 1}) == "Unknown argument(s): x. Valid arguments: none"


def test_render_rejects_missing_required_arguments() -> None:
    arguments = args("a", "b", "c", required=("c", "a"))
    message = render_message("{{ a }}{{ b }}{{ c }}", arguments, {"b": 1})
    assert message == "Missing required argument(s): a, c"


def test_render_accepts_null_for_a_required_argument() -> None:
    assert render_template("{{ a }}", args("a", required=("a",)), {"a": None}) == "None"


@pytest.mark.parametrize(
    "content",
    [
        "{{ ''.__class__ }}",
        "{{ ''.__class__.__mro__ }}",
        "{{ x.__class__.__subclasses__() }}",
        "{% if ''.__class__ %}yes{% endif %}",
    ],
)
def test_render_reports_sandbox_violations_as_disallowed(content: str) -> None:
    assert render_message(content, args("x"), {"x": "v"}) == "Template uses a disallowed operation."


def test_render_reports_undefined_attribute_clearly() -> None:
    message = render_message("{{ x.missing }}", args("x"), {"x": 1})
    assert message == "Template variable error: 'int object' has no attribute 'missing'"


def test_render_reports_runtime_errors_without_traceback() -> None:
    message = render_message("{{ 1 / 0 }}", [], {})
    assert message == "Template rendering failed: ZeroDivisionError: division by zero"
    assert "Traceback" not in message


def test_render_reports_syntax_errors_in_stored_content() -> None:
    message = render_message("{% for %}", [], {})
    assert message.startswith("Invalid Jinja2 syntax on line 1: ")
