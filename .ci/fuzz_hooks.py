"""Schemathesis hooks for .ci/fuzz: real ids, both users' tokens, deterministic under --seed.

Path ids, prompt names, tag names and version numbers are drawn (through Hypothesis, so the seed
decides) from what .ci/fuzz_seed.py created for *both* users, plus the generated value, so the
fuzzer reaches real items — the caller's own (200s) and the other user's (must be 404s).
Each case carries the token of the item's owner three times in four, else the other user's.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import strategies as st

FIXTURES = json.loads(Path(os.environ["TIDDLY_FUZZ_FIXTURES"]).read_text())
USERS: list[dict[str, Any]] = FIXTURES["users"]
KINDS = {"bookmarks": "bookmark", "notes": "note", "prompts": "prompt"}
OWNER_OF = {
    value: index
    for index, user in enumerate(USERS)
    for value in [
        *(i for ids in user["ids"].values() for i in ids),
        *(i for ids in user["disposable_ids"].values() for i in ids),
        *user["prompt_names"],
    ]
}


def _real_values(method: str, path: str, name: str) -> list[Any]:
    segment = path.strip("/").split("/")[1] if path.count("/") > 2 else ""
    kind = KINDS.get(segment)
    if name in ("id", "pk") and kind:
        # DELETE takes only disposable items, so the others stay for every other operation.
        pool = "disposable_ids" if method.upper() == "DELETE" else "ids"
        return [i for user in USERS for i in user[pool][kind]]
    if name == "name" and kind == "prompt":
        return [n for user in USERS for n in user["prompt_names"]]
    if name == "name" and segment == "tags":
        return [t for user in USERS for t in user["tags"]]
    if name == "version":
        return [1, 2]
    return []


@schemathesis.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
    path = context.operation.path
    strategies = {}
    for name, generated in (path_parameters or {}).items():
        real = _real_values(context.operation.method, path, name)
        strategies[name] = st.sampled_from([*real, generated]) if real else st.just(generated)
    return st.fixed_dictionaries(strategies)


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    digest = hashlib.sha256(
        repr((case.method, case.path, case.path_parameters, case.query)).encode()
    ).digest()
    owners = [OWNER_OF[v] for v in (case.path_parameters or {}).values() if v in OWNER_OF]
    owner = owners[0] if owners else digest[1] % len(USERS)
    user = USERS[owner] if digest[0] % 4 else USERS[(owner + 1) % len(USERS)]
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {user['token']}"}
    return case
