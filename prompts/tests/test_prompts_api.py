"""/api/prompts/: names, arguments, template validation, by-name access and rendering (SPEC §5)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from content.tests.factories import PromptFactory
from content.tests.helpers import (
    action_url,
    assert_error,
    by_name_url,
    db_state,
    detail_url,
    item_body,
    list_url,
)
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

PAST = timezone.now() - timedelta(days=1)


def arg(name: str, required: bool = False, description: str | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "required": required}


@pytest.fixture
def prompt(owner: Any) -> Prompt:
    return PromptFactory(
        owner=owner,
        name="review",
        title="Code review",
        content="Review {{ code }} in {{ language }}.",
        arguments=[arg("code", True, "The code"), arg("language")],
        tags=["dev"],
    )


# --- create -------------------------------------------------------------------------------------


def test_create_prompt_returns_201_and_stores_name_and_arguments(api: Any, owner: Any) -> None:
    response = api.post(
        list_url("prompt"),
        {
            "name": "summarize",
            "content": "Summarise {{ text }}",
            "arguments": [{"name": "text", "required": True}],
            "tags": ["Writing"],
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["type"] == "prompt"
    assert body["name"] == "summarize"
    assert body["arguments"] == [{"name": "text", "description": None, "required": True}]
    assert body["tags"] == ["writing"]
    assert body["title"] is None
    prompt = Prompt.objects.get(pk=body["id"])
    assert prompt.owner == owner
    assert prompt.arguments == body["arguments"]


def test_create_prompt_without_arguments_for_a_static_template(api: Any) -> None:
    response = api.post(list_url("prompt"), {"name": "hi", "content": "Hello"}, format="json")
    assert response.status_code == 201
    assert response.json()["arguments"] == []


@pytest.mark.parametrize(
    "name", ["Upper", "with space", "-lead", "trail-", "double--hyphen", "under_score", "é"]
)
def test_create_prompt_with_invalid_name_is_400(api: Any, name: str) -> None:
    body = assert_error(
        api.post(list_url("prompt"), {"name": name, "content": "x"}, format="json"),
        400,
        "validation_error",
    )
    assert "name" in body["fields"]
    assert not Prompt.objects.exists()


def test_prompt_name_longer_than_100_is_field_limit_exceeded(api: Any) -> None:
    error = assert_error(
        api.post(list_url("prompt"), {"name": "a" * 101, "content": "x"}, format="json"),
        400,
        "field_limit_exceeded",
    )
    assert (error["field"], error["length"], error["limit"]) == ("name", 101, 100)


@pytest.mark.parametrize("body", [{"content": "x"}, {"name": "x"}, {"name": "x", "content": " "}])
def test_create_prompt_without_name_or_content_is_400(api: Any, body: dict[str, Any]) -> None:
    response = api.post(list_url("prompt"), body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] in {"validation_error", "invalid_template"}
    assert not Prompt.objects.exists()


def test_duplicate_prompt_name_is_409_name_conflict_with_existing_id(
    api: Any, prompt: Prompt
) -> None:
    before = db_state()
    body = assert_error(
        api.post(list_url("prompt"), {"name": "review", "content": "x"}, format="json"),
        409,
        "name_conflict",
    )
    assert body["existing_id"] == str(prompt.pk)
    assert db_state() == before


def test_archived_prompt_keeps_its_name(api: Any, prompt: Prompt) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(archived_at=PAST)
    body = assert_error(
        api.post(list_url("prompt"), {"name": "review", "content": "x"}, format="json"),
        409,
        "name_conflict",
    )
    assert body["existing_id"] == str(prompt.pk)


def test_deleted_prompt_frees_its_name(api: Any, prompt: Prompt) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(deleted_at=timezone.now())
    response = api.post(list_url("prompt"), {"name": "review", "content": "x"}, format="json")
    assert response.status_code == 201


def test_restore_is_409_name_conflict_when_the_name_was_taken_again(
    api: Any, owner: Any, prompt: Prompt
) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(deleted_at=timezone.now())
    again = PromptFactory(owner=owner, name="review", content="x", arguments=[])
    before = db_state()
    body = assert_error(api.post(action_url("prompt", "restore", prompt.pk)), 409, "name_conflict")
    assert body["existing_id"] == str(again.pk)
    assert db_state() == before


# --- arguments ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        [arg("x"), arg("x")],
        [arg("Bad")],
        [arg("1x")],
        [{"description": "no name"}],
        [{"name": "x", "unknown": 1}],
    ],
)
def test_malformed_or_duplicate_argument_names_are_validation_errors(
    api: Any, arguments: list[dict[str, Any]]
) -> None:
    response = api.post(
        list_url("prompt"),
        {"name": "p", "content": "{{ x }}", "arguments": arguments},
        format="json",
    )
    body = assert_error(response, 400, "validation_error")
    assert "arguments" in body["fields"]
    assert not Prompt.objects.exists()


def test_argument_description_over_1000_is_field_limit_exceeded(api: Any) -> None:
    response = api.post(
        list_url("prompt"),
        {"name": "p", "content": "{{ x }}", "arguments": [arg("x", description="d" * 1001)]},
        format="json",
    )
    error = assert_error(response, 400, "field_limit_exceeded")
    assert error["limit"] == 1000


def test_patch_arguments_replaces_the_whole_list(api: Any, prompt: Prompt) -> None:
    response = api.patch(
        detail_url("prompt", prompt.pk),
        {"content": "Review {{ code }}", "arguments": [arg("code", True)]},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["arguments"] == [arg("code", True)]
    prompt.refresh_from_db()
    assert prompt.arguments == [arg("code", True)]


def test_patch_null_arguments_clears_them(api: Any, owner: Any) -> None:
    prompt = PromptFactory(owner=owner, content="static", arguments=[])
    Prompt.objects.filter(pk=prompt.pk).update(content="static {{ x }}", arguments=[arg("x")])
    response = api.patch(
        detail_url("prompt", prompt.pk), {"content": "static", "arguments": None}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["arguments"] == []


# --- template validation ------------------------------------------------------------------------


def test_create_with_undeclared_variable_is_invalid_template(api: Any) -> None:
    body = assert_error(
        api.post(list_url("prompt"), {"name": "p", "content": "{{ a }} {{ b }}"}, format="json"),
        400,
        "invalid_template",
    )
    assert "undefined variable(s): a, b" in body["message"]
    assert not Prompt.objects.exists()


def test_create_with_unused_argument_is_invalid_template(api: Any) -> None:
    body = assert_error(
        api.post(
            list_url("prompt"),
            {"name": "p", "content": "static", "arguments": [arg("x")]},
            format="json",
        ),
        400,
        "invalid_template",
    )
    assert "Unused argument(s): x" in body["message"]


def test_create_with_syntax_error_names_the_line(api: Any) -> None:
    body = assert_error(
        api.post(list_url("prompt"), {"name": "p", "content": "a\n{% if %}"}, format="json"),
        400,
        "invalid_template",
    )
    assert "line 2" in body["message"]


def test_patch_content_is_validated_against_current_arguments(api: Any, prompt: Prompt) -> None:
    before = db_state()
    body = assert_error(
        api.patch(detail_url("prompt", prompt.pk), {"content": "Only {{ code }}"}, format="json"),
        400,
        "invalid_template",
    )
    assert "Unused argument(s): language" in body["message"]
    assert db_state() == before


def test_patch_arguments_is_validated_against_current_content(api: Any, prompt: Prompt) -> None:
    before = db_state()
    body = assert_error(
        api.patch(detail_url("prompt", prompt.pk), {"arguments": [arg("code")]}, format="json"),
        400,
        "invalid_template",
    )
    assert "undefined variable(s): language" in body["message"]
    assert db_state() == before


def test_patch_content_and_arguments_together_are_validated_merged(
    api: Any, prompt: Prompt
) -> None:
    ok = api.patch(
        detail_url("prompt", prompt.pk),
        {"content": "Hi {{ name }}", "arguments": [arg("name")]},
        format="json",
    )
    assert ok.status_code == 200
    before = db_state()
    body = assert_error(
        api.patch(
            detail_url("prompt", prompt.pk),
            {"content": "Hi {{ other }}", "arguments": [arg("name")]},
            format="json",
        ),
        400,
        "invalid_template",
    )
    assert "other" in body["message"]
    assert "name" in body["message"]
    assert db_state() == before


@pytest.mark.parametrize("content", [None, "", "   "])
def test_patch_prompt_content_to_null_or_blank_is_400(
    api: Any, prompt: Prompt, content: Any
) -> None:
    before = db_state()
    response = api.patch(detail_url("prompt", prompt.pk), {"content": content}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] in {"validation_error", "invalid_template"}
    assert db_state() == before


def test_patch_prompt_name_to_null_is_400(api: Any, prompt: Prompt) -> None:
    before = db_state()
    body = assert_error(
        api.patch(detail_url("prompt", prompt.pk), {"name": None}, format="json"),
        400,
        "validation_error",
    )
    assert "name" in body["fields"]
    assert db_state() == before


def test_patch_name_to_a_taken_name_is_409(api: Any, owner: Any, prompt: Prompt) -> None:
    other = PromptFactory(owner=owner, name="other", content="x", arguments=[])
    body = assert_error(
        api.patch(detail_url("prompt", other.pk), {"name": "review"}, format="json"),
        409,
        "name_conflict",
    )
    assert body["existing_id"] == str(prompt.pk)


def test_patch_title_and_description_to_null_clears_them(api: Any, prompt: Prompt) -> None:
    response = api.patch(
        detail_url("prompt", prompt.pk), {"title": None, "description": None}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["title"] is None


def test_prompt_no_op_patch_keeps_updated_at(api: Any, prompt: Prompt) -> None:
    response = api.patch(
        detail_url("prompt", prompt.pk),
        {"name": "review", "arguments": prompt.arguments, "content": prompt.content},
        format="json",
    )
    assert response.status_code == 200
    prompt.refresh_from_db()
    assert prompt.updated_at == prompt.created_at


# --- by name ------------------------------------------------------------------------------------


def test_get_by_name_returns_the_active_prompt(api: Any, prompt: Prompt) -> None:
    response = api.get(by_name_url("review"))
    assert response.status_code == 200
    assert response.json() == api.get(detail_url("prompt", prompt.pk)).json()
    assert response["ETag"]


@pytest.mark.parametrize("field", ["archived_at", "deleted_at"])
def test_get_by_name_of_archived_or_deleted_prompt_is_404(
    api: Any, prompt: Prompt, field: str
) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(**{field: PAST})
    body = assert_error(api.get(by_name_url("review")), 404, "not_found")
    assert "review" in body["message"]


def test_get_by_name_of_scheduled_archive_still_works(api: Any, prompt: Prompt) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(archived_at=timezone.now() + timedelta(days=1))
    assert api.get(by_name_url("review")).status_code == 200


def test_get_by_name_supports_partial_read(api: Any, owner: Any) -> None:
    PromptFactory(owner=owner, name="lines", content="a\nb\nc", arguments=[])
    body = api.get(by_name_url("lines"), {"start_line": 2, "end_line": 2}).json()
    assert body["content"] == "b"
    assert body["content_metadata"]["is_partial"] is True


def test_patch_by_name_updates_and_can_rename(api: Any, prompt: Prompt) -> None:
    response = api.patch(
        by_name_url("review"), {"name": "code-review", "title": "CR"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["name"] == "code-review"
    prompt.refresh_from_db()
    assert (prompt.name, prompt.title) == ("code-review", "CR")
    assert_error(api.get(by_name_url("review")), 404, "not_found")
    assert api.get(by_name_url("code-review")).status_code == 200


def test_patch_by_name_of_archived_prompt_is_404(api: Any, prompt: Prompt) -> None:
    Prompt.objects.filter(pk=prompt.pk).update(archived_at=PAST)
    before = db_state()
    assert_error(api.patch(by_name_url("review"), {"title": "x"}, format="json"), 404, "not_found")
    assert db_state() == before


def test_patch_by_name_with_stale_expected_updated_at_is_409(api: Any, prompt: Prompt) -> None:
    stale = (prompt.updated_at - timedelta(seconds=5)).isoformat()
    body = assert_error(
        api.patch(
            by_name_url("review"), {"title": "x", "expected_updated_at": stale}, format="json"
        ),
        409,
        "conflict",
    )
    assert body["server_state"] == item_body(api.get(detail_url("prompt", prompt.pk)))


# --- render -------------------------------------------------------------------------------------


def render(api: Any, prompt: Prompt, arguments: Any) -> Any:
    return api.post(
        action_url("prompt", "render", prompt.pk), {"arguments": arguments}, format="json"
    )


def test_render_substitutes_arguments(api: Any, prompt: Prompt) -> None:
    response = render(api, prompt, {"code": "x = 1", "language": "Python"})
    assert response.status_code == 200
    assert response.json() == {"rendered": "Review x = 1 in Python."}


def test_render_optional_argument_not_given_is_empty(api: Any, prompt: Prompt) -> None:
    assert render(api, prompt, {"code": "y"}).json() == {"rendered": "Review y in ."}


def test_render_accepts_any_json_value(api: Any, owner: Any) -> None:
    prompt = PromptFactory(
        owner=owner,
        content="{% for i in items %}{{ i.n }};{% endfor %}",
        arguments=[arg("items")],
    )
    assert render(api, prompt, {"items": [{"n": 1}, {"n": 2}]}).json() == {"rendered": "1;2;"}


def test_render_with_unknown_argument_is_400_naming_the_valid_ones(
    api: Any, prompt: Prompt
) -> None:
    body = assert_error(render(api, prompt, {"code": "x", "nope": 1}), 400, "invalid_template")
    assert "nope" in body["message"]
    assert "code, language" in body["message"]


def test_render_without_a_required_argument_is_400_naming_it(api: Any, prompt: Prompt) -> None:
    body = assert_error(render(api, prompt, {"language": "Go"}), 400, "invalid_template")
    assert "Missing required argument(s): code" in body["message"]


def test_render_sandbox_violation_is_400_disallowed_operation(api: Any, owner: Any) -> None:
    prompt = PromptFactory(owner=owner, content="{{ x.__class__.__mro__ }}", arguments=[arg("x")])
    body = assert_error(render(api, prompt, {"x": ""}), 400, "invalid_template")
    assert body["message"] == "Template uses a disallowed operation."


def test_render_without_body_uses_no_arguments(api: Any, owner: Any) -> None:
    prompt = PromptFactory(owner=owner, content="static", arguments=[])
    response = api.post(action_url("prompt", "render", prompt.pk), {}, format="json")
    assert response.json() == {"rendered": "static"}


def test_render_does_not_change_the_prompt(api: Any, prompt: Prompt) -> None:
    before = db_state()
    render(api, prompt, {"code": "x"})
    assert db_state() == before


def test_render_with_non_object_arguments_is_400(api: Any, prompt: Prompt) -> None:
    assert_error(render(api, prompt, ["code"]), 400, "validation_error")


def test_prompt_list_url_is_routable() -> None:
    assert reverse("prompt-list") == "/api/prompts/"
