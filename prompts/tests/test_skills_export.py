"""Prompts as agent skills: GET /api/prompts/export/skills/ and manage.py export_skills (§13)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from content.tests.factories import PromptFactory
from content.tests.helpers import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/prompts/export/skills/"


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def tar_files(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}  # type: ignore[union-attr]


def zip_files(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        return {name: zipped.read(name).decode() for name in zipped.namelist()}


@pytest.fixture
def library(owner: Any, other: Any) -> None:
    PromptFactory(
        owner=owner,
        name="code-review",
        title="Review code",
        description='Review: "quoted", colons: and\nnew lines #hash',
        content="Review {{ code }}",
        arguments=[{"name": "code", "description": "The code", "required": True}],
        tags=["dev"],
    )
    PromptFactory(owner=owner, name="plain", title="Just a title", description=None, content="Hi")
    PromptFactory(owner=owner, name="old", content="x", archived_at=timezone.now())
    PromptFactory(owner=other, name="secret", content="theirs")


def test_claude_code_gets_a_tar_gz_of_skill_folders_with_yaml_front_matter(
    api: Any, library: None
) -> None:
    response = api.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert "attachment" in response["Content-Disposition"]
    files = tar_files(response.content)
    assert sorted(files) == ["code-review/SKILL.md", "plain/SKILL.md"]
    meta, body = front_matter(files["code-review/SKILL.md"])
    assert meta == {
        "name": "code-review",
        "description": 'Review: "quoted", colons: and\nnew lines #hash',
    }
    assert "Review {{ code }}" in body
    assert "## Arguments" in body
    assert "`code` (required): The code" in body
    meta, _ = front_matter(files["plain/SKILL.md"])
    assert meta["description"] == "Just a title"


def test_claude_desktop_gets_a_zip_and_codex_a_tar_gz(api: Any, library: None) -> None:
    response = api.get(URL, {"client": "claude-desktop"})
    assert response["Content-Type"] == "application/zip"
    assert sorted(zip_files(response.content)) == ["code-review/SKILL.md", "plain/SKILL.md"]
    response = api.get(URL, {"client": "codex"})
    assert sorted(tar_files(response.content)) == ["code-review/SKILL.md", "plain/SKILL.md"]


def test_tags_choose_the_prompts(api: Any, library: None) -> None:
    files = tar_files(api.get(URL, {"tags": ["dev"]}).content)
    assert sorted(files) == ["code-review/SKILL.md"]


def test_descriptions_are_cut_to_1024_characters(api: Any, owner: Any) -> None:
    PromptFactory(owner=owner, name="long", description="d" * 1000, content="x")
    PromptFactory(owner=owner, name="longer", title="t" * 200, description=None, content="x")
    files = tar_files(api.get(URL).content)
    assert len(front_matter(files["long/SKILL.md"])[0]["description"]) == 1000
    assert all(len(front_matter(t)[0]["description"]) <= 1024 for t in files.values())


def test_an_unknown_client_or_bad_tag_is_a_400(api: Any) -> None:
    err = assert_error(api.get(URL, {"client": "vim"}), 400, "validation_error")
    assert "client" in err["fields"]
    assert_error(api.get(URL, {"tags": ["Not Valid!"]}), 400, "validation_error")


def test_anonymous_is_401(anon: Any) -> None:
    assert_error(anon.get(URL), 401, "not_authenticated")


def test_an_empty_library_is_an_empty_archive(other_api: Any) -> None:
    assert tar_files(other_api.get(URL).content) == {}


def test_the_route_is_the_named_action() -> None:
    assert reverse("prompt-export-skills") == URL


def test_manage_py_export_skills_writes_the_archive(
    owner: Any, library: None, tmp_path: Path
) -> None:
    target = tmp_path / "skills.zip"
    call_command("export_skills", owner.username, "--client", "claude-desktop", "-o", str(target))
    assert sorted(zip_files(target.read_bytes())) == ["code-review/SKILL.md", "plain/SKILL.md"]
