"""str-replace on prompts: by id and by name, atomic `arguments`, template validation (SPEC §4.3, §5.1)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from content.tests.editing_support import (
    by_name_url,
    expected_item,
    iso,
    make_item,
    row_state,
    url,
    versions,
)
from content.tests.helpers import item_body
from content.text.replace import NO_MATCH_SUGGESTION
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

WHO = {"name": "who", "description": "Whom to greet", "required": True}
PLACE = {"name": "place", "description": None, "required": False}
TEMPLATE = "Hello {{ who }}!\nHave a nice day."


@pytest.fixture
def prompt(owner: Any) -> Prompt:
    return make_item(
        owner, "prompt", name="greet", title="Greeting", content=TEMPLATE, arguments=[WHO]
    )


def by_name(client: Any, name: str, body: dict[str, Any], query: str = "", **kw: Any) -> Any:
    return client.patch(by_name_url(name, str_replace=True) + query, body, format="json", **kw)


def by_id(client: Any, item: Any, body: dict[str, Any], query: str = "", **kw: Any) -> Any:
    return client.patch(url("prompt", "str-replace", item.pk) + query, body, format="json", **kw)


def success(item: Any, match_type: str, line: int) -> dict[str, Any]:
    row = Prompt.objects.get(pk=item.pk)
    return {
        "match_type": match_type,
        "line": line,
        "id": str(row.pk),
        "updated_at": iso(row.updated_at),
    }


def invalid_template(message: str) -> dict[str, Any]:
    return {"error": "invalid_template", "message": message}


# --- by name ------------------------------------------------------------------------------------


def test_str_replace_by_name_edits_the_active_prompt(api: Any, prompt: Prompt) -> None:
    response = by_name(api, "greet", {"old_str": "nice day", "new_str": "great day"})

    assert response.status_code == 200
    assert response.json() == success(prompt, "exact", 2)
    row = Prompt.objects.get(pk=prompt.pk)
    assert row.content == "Hello {{ who }}!\nHave a great day."
    assert row.arguments == [WHO]
    assert row.updated_at > prompt.updated_at
    assert [(v.version, v.changed_fields) for v in versions(prompt)] == [
        (1, ["arguments", "content", "name", "title"]),
        (2, ["content"]),
    ]


def test_str_replace_by_name_uses_progressive_matching(api: Any, owner: Any) -> None:
    content = "{% if who %}\n    Hi {{ who }}  \r\n{% endif %}"
    prompt = make_item(owner, "prompt", name="hi", content=content, arguments=[WHO])

    response = by_name(api, "hi", {"old_str": "Hi {{ who }}\n", "new_str": "Hey {{ who }}\n"})

    assert response.status_code == 200
    assert response.json() == success(prompt, "whitespace_normalized", 2)
    assert Prompt.objects.get(pk=prompt.pk).content == (
        "{% if who %}\n    Hey {{ who }}\n{% endif %}"
    )


def test_str_replace_by_name_with_include_updated_entity_returns_the_item(
    api: Any, prompt: Prompt
) -> None:
    response = by_name(
        api, "greet", {"old_str": "Hello", "new_str": "Hi"}, "?include_updated_entity=true"
    )

    assert response.status_code == 200
    get = api.get(by_name_url("greet"))
    assert response.json() == {**success(prompt, "exact", 1), "item": item_body(get)}
    assert response.json()["item"] == expected_item(prompt)
    assert response.json()["item"]["content"] == "Hi {{ who }}!\nHave a nice day."


@pytest.mark.parametrize("state", ["archived_at", "deleted_at"])
def test_str_replace_by_name_of_an_inactive_prompt_is_404(
    api: Any, prompt: Prompt, state: str
) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(**{state: timezone.now() - timedelta(seconds=1)})
    before = row_state(prompt)

    response = by_name(api, "greet", {"old_str": "Hello", "new_str": "Hi"})

    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "message": "No prompt named 'greet' was found. Prompt names address active prompts "
        "only; restore archived ones first.",
    }
    assert row_state(prompt) == before


def test_str_replace_by_name_with_a_future_archive_date_still_edits(
    api: Any, prompt: Prompt
) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(archived_at=timezone.now() + timedelta(days=1))

    response = by_name(api, "greet", {"old_str": "Hello", "new_str": "Hi"})

    assert response.status_code == 200
    assert Prompt.objects.get(pk=prompt.pk).content.startswith("Hi {{ who }}")


def test_str_replace_by_id_of_an_archived_prompt_edits_it(api: Any, prompt: Prompt) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(archived_at=timezone.now() - timedelta(days=1))

    response = by_id(api, prompt, {"old_str": "Hello", "new_str": "Hi"})

    assert response.status_code == 200
    assert response.json() == success(prompt, "exact", 1)
    assert Prompt.objects.get(pk=prompt.pk).content.startswith("Hi {{ who }}")


def test_str_replace_by_name_of_a_strangers_prompt_is_404(other_api: Any, prompt: Prompt) -> None:
    before = row_state(prompt)

    response = by_name(other_api, "greet", {"old_str": "Hello", "new_str": "Hi"})

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert row_state(prompt) == before


def test_str_replace_by_name_anonymously_is_401(anon: Any, prompt: Prompt) -> None:
    before = row_state(prompt)

    response = by_name(anon, "greet", {"old_str": "Hello", "new_str": "Hi"})

    assert response.status_code == 401
    assert response.json()["error"] == "not_authenticated"
    assert row_state(prompt) == before


def test_str_replace_by_name_errors_like_by_id(api: Any, prompt: Prompt) -> None:
    before = row_state(prompt)

    no_match = by_name(api, "greet", {"old_str": "Goodbye", "new_str": "x"})
    multiple = by_name(api, "greet", {"old_str": "e", "new_str": "E"})
    stale = by_name(
        api,
        "greet",
        {
            "old_str": "Hello",
            "new_str": "Hi",
            "expected_updated_at": iso(prompt.updated_at - timedelta(seconds=1)),
        },
    )
    precondition = by_name(api, "greet", {"old_str": "Hello", "new_str": "Hi"}, HTTP_IF_MATCH='"1"')

    assert no_match.status_code == 400
    assert no_match.json() == {
        "error": "no_match",
        "message": "The specified text was not found in the content.",
        "suggestion": NO_MATCH_SUGGESTION,
    }
    assert multiple.status_code == 400
    assert multiple.json()["error"] == "multiple_matches"
    assert multiple.json()["total_matches"] == 3
    assert stale.status_code == 409
    assert stale.json()["error"] == "conflict"
    assert stale.json()["server_state"] == item_body(api.get(by_name_url("greet")))
    assert precondition.status_code == 412
    assert precondition.json()["server_state"] == expected_item(prompt)
    assert row_state(prompt) == before


# --- template validation and atomic arguments ---------------------------------------------------


@pytest.mark.parametrize("via", ["id", "name"])
def test_edit_introducing_an_undeclared_variable_is_invalid_template(
    api: Any, prompt: Prompt, via: str
) -> None:
    before = row_state(prompt)
    body = {"old_str": "!", "new_str": " from {{ place }}!"}

    response = by_id(api, prompt, body) if via == "id" else by_name(api, "greet", body)

    assert response.status_code == 400
    assert response.json() == invalid_template(
        "Template uses undefined variable(s): place. Add them to arguments or remove them "
        "from the template."
    )
    assert row_state(prompt) == before


@pytest.mark.parametrize("via", ["id", "name"])
def test_arguments_in_the_same_request_make_the_edit_valid_atomically(
    api: Any, prompt: Prompt, via: str
) -> None:
    body = {"old_str": "!", "new_str": " from {{ place }}!", "arguments": [WHO, PLACE]}

    response = by_id(api, prompt, body) if via == "id" else by_name(api, "greet", body)

    assert response.status_code == 200
    assert response.json() == success(prompt, "exact", 1)
    row = Prompt.objects.get(pk=prompt.pk)
    assert row.content == "Hello {{ who }} from {{ place }}!\nHave a nice day."
    assert row.arguments == [WHO, PLACE]
    history = versions(prompt)
    assert len(history) == 2
    assert history[-1].changed_fields == ["arguments", "content"]
    assert history[-1].metadata["arguments"] == [WHO, PLACE]


def test_removing_a_variable_without_removing_its_argument_is_invalid_template(
    api: Any, prompt: Prompt
) -> None:
    before = row_state(prompt)

    response = by_id(api, prompt, {"old_str": " {{ who }}", "new_str": ""})

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_template"
    assert response.json()["message"].startswith("Unused argument(s): who.")
    assert row_state(prompt) == before


def test_removing_a_variable_and_its_argument_together_is_valid(api: Any, prompt: Prompt) -> None:
    response = by_id(api, prompt, {"old_str": " {{ who }}", "new_str": "", "arguments": []})

    assert response.status_code == 200
    row = Prompt.objects.get(pk=prompt.pk)
    assert row.content == "Hello!\nHave a nice day."
    assert row.arguments == []


def test_edit_breaking_the_jinja_syntax_is_invalid_template_naming_the_line(
    api: Any, prompt: Prompt
) -> None:
    before = row_state(prompt)

    response = by_id(api, prompt, {"old_str": "nice day.", "new_str": "nice {% if %} day."})

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_template"
    assert body["message"].startswith("Invalid Jinja2 syntax on line 2:")
    assert row_state(prompt) == before


def test_edit_blanking_the_template_is_invalid_template(api: Any, owner: Any) -> None:
    prompt = make_item(owner, "prompt", name="plain", content="Just text")
    before = row_state(prompt)

    response = by_id(api, prompt, {"old_str": "Just text", "new_str": "  "})

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_template"
    assert row_state(prompt) == before


def test_same_text_with_different_arguments_changes_only_the_arguments(
    api: Any, owner: Any
) -> None:
    prompt = make_item(owner, "prompt", name="greet", content=TEMPLATE, arguments=[WHO])
    renamed = {**WHO, "description": "The person", "required": False}

    response = by_id(api, prompt, {"old_str": "Hello", "new_str": "Hello", "arguments": [renamed]})

    assert response.status_code == 200
    assert response.json() == success(prompt, "exact", 1)
    row = Prompt.objects.get(pk=prompt.pk)
    assert row.content == TEMPLATE
    assert row.arguments == [renamed]
    assert row.updated_at > prompt.updated_at
    assert versions(prompt)[-1].changed_fields == ["arguments"]


def test_same_text_with_an_unused_new_argument_is_invalid_template(
    api: Any, prompt: Prompt
) -> None:
    before = row_state(prompt)

    response = by_name(
        api, "greet", {"old_str": "Hello", "new_str": "Hello", "arguments": [WHO, PLACE]}
    )

    assert response.status_code == 400
    assert response.json() == invalid_template(
        "Unused argument(s): place. Remove them from arguments or use them in the template."
    )
    assert row_state(prompt) == before


@pytest.mark.parametrize(
    "extra",
    [{}, {"arguments": None}, {"arguments": [WHO]}, {"arguments": [{"name": "who"}]}],
    ids=["no-arguments", "null-arguments", "equal-arguments", "equal-after-defaults"],
)
def test_no_op_edit_with_equal_arguments_writes_nothing(
    api: Any, owner: Any, extra: dict[str, Any]
) -> None:
    arguments = [{"name": "who", "description": None, "required": False}]
    if extra.get("arguments") == [WHO]:
        arguments = [WHO]
    prompt = make_item(owner, "prompt", name="greet", content=TEMPLATE, arguments=arguments)
    before = row_state(prompt)

    response = by_name(api, "greet", {"old_str": "Hello", "new_str": "Hello", **extra})

    assert response.status_code == 200
    assert response.json() == {
        "match_type": "exact",
        "line": 1,
        "id": str(prompt.pk),
        "updated_at": iso(prompt.updated_at),
    }
    assert row_state(prompt) == before
    assert len(versions(prompt)) == 1


@pytest.mark.parametrize(
    "arguments",
    [
        [WHO, WHO],
        [{"name": "Bad Name"}],
        [{"name": "who", "surprise": 1}],
        "who",
    ],
    ids=["duplicate", "malformed-name", "unknown-key", "not-a-list"],
)
def test_invalid_arguments_are_a_validation_error_and_save_nothing(
    api: Any, prompt: Prompt, arguments: Any
) -> None:
    before = row_state(prompt)

    response = by_id(api, prompt, {"old_str": "Hello", "new_str": "Hi", "arguments": arguments})

    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "validation_error"
    assert list(body["fields"]) == ["arguments"]
    assert row_state(prompt) == before
