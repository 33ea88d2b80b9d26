"""Every REST route under /api/ against every combination of scopes (SPEC §8.1).

The rules are written out here, route by route, independently of the views: the URL map is
walked, and a route without a rule in ``RULES`` (or a rule without a route) fails the test, so a
new endpoint cannot ship without someone deciding what it needs. Each request runs in a
savepoint that is rolled back, so an allowed write does not change what the next combination
sees.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from rest_framework.test import APIClient

from content import services
from content.history import Actor
from content.item_types import model_for
from content.models import Webhook
from content.services import create_item, relationships
from content.services.relationships import End
from tiddly.models import ApiToken
from tiddly.scopes import ALL_SCOPES

pytestmark = pytest.mark.django_db

COMBINATIONS = [
    frozenset(c) for n in range(len(ALL_SCOPES) + 1) for c in itertools.combinations(ALL_SCOPES, n)
]
AREA = {"bookmark": "content", "note": "content", "prompt": "prompts"}
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Rule:
    """``all_of``: every scope listed; ``any_of``: one of them; ``public``; ``session``."""

    kind: str
    scopes: tuple[str, ...] = ()

    def allows(self, held: frozenset[str]) -> bool:
        if self.kind == "public":
            return True
        if self.kind == "session":
            return False  # no bearer token, whatever its scopes
        if self.kind == "any_of":
            return any(s in held for s in self.scopes)
        return all(s in held for s in self.scopes)


def _item_rules() -> dict[tuple[str, str], Rule]:
    rules: dict[tuple[str, str], Rule] = {}
    for kind, area in AREA.items():
        read, write = Rule("all_of", (f"{area}:read",)), Rule("all_of", (f"{area}:write",))
        rules |= {
            (f"{kind}-list", "GET"): read,
            (f"{kind}-list", "POST"): write,
            (f"{kind}-detail", "GET"): read,
            (f"{kind}-detail", "PATCH"): write,
            (f"{kind}-detail", "DELETE"): write,
            (f"{kind}-archive", "POST"): write,
            (f"{kind}-unarchive", "POST"): write,
            (f"{kind}-restore", "POST"): write,
            # Recording that an item was used is part of reading it (as MCP prompts/get).
            (f"{kind}-track-usage", "POST"): read,
            (f"{kind}-search", "GET"): read,
            (f"{kind}-related", "GET"): read,
            (f"{kind}-suggestions", "GET"): read,
            (f"{kind}-str-replace", "PATCH"): write,
            (f"{kind}-history", "GET"): read,
            (f"{kind}-history-version", "GET"): read,
            (f"{kind}-history-diff", "GET"): read,
            (f"{kind}-history-restore", "POST"): write,
            # A public link is a change of the item (a history event, SPEC §17.4).
            (f"{kind}-share", "POST"): write,
            (f"{kind}-share", "DELETE"): write,
        }
    prompt_read, prompt_write = (
        Rule("all_of", ("prompts:read",)),
        Rule("all_of", ("prompts:write",)),
    )
    rules |= {
        ("prompt-by-name", "GET"): prompt_read,
        ("prompt-by-name", "PATCH"): prompt_write,
        ("prompt-str-replace-by-name", "PATCH"): prompt_write,
        ("prompt-render", "POST"): prompt_read,  # renders, stores nothing
        # Page capture (SPEC §15): capturing writes the bookmark; a preview only reads.
        ("bookmark-capture", "POST"): Rule("all_of", ("content:write",)),
        ("bookmark-preview", "GET"): Rule("all_of", ("content:read",)),
    }
    return rules


ANY_READ = Rule("any_of", ("content:read", "prompts:read"))
ANY_WRITE = Rule("any_of", ("content:write", "prompts:write"))
PUBLIC = Rule("public")
RULES: dict[tuple[str, str], Rule] = {
    **_item_rules(),
    ("content-list", "GET"): ANY_READ,
    ("tag-list", "GET"): ANY_READ,
    # The tag is on a note and a prompt: renaming or deleting it changes both areas.
    ("tag-detail", "PATCH"): Rule("all_of", ("content:write", "prompts:write")),
    ("tag-detail", "DELETE"): Rule("all_of", ("content:write", "prompts:write")),
    ("token-list", "GET"): Rule("session"),
    ("token-list", "POST"): Rule("session"),
    ("token-detail", "PATCH"): Rule("session"),
    ("token-detail", "DELETE"): Rule("session"),
    ("api-root", "GET"): PUBLIC,
    ("schema", "GET"): PUBLIC,
    ("swagger-ui", "GET"): PUBLIC,
    ("redoc", "GET"): PUBLIC,
    # Import/export (SPEC §14) span both areas: one area's scope lets the request in, and the
    # view then checks each area it reads or writes (tested in content/tests/test_*port_api.py).
    ("export", "GET"): ANY_READ,
    ("import", "POST"): ANY_WRITE,
    ("filter-list", "GET"): ANY_READ,
    ("filter-list", "POST"): ANY_WRITE,
    ("filter-detail", "GET"): ANY_READ,
    ("filter-detail", "PATCH"): ANY_WRITE,
    ("filter-detail", "DELETE"): ANY_WRITE,
    ("relationship-list", "GET"): Rule("all_of", ("content:read",)),
    ("relationship-list", "POST"): Rule("all_of", ("content:write",)),
    ("relationship-detail", "GET"): Rule("all_of", ("content:read",)),
    ("relationship-detail", "PATCH"): Rule("all_of", ("content:write",)),
    ("relationship-detail", "DELETE"): Rule("all_of", ("content:write",)),
    # A revert touches only the areas the caller may write.
    ("history-revert", "POST"): ANY_WRITE,
    ("changes", "GET"): ANY_READ,
    # A webhook sends data out: every method needs a write scope (SPEC §17.2).
    ("webhook-list", "GET"): ANY_WRITE,
    ("webhook-list", "POST"): ANY_WRITE,
    ("webhook-detail", "GET"): ANY_WRITE,
    ("webhook-detail", "PATCH"): ANY_WRITE,
    ("webhook-detail", "DELETE"): ANY_WRITE,
    ("webhook-deliveries", "GET"): ANY_WRITE,
    ("webhook-ping", "POST"): ANY_WRITE,
    ("search", "GET"): ANY_READ,
    ("search-status", "GET"): ANY_READ,
    ("prompt-export-skills", "GET"): Rule("all_of", ("prompts:read",)),
}


def _walk(patterns: list[Any], prefix: str = "") -> list[tuple[str, str, Any]]:
    found = []
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found += _walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("api/"):
            found.append((entry.name, route, entry.callback))
    return found


def api_routes() -> dict[tuple[str, str], str]:
    """``(url name, HTTP method)`` -> route, for every route under /api/."""
    routes = {}
    for name, route, callback in _walk(get_resolver().url_patterns):
        actions = getattr(callback, "actions", None)
        view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        methods = list(actions) if actions else [m for m in HTTP_METHODS if hasattr(view, m)]
        # HEAD follows GET (DRF adds it to a ViewSet's actions on its first request).
        for method in (m for m in methods if m in HTTP_METHODS):
            routes[(name, method.upper())] = route
    return routes


def test_every_api_route_has_a_scope_rule_and_every_rule_a_route() -> None:
    walked = set(api_routes())
    assert walked - set(RULES) == set(), "routes without a scope rule"
    assert set(RULES) - walked == set(), "rules for routes that do not exist"


def test_every_operation_in_the_openapi_schema_is_a_walked_route(api: APIClient) -> None:
    paths = api.get(reverse("schema"), HTTP_ACCEPT="application/json").json()["paths"]
    for path, operations in paths.items():
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        name = resolve(concrete).url_name
        for method in operations:
            if method.upper() in {m.upper() for m in HTTP_METHODS}:
                assert (name, method.upper()) in RULES, (path, method)


# --- the matrix ---------------------------------------------------------------------------------


@pytest.fixture
def world(owner: Any) -> dict[str, Any]:
    def create(kind: str, **data: Any) -> Any:
        return create_item(owner=owner, model=model_for(kind), data=data, actor=Actor("test"))

    made = {
        "note": create("note", title="N", content="one\ntwo\n", tags=["shared"]),
        "bookmark": create("bookmark", url="https://example.com/a", title="B"),
        "prompt": create(
            "prompt",
            name="greet",
            content="Hello {{ who }}",
            arguments=[{"name": "who", "required": True}],
            tags=["shared"],
        ),
        "token": ApiToken.issue(owner=owner, name="listed")[0],
    }
    note, bookmark = made["note"], made["bookmark"]
    made["filter"] = services.create_filter(
        owner=owner,
        data={"name": "work", "content_types": ["note"], "expression": {"groups": []}},
    )
    made["relationship"], _ = relationships.create_link(
        owner=owner,
        source=End("note", note.pk),
        target=End("bookmark", bookmark.pk),
        description=None,
        actor=Actor("test"),
    )
    made["webhook"] = Webhook.objects.create(
        owner=owner, url="https://example.com/hook", secret="whsec_AAAA"
    )
    return made


def _url(name: str, route: str, world: dict[str, Any]) -> str:
    kwargs: dict[str, Any] = {}
    groups = set(re.findall(r"\(\?P<(\w+)>", route)) | set(re.findall(r"<(?:\w+:)?(\w+)>", route))
    kind = name.split("-")[0]
    if "pk" in groups:
        kwargs["pk"] = world[kind].pk
    if "name" in groups:
        kwargs["name"] = "shared" if kind == "tag" else world["prompt"].name
    if "version" in groups:
        kwargs["version"] = 1
    return reverse(name, kwargs=kwargs)


def _client(owner: Any, scopes: frozenset[str]) -> APIClient:
    _, plaintext = ApiToken.issue(owner=owner, name="matrix", scopes=" ".join(sorted(scopes)))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


ROUTES = api_routes()


@pytest.mark.parametrize(
    ("name", "method"), sorted(RULES), ids=[f"{m} {n}" for n, m in sorted(RULES)]
)
def test_each_scope_combination_is_allowed_or_refused_by_the_route_rule(
    owner: Any, world: dict[str, Any], name: str, method: str
) -> None:
    rule = RULES[(name, method)]
    url = _url(name, ROUTES[(name, method)], world)
    for held in COMBINATIONS:
        client = _client(owner, held)
        with transaction.atomic():
            response = getattr(client, method.lower())(url, {}, format="json")
            transaction.set_rollback(True)
        label = (
            method,
            url,
            sorted(held),
            response.status_code,
            getattr(response, "content", b"")[:300],
        )
        if rule.allows(held):
            assert response.status_code != 403, label
            continue
        assert response.status_code == 403, label
        body = response.json()
        assert body["error"] == "forbidden", label
        missing = [s for s in rule.scopes if s not in held]
        if rule.kind == "all_of":
            assert all(f"'{s}'" in body["message"] for s in missing), label


def test_a_session_may_use_every_scoped_route(
    session_api: APIClient, world: dict[str, Any]
) -> None:
    for (name, method), rule in RULES.items():
        if rule.kind in {"all_of", "any_of"}:
            url = _url(name, ROUTES[(name, method)], world)
            with transaction.atomic():
                response = getattr(session_api, method.lower())(url, {}, format="json")
                transaction.set_rollback(True)
            assert response.status_code != 403, (method, url, response.content[:300])


# --- what cross-area routes show ----------------------------------------------------------------


def _listed_types(client: APIClient, url: str) -> set[str]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return {item["type"] for item in response.json()["results"]}


def test_the_content_list_shows_only_the_areas_the_token_may_read(
    owner: Any, world: dict[str, Any]
) -> None:
    assert _listed_types(_client(owner, frozenset({"content:read"})), "/api/content/") == {
        "note",
        "bookmark",
    }
    assert _listed_types(_client(owner, frozenset({"prompts:read"})), "/api/content/") == {"prompt"}
    both = _client(owner, frozenset({"content:read", "prompts:read"}))
    assert _listed_types(both, "/api/content/") == {"note", "bookmark", "prompt"}


def test_asking_the_content_list_for_an_unreadable_type_is_403_naming_the_scope(
    owner: Any, world: dict[str, Any]
) -> None:
    response = _client(owner, frozenset({"content:read"})).get("/api/content/?type=prompt")
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert "'prompts:read'" in response.json()["message"]
    mixed = _client(owner, frozenset({"content:read"})).get("/api/content/?type=note&type=prompt")
    assert mixed.status_code == 403


def test_tag_counts_cover_only_the_readable_areas(owner: Any, world: dict[str, Any]) -> None:
    def counts(*scopes: str) -> dict[str, int]:
        response = _client(owner, frozenset(scopes)).get("/api/tags/")
        return {t["name"]: t["count"] for t in response.json()}

    assert counts("content:read") == {"shared": 1}
    assert counts("prompts:read") == {"shared": 1}
    assert counts("content:read", "prompts:read") == {"shared": 2}


def test_a_tag_used_only_by_notes_needs_only_content_write(
    owner: Any, world: dict[str, Any]
) -> None:
    create_item(
        owner=owner,
        model=model_for("note"),
        data={"title": "x", "tags": ["mine"]},
        actor=Actor("t"),
    )
    writer = _client(owner, frozenset({"content:write"}))
    response = writer.patch("/api/tags/mine/", {"name": "ours"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"name": "ours", "count": 0}  # it cannot read the counts
    prompts_only = _client(owner, frozenset({"prompts:write", "prompts:read"}))
    refused = prompts_only.delete("/api/tags/ours/")
    assert refused.status_code == 403
    assert "'content:write'" in refused.json()["message"]
    assert writer.delete("/api/tags/ours/").status_code == 204


def test_an_unknown_tag_is_404_for_any_writer(owner: Any, world: dict[str, Any]) -> None:
    response = _client(owner, frozenset({"prompts:write"})).delete("/api/tags/nope/")
    assert response.status_code == 404
