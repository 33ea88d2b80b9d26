"""Prompts as agent skills (SPEC §13): one ``<name>/SKILL.md`` per active prompt, in an archive.

A SKILL.md is YAML front matter (``name``, ``description``) written by PyYAML, then the template
and a section describing its arguments. Claude Code and Codex take a gzipped tar, Claude Desktop a
zip. Prompt names are validated slugs (``^[a-z0-9]+(-[a-z0-9]+)*$``), so they are safe folder
names; the check here keeps it so if that rule ever loosens.
"""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from content import queries
from content.rules import SLUG_RE, normalize_tags
from prompts.models import Prompt
from tiddly.errors import ValidationFailed

DESCRIPTION_CHARS = 1024


@dataclass(frozen=True)
class Client:
    name: str
    media_type: str
    extension: str


CLIENTS = {
    "claude-code": Client("claude-code", "application/gzip", "tar.gz"),
    "codex": Client("codex", "application/gzip", "tar.gz"),
    "claude-desktop": Client("claude-desktop", "application/zip", "zip"),
}


def client_for(name: str | None) -> Client:
    found = CLIENTS.get(name or "claude-code")
    if found is None:
        raise ValidationFailed(
            {"client": [f"Unknown client {name!r}. Valid clients: {', '.join(CLIENTS)}."]}
        )
    return found


def skill_prompts(owner: Any, *, tags: list[str], tag_match: str) -> Iterable[Prompt]:
    chosen = queries.active_tagged(owner, Prompt, normalize_tags(tags), tag_match)
    return chosen.order_by("name").iterator()


def skill_md(prompt: Prompt) -> str:
    description = (prompt.description or prompt.title or prompt.name).strip()
    front = {"name": prompt.name, "description": description[:DESCRIPTION_CHARS]}
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000)
    parts = [f"---\n{header}---\n", (prompt.content or "").rstrip("\n") + "\n"]
    if prompt.arguments:
        lines = ["", "## Arguments", ""]
        for arg in prompt.arguments:
            need = "required" if arg.get("required") else "optional"
            about = f": {arg['description']}" if arg.get("description") else ""
            lines.append(f"- `{arg['name']}` ({need}){about}")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def archive(prompts: Iterable[Prompt], client: Client) -> bytes:
    """The archive of ``<name>/SKILL.md`` files for ``client``."""
    files = [(f"{_folder(p.name)}/SKILL.md", skill_md(p).encode()) for p in prompts]
    buffer = io.BytesIO()
    if client.extension == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
            for path, data in files:
                zipped.writestr(path, data)
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            now = time.time()
            for path, data in files:
                info = tarfile.TarInfo(path)
                info.size, info.mtime, info.mode = len(data), now, 0o644
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _folder(name: str) -> str:
    if not SLUG_RE.match(name):  # unreachable while prompt names are validated slugs
        raise ValueError(f"Unsafe skill folder name {name!r}")
    return name


def export(
    owner: Any, *, client: str | None, tags: list[str], tag_match: str
) -> tuple[Client, bytes]:
    chosen = client_for(client)
    return chosen, archive(skill_prompts(owner, tags=tags, tag_match=tag_match), chosen)
