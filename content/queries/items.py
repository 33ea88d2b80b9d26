"""One item as every door reads it: ``ItemRef``, ``get_owned``, its page, a line window, a search.

``get_owned`` loads one of the owner's items or raises the not-found error every door answers
with (another owner's item is simply not found). Lists live in ``content.queries.lists``, history
reads in ``content.queries.history``; JSON shapes in ``content.shapes``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone

from content import item_types
from content.errors import InvalidLineRange
from content.models import Item, ItemQuerySet, ItemState, Relationship
from content.queries import lists as queries
from content.rules import storable
from content.shapes import ItemData, Match, RelatedItem, SearchResult, item_data
from content.text.lines import LineRangeError, LineWindow, read_lines
from content.text.search import field_contains, search_text_limited
from tiddly import compiled
from tiddly.errors import NotFound, ValidationFailed

# Items belong to a user (settings.AUTH_USER_MODEL is Django's own).
Owner = User


@dataclass(frozen=True)
class ItemRef:
    """How a request names an item: by id, or by its type's ``name_field`` (prompts by name),
    which sees active items only."""

    model: type[Item]
    pk: uuid.UUID | None = None
    name: str | None = None

    @classmethod
    def by_id(cls, model: type[Item], raw: object) -> ItemRef:
        return cls(model, pk=parse_pk(raw, model))

    def lookup(self) -> dict[str, Any]:
        if self.name is None:
            return {"pk": self.pk}
        # PostgreSQL refuses NUL in a query parameter, and no valid name holds one: match nothing.
        if not storable(self.name) or self.model.name_field is None:
            return {"pk__in": []}
        return {self.model.name_field: self.name}

    def not_found(self) -> NotFound:
        label = self.model.type_name
        if self.name is None:
            return NotFound(f"No {label} with id {self.pk} was found.")
        return NotFound(
            f"No {label} named '{self.name}' was found. {label.capitalize()} names address "
            f"active {label}s only; restore archived ones first."
        )


def parse_pk(value: object, model: type[Item]) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFound(
            f"No {model.type_name} with id {value!r} was found: ids are UUIDs."
        ) from None


def get_owned(owner: Owner, ref: ItemRef) -> Item:
    """The owner's item with its content: by id in any state (GET shows the trash too), by name
    among active items only. Anything else — including another owner's item — is not found."""
    item = queries.one_with_content(item_query(owner, ref))
    if item is None:
        raise ref.not_found()
    return item


def get_owned_slice(owner: Owner, ref: ItemRef, at: int, chars: int) -> tuple[Item, str | None]:
    """``get_owned`` for a reader of some lines: ``(item, piece)``, where a large content that no
    cache holds comes as ``piece``, its characters from ``at`` (a line's start) on, at most
    ``chars + 1`` (``queries.lists.one_with_slice``); else the item's content is whole."""
    found = queries.one_with_slice(item_query(owner, ref), at, chars)
    if found is None:
        raise ref.not_found()
    return found


def get_owned_head(owner: Owner, ref: ItemRef) -> Item:
    """Like ``get_owned`` without the content (history reads reconstruct content themselves)."""
    head = ("id", "owner", "deleted_at")
    found = queries.one(
        compiled.then(item_query(owner, ref), ("only", head), lambda qs: qs.only(*head))
    )
    if found is None:
        raise ref.not_found()
    return found


def item_query(
    owner: Owner, ref: ItemRef, *, lock: bool = False, live: bool = False
) -> compiled.Shaped | QuerySet:
    """The query of the owner's item that ``ref`` names: by name among active items only, by id
    in any state (``live``: outside the trash); ``lock`` takes its row lock. Built and compiled
    once per shape (``tiddly.compiled``): every request of one item makes it."""
    model = ref.model

    def rows() -> ItemQuerySet:
        return cast(
            ItemQuerySet, model.objects.select_for_update() if lock else model.objects.all()
        )

    owner_id = getattr(owner, "pk", owner)
    if ref.name is None:

        def by_id(owner_id: Any, pk: uuid.UUID) -> QuerySet:
            qs = rows().filter(owner_id=owner_id, pk=pk)
            return qs.filter(deleted_at__isnull=True) if live else qs

        return compiled.Shaped(model, ("item", lock, live), by_id, (owner_id, ref.pk))
    field = model.name_field
    if field is None or not storable(ref.name):  # no item can have that name
        return model.objects.none()

    def by_name(owner_id: Any, name: str, now: datetime) -> QuerySet:
        return rows().filter(owner_id=owner_id, **{field: name}).in_state(ItemState.ACTIVE, now)

    return compiled.Shaped(
        model, ("named", lock, field), by_name, (owner_id, ref.name, timezone.now())
    )


# --- an item's page: the item and the items linked to it ----------------------------------------


def item_detail(owner: Owner, item: Item, window: LineWindow | None = None) -> ItemData:
    """What GET of one item answers (REST and MCP alike): the item and its ``relationships``."""
    data = item_data(item, window=window)
    data["relationships"] = related_items(owner, item)
    return data


def related_items(owner: Any, item: Item) -> list[RelatedItem]:
    """The other ends of the item's links, oldest link first, items in the trash left out.

    One query for the links and one per item type at their other ends, whatever their number.
    """
    links = Relationship.objects.filter(owner=owner).touching(item.type_name, item.pk)
    ends = [(link, *link.other_end(item.type_name, item.pk)) for link in links.order_by("id")]
    wanted: dict[str, list[Any]] = {}
    for _, type_name, pk in ends:
        wanted.setdefault(type_name, []).append(pk)
    found: dict[tuple[str, Any], Item] = {}
    for type_name, ids in wanted.items():
        model = item_types.model_for(type_name)
        columns = ["id", "title", *([model.title_fallback] if model.title_fallback else [])]
        live = queries.owned(owner, model).filter(pk__in=ids, deleted_at__isnull=True)
        found.update({(type_name, other.pk): other for other in live.only(*columns)})
    return [
        {
            "relationship_id": str(link.pk),
            "type": type_name,
            "id": str(pk),
            "title": display_title(found[(type_name, pk)]),
            "description": link.description,
        }
        for link, type_name, pk in ends
        if (type_name, pk) in found
    ]


def display_title(item: Item) -> str | None:
    """The one display title (``Item.display_title``): the title, else a bookmark's URL host and
    path or a prompt's name."""
    return item.display_title()


# --- inside one item ----------------------------------------------------------------------------

SEARCH_FIELDS = ("content", "title", "description")


def line_window(
    content: str | None, start_line: int | None = None, end_line: int | None = None
) -> LineWindow | None:
    try:
        return read_lines(content, start_line, end_line)
    except LineRangeError as exc:
        raise InvalidLineRange(str(exc)) from None


def within_item_search(
    item: Item, *, q: str, fields: str, case_sensitive: bool, context_lines: int
) -> SearchResult:
    """SPEC §4.2: every match's line and context (``fields`` is a comma list)."""
    names = [f.strip().lower() for f in fields.split(",") if f.strip()]
    unknown = sorted(set(names) - set(SEARCH_FIELDS))
    if unknown or not names:
        raise ValidationFailed(
            {
                "fields": [
                    f"Invalid fields: {', '.join(unknown) or '(none)'}. Valid fields: "
                    f"{', '.join(SEARCH_FIELDS)}."
                ]
            }
        )
    matches: list[Match] = []
    total = 0
    for name in dict.fromkeys(names):
        value = getattr(item, name)
        if value is None:
            continue
        if name == "content":
            found, count = search_text_limited(
                value,
                q,
                case_sensitive=case_sensitive,
                context_lines=context_lines,
                limit=settings.TIDDLY_SEARCH_MAX_MATCHES,
            )
            total += count
            matches.extend({"field": name, "line": m.line, "context": m.context} for m in found)
        elif field_contains(value, q, case_sensitive=case_sensitive):
            total += 1
            matches.append({"field": name, "line": None, "context": value})
    body: SearchResult = {"matches": matches, "total_matches": total}
    if total > len(matches):
        # Only pathological queries (a letter in a 10 MB item) get here; the count stays exact.
        body["truncated"] = True
    return body
