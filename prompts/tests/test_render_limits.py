"""Rendering is bounded (SPEC §5.2): output size, value size and work, on REST /render/."""

from __future__ import annotations

from typing import Any

import pytest

from content.tests.factories import PromptFactory
from content.tests.helpers import action_url, assert_error
from prompts.templating import RenderLimitExceeded, RenderLimits, render_template

# Each of these ran for seconds or built hundreds of megabytes before the bounds.
RUNAWAY_TEMPLATES = {
    "nested loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "repeated big value": "{% set s = 'a' * 1000000 %}{% for i in range(200) %}{{ s }}{% endfor %}",
    "center filter": "{{ 'a'|center(1000000000) }}",
    "center method": "{{ 'a'.center(1000000000) }}",
    "format filter width": "{{ '%1000000000s'|format('a') }}",
    "percent precision": "{{ '%.1000000000f' % 1.0 }}",
    "str.format width": "{{ '{:>{w}}'.format(1, w=1000000000) }}",
    "replace filter": "{% set s = 'a' * 1000000 %}{{ s|replace('a', 'bbbbbbbbbb') }}",
    "replace method": "{% set s = 'a' * 1000000 %}{{ s.replace('a', 'bbbbbbbbbb') }}",
    "list repeated into str()": "{{ ['x' * 1000000] * 1000000 }}",
    "doubling with ~": "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "doubling with +": "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "indent width": "{% set s = 'a\n' * 500000 %}{{ s|indent(1000) }}",
    "wordwrap glue": "{% set s = 'a ' * 400000 %}{{ s|wordwrap(1, wrapstring='x' * 100) }}",
    "batch fill": "{{ [1]|batch(1000000000, 'x')|list }}",
    "lipsum": "{{ lipsum(100000) }}",
    "translate": "{{ ('a' * 100000).translate({97: 'x' * 1000}) }}",
    "huge power": "{{ 7 ** (2 ** 40) }}",
    "huge repetition": "{{ 'a' * 10**10 }}",
    "squaring in a loop": "{% set ns = namespace(n=3) %}{% for i in range(100) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
    "list doubling": "{% set l = [1] %}{% for i in range(40) %}{{ l.extend(l) or '' }}{% endfor %}",
    "exponential macro": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
}


@pytest.mark.parametrize("content", RUNAWAY_TEMPLATES.values(), ids=RUNAWAY_TEMPLATES.keys())
def test_runaway_templates_stop_with_render_limit_exceeded(content: str) -> None:
    with pytest.raises(RenderLimitExceeded):
        render_template(content, [], {}, RenderLimits(max_cpu_seconds=0.5))


def test_output_up_to_the_limit_renders() -> None:
    content = "{% for i in range(10) %}{{ 'a' * 100 }}{% endfor %}"
    assert render_template(content, [], {}, RenderLimits(max_chars=1000)) == "a" * 1000


def test_output_one_character_past_the_limit_is_refused() -> None:
    content = "{% for i in range(10) %}{{ 'a' * 100 }}{% endfor %}!"
    with pytest.raises(RenderLimitExceeded) as caught:
        render_template(content, [], {}, RenderLimits(max_chars=1000))
    assert "longer than 1000 characters" in str(caught.value)


def test_loop_iterations_are_counted_even_when_the_body_is_empty() -> None:
    content = "{% for i in range(1000) %}{% endfor %}done"
    assert render_template(content, [], {}, RenderLimits(max_steps=2000)) == "done"
    with pytest.raises(RenderLimitExceeded) as caught:
        render_template(content, [], {}, RenderLimits(max_steps=500))
    assert "500 steps" in str(caught.value)


def test_cpu_deadline_stops_work_below_the_step_limit() -> None:
    content = "{% for i in range(100000) %}{{ (('a' * 1000) ~ i)|upper|length }}{% endfor %}"
    with pytest.raises(RenderLimitExceeded) as caught:
        render_template(content, [], {}, RenderLimits(max_cpu_seconds=0.001))
    assert "CPU time" in str(caught.value)


def test_ordinary_templates_render_unchanged() -> None:
    content = (
        "{% for t in topics %}{{ loop.index }}. {{ t|title|center(12) }}\n{% endfor %}"
        "{{ '%s-%03d'|format('x', 7) }} {{ '{:>5}'.format(name) }} {{ ', '.join(topics) }}"
        "{{ topics|join('/')|replace('/', '|') }} {{ [1, 2] + [3] }} {{ 'ab' * 2 }}"
    )
    arguments = [{"name": "topics", "required": True}, {"name": "name", "required": True}]
    out = render_template(content, arguments, {"topics": ["a", "b"], "name": "bo"})
    assert out == "1.      A      \n2.      B      \nx-007    bo a, ba|b [1, 2, 3] abab"


def test_validation_of_a_huge_constant_expression_stays_cheap() -> None:
    # Jinja folds constants while compiling; the bounds hold before any render budget exists.
    with pytest.raises(RenderLimitExceeded):
        render_template("{{ 'a'|center(10**9) }}{{ 'b' * 10**9 }}", [], {})


# --------------------------------------------------------------------------- REST


def render(api: Any, prompt: Any, values: dict[str, Any]) -> Any:
    return api.post(action_url("prompt", "render", prompt.pk), {"arguments": values}, format="json")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content",
    [RUNAWAY_TEMPLATES["nested loops"], RUNAWAY_TEMPLATES["repeated big value"]],
    ids=["nested loops", "repeated big value"],
)
def test_render_endpoint_answers_400_render_limit_exceeded(
    api: Any, owner: Any, content: str
) -> None:
    prompt = PromptFactory(owner=owner, content=content, arguments=[])
    body = assert_error(render(api, prompt, {}), 400, "render_limit_exceeded")
    assert "Traceback" not in body["message"]


@pytest.mark.django_db
def test_render_endpoint_reads_the_output_limit_from_settings(
    api: Any, owner: Any, settings: Any
) -> None:
    settings.TIDDLY_RENDER_MAX_CHARS = 10
    prompt = PromptFactory(
        owner=owner, content="{{ x }}", arguments=[{"name": "x", "required": True}]
    )
    assert render(api, prompt, {"x": "a" * 10}).json() == {"rendered": "a" * 10}
    body = assert_error(render(api, prompt, {"x": "a" * 11}), 400, "render_limit_exceeded")
    assert "longer than 10 characters" in body["message"]
