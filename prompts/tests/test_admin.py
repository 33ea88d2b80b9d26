"""The prompt admin (SPEC §5.1, §9): the form validates template and arguments exactly as the API
and shows the error on the form; archived prompts are restored with an action."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from content import services
from content.history import Actor
from content.models import ItemVersion
from content.services import ItemRef
from content.tests.test_admin import (
    add_url,
    change_url,
    changelist_url,
    form_data,
    fresh,
    run_action,
    texts,
)
from prompts.models import Prompt

pytestmark = pytest.mark.django_db

TEMPLATE = "Review this {{ language }} code:\n\n{{ code }}\n"
ARGUMENTS = [
    {"name": "code", "description": "The code", "required": True},
    {"name": "language", "description": None, "required": False},
]


@pytest.fixture
def prompt(staff: Any) -> Prompt:
    return services.create_item(
        owner=staff,
        model=Prompt,
        data={"name": "code-review", "content": TEMPLATE, "arguments": ARGUMENTS, "tags": ["dev"]},
        actor=Actor(),
    )


def _post(client: Client, prompt: Prompt, **changes: Any) -> Any:
    url = change_url(prompt)
    return client.post(url, form_data(client, url, **changes))


def _form_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, "the form should re-render with errors"
    return response.context["adminform"].form.errors


def test_archived_prompt_restored_with_the_action_becomes_active(
    staff_client: Client, staff: Any, prompt: Prompt
) -> None:
    services.archive_item(owner=staff, ref=ItemRef(Prompt, pk=prompt.pk), actor=Actor())
    assert not Prompt.objects.active().filter(pk=prompt.pk).exists()

    response = run_action(staff_client, Prompt, "unarchive_selected", [prompt])

    assert Prompt.objects.active().filter(pk=prompt.pk).exists()
    assert fresh(prompt).archived_at is None
    assert "Unarchived (active again): 1 prompt." in texts(response)
    event = ItemVersion.objects.get(item_id=prompt.pk, action="unarchive")
    assert event.source == "admin"


def test_restore_archived_is_the_first_prompt_action(staff_client: Client) -> None:
    choices = staff_client.get(changelist_url(Prompt)).context["action_form"].fields["action"]

    assert [name for name, _ in choices.choices][1] == "unarchive_selected"


def test_undeclared_template_variable_is_shown_on_the_form_and_nothing_changes(
    staff_client: Client, prompt: Prompt
) -> None:
    before = fresh(prompt)

    response = _post(staff_client, prompt, content=TEMPLATE + "{{ audience }}")

    assert _form_errors(response)["content"] == [
        "Template uses undefined variable(s): audience. Add them to arguments or remove them "
        "from the template."
    ]
    assert "Template uses undefined variable(s): audience" in response.content.decode()
    after = fresh(prompt)
    assert (after.content, after.updated_at) == (before.content, before.updated_at)
    assert ItemVersion.objects.filter(item_id=prompt.pk).count() == 1


def test_template_syntax_error_is_shown_with_jinjas_message(
    staff_client: Client, prompt: Prompt
) -> None:
    response = _post(staff_client, prompt, content="{{ code ")

    (message,) = _form_errors(response)["content"]
    assert "line 1" in message
    assert fresh(prompt).content == TEMPLATE


def test_unused_argument_is_shown_on_the_form(staff_client: Client, prompt: Prompt) -> None:
    response = _post(staff_client, prompt, content="Review {{ code }}")

    assert _form_errors(response)["content"] == [
        "Unused argument(s): language. Remove them from arguments or use them in the template."
    ]


def test_valid_change_saves_and_records_an_admin_version(
    staff_client: Client, staff: Any, prompt: Prompt
) -> None:
    arguments = '[{"name": "code", "required": true}, {"name": "style"}]'

    response = _post(
        staff_client,
        prompt,
        content="Review {{ code }} in the {{ style }} style.",
        arguments=arguments,
        tags="dev, review",
    )

    assert response.status_code == 302
    prompt = fresh(prompt)
    assert prompt.content == "Review {{ code }} in the {{ style }} style."
    assert prompt.arguments == [
        {"name": "code", "description": None, "required": True},
        {"name": "style", "description": None, "required": False},
    ]
    version = ItemVersion.objects.get(item_id=prompt.pk, version=2)
    assert version.source == "admin"
    assert version.changed_fields == ["arguments", "content", "tags"]
    assert version.owner == staff


def test_rename_to_a_taken_name_shows_the_conflict_on_the_name_field(
    staff_client: Client, staff: Any, prompt: Prompt
) -> None:
    services.create_item(
        owner=staff, model=Prompt, data={"name": "taken", "content": "x"}, actor=Actor()
    )

    response = _post(staff_client, prompt, name="taken")

    message, link = _form_errors(response)["name"]
    assert link.startswith('<a href="/admin/prompts/prompt/')
    assert "Open the existing prompt" in link
    assert message.startswith("A prompt with name 'taken' already exists.")
    assert fresh(prompt).name == "code-review"


def test_archived_prompt_keeps_its_name(staff_client: Client, staff: Any, prompt: Prompt):
    services.archive_item(owner=staff, ref=ItemRef(Prompt, pk=prompt.pk), actor=Actor())
    data = form_data(staff_client, add_url(Prompt), name="code-review", content="x", arguments="[]")

    response = staff_client.post(add_url(Prompt), data)

    message, link = _form_errors(response)["name"]
    assert change_url(prompt) in link
    assert "already exists in the archive (unarchive it instead)" in message


def test_invalid_name_gets_the_api_message(staff_client: Client, prompt: Prompt) -> None:
    response = _post(staff_client, prompt, name="Code Review")

    assert _form_errors(response)["name"] == [
        "Invalid prompt name 'Code Review'. Use lowercase letters, numbers and single hyphens, "
        "starting and ending with a letter or number (e.g. 'code-review')."
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            '[{"name": "code",}]',
            "Arguments are not valid JSON: Expecting property name enclosed in double quotes "
            "(line 1, column 18).",
        ),
        ('{"name": "code"}', 'Arguments: Expected a list of items but got type "dict".'),
        ('[{"description": "x"}]', "Argument 1: name: This field is required."),
        ('["code"]', "Argument 1: Invalid data. Expected a dictionary, but got str."),
        (
            '[{"name": "code", "type": "str"}]',
            "Argument 1: type: Unknown field. Allowed fields: description, name, required.",
        ),
    ],
)
def test_malformed_arguments_json_gets_a_clear_error(
    staff_client: Client, prompt: Prompt, arguments: str, expected: str
) -> None:
    response = _post(staff_client, prompt, arguments=arguments)

    (message,) = _form_errors(response)["arguments"]
    assert message.startswith(expected)
    assert fresh(prompt).arguments == ARGUMENTS


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            '[{"name": "Code"}]',
            "Invalid argument name 'Code'. Start with a lowercase letter, then lowercase letters, "
            "digits or underscores (e.g. 'code_snippet').",
        ),
        (
            '[{"name": "code"}, {"name": "code"}]',
            "Duplicate argument name(s): code. Each argument needs a unique name.",
        ),
    ],
)
def test_invalid_argument_names_get_the_api_message(
    staff_client: Client, prompt: Prompt, arguments: str, expected: str
) -> None:
    response = _post(staff_client, prompt, arguments=arguments, content="{{ code }}")

    assert _form_errors(response)["arguments"] == [expected]


def test_blank_template_gets_the_api_message(staff_client: Client) -> None:
    data = form_data(staff_client, add_url(Prompt), name="empty", content="  ")

    response = staff_client.post(add_url(Prompt), data)

    assert _form_errors(response)["content"] == [
        "A prompt's content (its template) is required and cannot be blank."
    ]


def test_add_prompt_creates_it_through_the_service(staff_client: Client, staff: Any) -> None:
    data = form_data(
        staff_client,
        add_url(Prompt),
        name="summarize",
        content="Summarize {{ text }}",
        arguments='[{"name": "text", "description": "What to summarize", "required": true}]',
    )

    response = staff_client.post(add_url(Prompt), data)

    assert response.status_code == 302
    prompt = Prompt.objects.get(name="summarize")
    assert prompt.owner == staff
    assert prompt.arguments[0]["description"] == "What to summarize"
    version = ItemVersion.objects.get(item_id=prompt.pk)
    assert (version.action, version.source) == ("create", "admin")


def test_change_form_shows_arguments_as_json_and_tags_as_text(
    staff_client: Client, prompt: Prompt
) -> None:
    html = staff_client.get(change_url(prompt)).content.decode()

    assert "&quot;name&quot;: &quot;language&quot;" in html
    assert 'value="dev"' in html


def test_changelist_searches_name_and_template(staff_client: Client, prompt: Prompt) -> None:
    by_name = staff_client.get(changelist_url(Prompt, q="code-rev"))
    by_template = staff_client.get(changelist_url(Prompt, q="code:"))
    miss = staff_client.get(changelist_url(Prompt, q="absent"))

    assert [p.pk for p in by_name.context["cl"].result_list] == [prompt.pk]
    assert [p.pk for p in by_template.context["cl"].result_list] == [prompt.pk]
    assert list(miss.context["cl"].result_list) == []
    assert "code, language?" in by_name.content.decode()
