"""A session overview for agents (SPEC §7 ``get_context``): bounded markdown over some types.

What an agent needs to find its bearings in one call: how many active items of each type, the
most used tags, the saved filters with their top items, and the items used and changed most
recently. Every item line names the item's type and its id (or, for a type addressed by name, its
name) so the agent can read it next.

Bounded whatever the data: each section has a character budget and stops listing (saying so) when
it is spent, so the whole answer stays under ``MAX_CHARS``. The queries are a constant number:
one count and one tag count per type, one filter query, one query per listed filter (at most
``MAX_FILTERS``) and one per recent list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from content import queries
from content.models import ItemState
from content.shapes import Context

MAX_CHARS = 10_000
MAX_FILTERS = 5
FILTER_ITEMS = 5
TOP_TAGS = 15
TITLE_CHARS = 80
NAME_CHARS = 60
# Section budgets (characters); with the header and footer they stay under MAX_CHARS.
BUDGETS = {"head": 800, "tags": 900, "filters": 3600, "used": 1900, "changed": 1900}
FOOTER_CHARS = 500


@dataclass
class _Section:
    budget: int
    lines: list[str] = field(default_factory=list)
    used: int = 0
    full: bool = False

    def add(self, line: str) -> bool:
        """Add the line if the budget allows; once it does not, note the cut (once)."""
        if self.full:
            return False
        if self.used + len(line) + 1 > self.budget - 60:
            self.full = True
            self.lines.append("- … (more left out to keep this overview short)")
            return False
        self.lines.append(line)
        self.used += len(line) + 1
        return True


def overview(owner: Any, *, types: list[str], recent: int, footer: str = "") -> Context:
    """``{markdown, counts}`` for the owner's items of ``types``; ``recent`` items per list."""
    counts = queries.active_counts(owner, types)
    head = _Section(BUDGETS["head"])
    labels = ", ".join(f"{n} {t}{'' if n == 1 else 's'}" for t, n in counts.items())
    head.add(f"# Overview of your {_plural(types)}")
    head.add(f"Active items: {labels}.")
    sections = [
        head,
        _tags(owner, types),
        _filters(owner, types),
        _recent(owner, types, recent, "last_used_at", "Recently used", BUDGETS["used"]),
        _recent(owner, types, recent, "updated_at", "Recently changed", BUDGETS["changed"]),
    ]
    text = "\n\n".join("\n".join(s.lines) for s in sections if s.lines)
    if footer:
        text += "\n\n" + _cut(footer, FOOTER_CHARS)
    return {"markdown": text, "counts": counts}


def _tags(owner: Any, types: list[str]) -> _Section:
    section = _Section(BUDGETS["tags"])
    rows = queries.top_tags(owner, types, TOP_TAGS)
    section.add("## Top tags")
    if not rows:
        section.add("(no tags yet)")
    else:
        section.add(", ".join(f"{row['name']} ({row['count']})" for row in rows))
    return section


def _filters(owner: Any, types: list[str]) -> _Section:
    section = _Section(BUDGETS["filters"])
    found = queries.filters_for_types(owner, types)
    section.add("## Saved filters")
    if not found:
        section.add("(none)")
    for saved in found[:MAX_FILTERS]:
        if not section.add(f"### {_cut(saved.name, NAME_CHARS)} (filter_id {saved.pk})"):
            break
        section.add(f"Matches: {_cut(_expression(saved.groups), 160)}")
        params = queries.ListParams(
            filter_groups=tuple(tuple(g) for g in saved.groups),
            filter_types=tuple(saved.content_types),
            sort_by=saved.default_sort_by,
            sort_order=saved.default_sort_order,
            limit=FILTER_ITEMS,
        )
        _items(section, queries.item_lines(owner, types, params))
    if len(found) > MAX_FILTERS:
        section.add(f"({len(found) - MAX_FILTERS} more filters: list them all with list_filters)")
    return section


def _recent(owner: Any, types: list[str], limit: int, key: str, title: str, budget: int) -> Any:
    section = _Section(budget)
    section.add(f"## {title}")
    params = replace(queries.ListParams(), sort_by=key, limit=limit, views=[ItemState.ACTIVE])
    _items(section, queries.item_lines(owner, types, params))
    return section


def _items(section: _Section, rows: list[dict[str, Any]]) -> None:
    if not rows:
        section.add("(no items)")
    for row in rows:
        if not section.add(item_line(row)):
            break


def item_line(row: dict[str, Any]) -> str:
    """``- note 0190… — Title`` or, for a type addressed by name, ``- prompt `code-review` — …``."""
    where = f"`{row['handle']}`" if row["handle"] else str(row["id"])
    title = _cut(" ".join((row["shown_title"] or "(untitled)").split()), TITLE_CHARS)
    return f"- {row['kind']} {where} — {title}"


def _expression(groups: list[list[str]]) -> str:
    if not groups:
        return "every item of its types"
    return " OR ".join("(" + " AND ".join(tags) + ")" for tags in groups)


def _plural(types: list[str]) -> str:
    names = [f"{t}s" for t in types]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
