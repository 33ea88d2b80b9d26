"""The admin driven in a real browser (issue 13): what people actually click."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from browser_tests.conftest import log_in
from content.history import Actor
from content.models import ItemVersion
from content.services import ItemRef, archive_item, create_item, update_item
from prompts.models import Prompt

ACTOR = Actor(source="test")


def make_prompt(owner: Any, name: str, content: str = "Hello {{ who }}") -> Prompt:
    prompt = create_item(
        owner=owner,
        model=Prompt,
        data={"name": name, "content": content, "arguments": [{"name": "who"}]},
        actor=ACTOR,
    )
    assert isinstance(prompt, Prompt)
    return prompt


def archived(owner: Any, name: str) -> Prompt:
    prompt = make_prompt(owner, name)
    archive_item(owner=owner, ref=ItemRef(Prompt, pk=prompt.pk), actor=ACTOR)
    return prompt


def row_names(browser: WebDriver) -> list[str]:
    return [
        cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#result_list .field-name")
    ]


def messages(browser: WebDriver) -> str:
    return " ".join(m.text for m in browser.find_elements(By.CSS_SELECTOR, "ul.messagelist li"))


def test_signing_in_shows_the_tiddly_admin(
    browser: WebDriver, live_server: Any, staff: Any
) -> None:
    log_in(browser, live_server.url, staff.username)
    assert browser.find_element(By.ID, "site-name").text == "Tiddly"
    assert browser.find_element(By.CSS_SELECTOR, "#content h1").text == (
        "Your bookmarks, notes and prompts"
    )
    assert browser.title == "Your bookmarks, notes and prompts | Tiddly"


def test_filtering_prompts_by_state(admin_browser: WebDriver, live_server: Any, staff: Any) -> None:
    make_prompt(staff, "fresh-one")
    archived(staff, "old-one")
    admin_browser.get(f"{live_server.url}/admin/prompts/prompt/")
    assert sorted(row_names(admin_browser)) == ["fresh-one", "old-one"]

    admin_browser.find_element(By.LINK_TEXT, "Archived").click()

    assert "state=archived" in admin_browser.current_url
    assert row_names(admin_browser) == ["old-one"]


def test_unarchiving_a_prompt_with_the_action(
    admin_browser: WebDriver, live_server: Any, staff: Any
) -> None:
    prompt = archived(staff, "old-one")
    admin_browser.get(f"{live_server.url}/admin/prompts/prompt/?state=archived")

    admin_browser.find_element(By.CSS_SELECTOR, f"input.action-select[value='{prompt.pk}']").click()
    Select(admin_browser.find_element(By.NAME, "action")).select_by_value("unarchive_selected")
    admin_browser.find_element(By.CSS_SELECTOR, "button[name=index]").click()

    assert messages(admin_browser)
    prompt.refresh_from_db()
    assert prompt.archived_at is None


def test_saving_an_invalid_template_shows_the_error(
    admin_browser: WebDriver, live_server: Any, staff: Any
) -> None:
    prompt = make_prompt(staff, "greet")
    admin_browser.get(f"{live_server.url}/admin/prompts/prompt/{prompt.pk}/change/")
    content = admin_browser.find_element(By.ID, "id_content")
    content.clear()
    content.send_keys("Hello {{ who }} and {{ stranger }}")
    admin_browser.find_element(By.NAME, "_save").click()

    assert admin_browser.find_element(By.CSS_SELECTOR, ".errornote").is_displayed()
    # The message sits on the content field (the template), not above the form.
    field_row = admin_browser.find_element(By.CSS_SELECTOR, ".field-content")
    errors = field_row.find_element(By.CSS_SELECTOR, "ul.errorlist").text
    assert "Template uses undefined variable(s): stranger" in errors
    assert not admin_browser.find_elements(By.CSS_SELECTOR, "ul.errorlist.nonfield")
    prompt.refresh_from_db()
    assert prompt.content == "Hello {{ who }}"


def _with_two_versions(owner: Any) -> Prompt:
    prompt = make_prompt(owner, "greet", "Hello {{ who }}")
    update_item(
        owner=owner,
        ref=ItemRef(Prompt, pk=prompt.pk),
        data={"content": "Goodbye {{ who }}"},
        actor=ACTOR,
    )
    return prompt


def test_opening_a_history_diff(admin_browser: WebDriver, live_server: Any, staff: Any) -> None:
    prompt = _with_two_versions(staff)
    admin_browser.get(f"{live_server.url}/admin/prompts/prompt/{prompt.pk}/change/")
    table = admin_browser.find_element(By.ID, "history-table")
    table.find_element(By.LINK_TEXT, "v2").click()

    diff = admin_browser.find_element(By.ID, "version-diff")
    removed = [e.text for e in diff.find_elements(By.CSS_SELECTOR, ".removed")]
    added = [e.text for e in diff.find_elements(By.CSS_SELECTOR, ".added")]
    assert any("Hello {{ who }}" in line for line in removed)
    assert any("Goodbye {{ who }}" in line for line in added)


def test_restoring_a_version(admin_browser: WebDriver, live_server: Any, staff: Any) -> None:
    prompt = _with_two_versions(staff)
    admin_browser.get(f"{live_server.url}/admin/prompts/prompt/{prompt.pk}/history/1/")
    admin_browser.find_element(By.XPATH, "//button[text()='Restore this version…']").click()
    # A confirmation page first: nothing has changed yet.
    confirm = admin_browser.find_element(By.CSS_SELECTOR, "input[value='Yes, restore version 1']")
    prompt.refresh_from_db()
    assert prompt.content == "Goodbye {{ who }}"
    confirm.click()

    assert "restore" in messages(admin_browser).lower()
    prompt.refresh_from_db()
    assert prompt.content == "Hello {{ who }}"
    versions = ItemVersion.objects.filter(item_id=prompt.pk, version__isnull=False)
    assert max(v.version for v in versions) == 3
