"""Seeds a fresh database for the fuzz run: two users, each with a token and items of every type.

Prints (as JSON) what the schemathesis hooks need to use real ids: per user its token, the ids
of its items by type, its prompt names and tag names. Run from the project folder with the same
environment as the server (DATABASE_URL …).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tiddly.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from content.history import Actor  # noqa: E402
from content.models import Bookmark, Note  # noqa: E402
from content.services import ItemRef, create_item, update_item  # noqa: E402
from prompts.models import Prompt  # noqa: E402
from tiddly.models import ApiToken  # noqa: E402

# The last DISPOSABLE of each type are the ones DELETE may take (see fuzz_hooks.py).
ITEMS_PER_TYPE = 6
DISPOSABLE = 2


def seed_user(username: str) -> dict[str, Any]:
    owner = get_user_model().objects.create_user(username=username, password=f"pw-{username}")
    _, token = ApiToken.issue(owner=owner, name="fuzz")
    actor = Actor(source="fuzz-seed")
    ids: dict[str, list[str]] = {"bookmark": [], "note": [], "prompt": []}
    for i in range(ITEMS_PER_TYPE):
        tags = [f"{username}-tag", f"shared-{i % 2}"]
        seeds: list[tuple[Any, dict[str, Any]]] = [
            (
                Bookmark,
                {
                    "url": f"https://example.com/{username}/{i}",
                    "title": f"Link {i}",
                    "content": f"line one\nline two {i}\n",
                },
            ),
            (Note, {"title": f"Note {i}", "content": f"# Note {i}\nhello world\nthe end\n"}),
            (
                Prompt,
                {
                    "name": f"{username}-prompt-{i}",
                    "content": "Say {{ word }} twice.",
                    "arguments": [{"name": "word", "description": "A word", "required": False}],
                },
            ),
        ]
        items = [
            create_item(owner=owner, model=model, data={**data, "tags": tags}, actor=actor)
            for model, data in seeds
        ]
        for item in items:
            # A second version, so history reads, diffs and restores have something to do.
            update_item(
                owner=owner,
                ref=ItemRef(type(item), pk=item.pk),
                data={"description": f"Edited {i}"},
                actor=actor,
            )
            ids[item.type_name].append(str(item.pk))
    return {
        "username": username,
        "token": token,
        "ids": {kind: values[:-DISPOSABLE] for kind, values in ids.items()},
        "disposable_ids": {kind: values[-DISPOSABLE:] for kind, values in ids.items()},
        "prompt_names": [f"{username}-prompt-{i}" for i in range(ITEMS_PER_TYPE)],
        "tags": [f"{username}-tag", "shared-0", "shared-1"],
    }


if __name__ == "__main__":
    print(json.dumps({"users": [seed_user("fuzz-a"), seed_user("fuzz-b")]}))
