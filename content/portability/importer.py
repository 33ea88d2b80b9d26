"""The import use-case (SPEC §14): a Netscape bookmark file or a Tiddly JSON export, in one go.

``import_items()`` reads the file as a stream, turns each entry into an ``ImportRecord``,
validates and normalises it with the same rules every write path uses (``content.rules`` and
the type's own ``apply_type_fields``/``validate_state`` on the unsaved model instance, read from
the item-type registry) and saves everything in **one transaction**: a malformed file (``InvalidImport``, raised even after many entries were read) or an oversized one
rolls it all back. Entries that cannot be imported are *skipped with a reason*, never fatal.

Why creates do not call ``services.create_item`` one by one: at 100 000 bookmarks that is ~10
queries per item. New items have no history chain, no row to lock and no old tags, so the
importer does in bulk exactly what ``create_item`` does per item — the same normalisation, the
uniqueness check (against the database per batch and within the file), tags resolved once for
the whole import, bulk inserts of items and tag links, and their version-1 history rows
(``history.record_created_versions``, source ``import``). Updates (``on_conflict=update``) touch
existing items, with locks, diffs and history chains, so they go through
``services.update_item``.

Decisions worth knowing:
- uniqueness is the database's (each type's ``unique_field``: URL per owner among non-deleted
  bookmarks, name among non-deleted prompts): a repeat within the file is skipped (the first
  wins); items in the file's trash (``deleted_at``) never clash;
- an entry that is an item the account holds already is skipped or updated per
  ``on_conflict``, and listed in the report's ``matched`` with how it was found: each type's
  ``import_keys`` in order (bookmarks by URL, notes by id, prompts by id else name), so
  importing an account's own export creates nothing new;
- Tiddly JSON ids are not reused for new items: ids are global, so an import gets new ones (an
  export of one account imported into another must not collide with, or reveal, existing rows:
  an id matches only the importing owner's own live items);
- ``on_conflict=update`` overwrites the fields the file carries (for Netscape: title, tags, and
  the description/notes/archived state when present); ``created_at`` of an existing item stays;
- Netscape folder names and ``TAGS`` become tags by slugifying them ("Dev Tools" → ``dev-tools``,
  "Café" → ``cafe``, "C++" → ``c-plus-plus``; see ``netscape_records.tag_slug``), each renamed
  name listed in the report's ``tags_renamed``; names with no usable character are dropped
  with a warning in ``errors``.
  Over-long browser titles/descriptions are shortened (with a warning) rather than lost; entries
  of Tiddly JSON follow the limits strictly (skipped).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import IO, Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone
from rest_framework import status

from content import bulk, history, item_types, rules, services
from content.errors import FieldLimitExceeded
from content.history import Actor
from content.models import Bookmark, Item, Tag
from content.portability.errors import InvalidImport
from content.portability.netscape import NetscapeEntry, NetscapeError, NetscapeReader, read_chunks
from content.portability.netscape_records import NetscapeConverter
from content.portability.records import ImportRecord, ImportSkip
from content.portability.report import ImportMatch, ImportReport
from content.portability.tiddly_json import TiddlyDocument, read_tiddly_json
from content.queries import ItemRef, Owner
from content.services import capture as capture_service
from content.services import relationships
from content.services.relationships import End
from content.services.retention import refresh_statistics
from tiddly.errors import TiddlyError
from tiddly.scopes import require_scope, scope_for, writable_areas

FORMATS = ("json", "netscape")
CONFLICT_CHOICES = ("skip", "update")
BATCH_SIZE = 1000
STATISTICS_AFTER = 1000  # items created by one import that refresh SQLite's planner statistics
ELLIPSIS = "…"
# What an update from the file may change besides the type's own fields.
COMMON_FIELDS = ("title", "description", "content", "archived_at")
Progress = Callable[[int], object]


def max_import_bytes() -> int:
    return int(settings.TIDDLY_IMPORT_MAX_BYTES)


class ImportConflict(TiddlyError):
    """Another request created a clashing item while the import ran; nothing was imported."""

    status_code = status.HTTP_409_CONFLICT
    code = "conflict"

    def __init__(self) -> None:
        super().__init__(
            "Another change created an item with a URL or name that this import also creates, "
            "while the import was running. Nothing was imported; retry the import."
        )


# --- the use-case -------------------------------------------------------------------------------


def import_items(
    *,
    owner: Owner,
    stream: IO[bytes],
    size: int | None = None,
    format: str | None = None,
    on_conflict: str = "skip",
    actor: Actor | None = None,
    principal: Any = None,
    progress: Progress | None = None,
    capture: bool = False,
) -> ImportReport:
    """Import ``stream`` (bytes) into ``owner``'s account; ``format`` None = detect.

    ``size`` (when known) is checked against ``TIDDLY_IMPORT_MAX_BYTES`` before reading; the
    limit is enforced while reading too. ``progress(n)`` is called with each ``n`` bytes read.
    ``principal`` is the caller's credential (``request.auth``; None = a session or a command,
    which may write everything): an entry of a type whose ``<area>:write`` scope it lacks stops
    the import with ``Forbidden``. Raises ``InvalidImport`` (malformed file),
    ``FieldLimitExceeded`` (too big) or ``Forbidden``; in every case nothing is saved.
    ``capture``: queue a page capture of every created bookmark that has no content.
    """
    limit = max_import_bytes()
    if size is not None and size > limit:
        raise FieldLimitExceeded("file", size, limit, unit="bytes")
    if on_conflict not in CONFLICT_CHOICES:
        raise rules.invalid("on_conflict", "Choose 'skip' or 'update'.")
    chunks = _limited(read_chunks(stream), limit, progress)
    first = next(chunks, b"")
    kind = format or detect_format(first)
    if kind not in FORMATS:
        raise rules.invalid("format", "Choose 'json' or 'netscape', or leave it out to detect.")
    report = ImportReport()
    importer = _Importer(owner, on_conflict, actor or Actor(source="import"), principal, report)
    documents: list[TiddlyDocument] = []
    with transaction.atomic():
        for record in _records(kind, chain([first], chunks), report, documents):
            importer.add(record)
        importer.flush()
        for document in documents:
            importer.add_filters(document.filters)
            importer.add_relationships(document.relationships)
        if capture:
            capture_service.request_captures(bookmarks=importer.created_bookmarks)
    if sum(report.created.values()) >= STATISTICS_AFTER:
        # A large import changes the tables' shape now, not at the next hourly refresh.
        refresh_statistics()
    return report


def detect_format(head: bytes) -> str:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        raise InvalidImport("The file is empty")
    if text[:1] in (b"{", b"["):
        return "json"
    if text[:1] == b"<":
        return "netscape"
    raise InvalidImport(
        "The file is neither a Tiddly JSON export nor a Netscape bookmark (HTML) file",
        line=1,
        column=1,
    )


def _limited(chunks: Iterable[bytes], limit: int, progress: Progress | None) -> Iterator[bytes]:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise FieldLimitExceeded("file", total, limit, unit="bytes")
        if progress is not None:
            progress(len(chunk))
        yield chunk


def _records(
    kind: str, chunks: Iterable[bytes], report: ImportReport, documents: list[TiddlyDocument]
) -> Iterator[ImportRecord | ImportSkip]:
    """The file's item entries; a Tiddly JSON document is also appended to ``documents`` (its
    filters and relationships are imported after the items)."""
    if kind == "json":
        own_fields = {name: model.extra_fields for name, model in item_types.registry().items()}
        document = read_tiddly_json(b"".join(chunks), type_fields=own_fields)
        documents.append(document)
        for warning in document.warnings:
            report.warn(warning)
        yield from document.records()
        return
    reader = NetscapeReader(chunks, warn=report.warn, max_tags=rules.limit("tags_per_item"))
    converter = NetscapeConverter(report.warn, report.rename)
    try:
        for entry in reader.entries():
            yield converter.record(entry) if isinstance(entry, NetscapeEntry) else entry
    except NetscapeError as exc:
        raise InvalidImport(exc.message, line=exc.line, column=exc.column) from None


# --- validating and saving ----------------------------------------------------------------------


@dataclass(slots=True)
class _Prepared:
    record: ImportRecord
    item: Item
    tags: list[str]

    @property
    def key(self) -> tuple[str, Any] | None:
        """What must be unique: the type's ``unique_field`` among live items (url, name)."""
        unique = self.item.unique_field
        if unique is None or self.item.deleted_at is not None:
            return None
        return (self.item.type_name, getattr(self.item, unique))


class _Importer:
    def __init__(
        self, owner: Owner, on_conflict: str, actor: Actor, principal: Any, report: ImportReport
    ) -> None:
        self.owner = owner
        self.on_conflict = on_conflict
        self.actor = actor
        self.principal = principal
        self.report = report
        self.now = timezone.now()
        self.seen: dict[tuple[str, Any], int] = {}
        # A unique value as the file writes it -> its normalised key in ``seen``.
        self.raw_keys: dict[tuple[str, str], tuple[str, Any]] = {}
        self.pending: list[_Prepared] = []
        self.tag_ids: dict[str, Any] = {}
        self.allowed: set[str] = set()
        # The file's item ids -> (type, id here): the ends of the file's relationships.
        self.ids: dict[str, tuple[str, Any]] = {}
        # Created bookmarks without content, captured after the import when asked (SPEC §15).
        self.created_bookmarks: list[Any] = []

    def add(self, record: ImportRecord | ImportSkip) -> None:
        if isinstance(record, ImportSkip):
            self.report.skip(record)
            return
        model = item_types.registry()[record.type]
        self._check_scope(model)
        raw_key = self._raw_key(model, record)
        known = self.raw_keys.get(raw_key) if raw_key else None
        if known is not None and self.seen.get(known, record.index) != record.index:
            # The same unique value, as written, as an earlier entry: skip it before the
            # normalising and validating that a file of a million repeats would spend on it.
            self._skip(record, self._repeat_reason(model, self.seen[known]))
            return
        try:
            prepared = self._prepare(model, record)
        except TiddlyError as exc:
            self._skip(record, exc.message)
            return
        key = prepared.key
        if key is not None:
            if raw_key:
                self.raw_keys[raw_key] = key
            first = self.seen.setdefault(key, record.index)
            if first != record.index:
                self._skip(record, self._repeat_reason(model, first))
                return
        self.pending.append(prepared)
        if len(self.pending) >= BATCH_SIZE:
            self.flush()

    @staticmethod
    def _raw_key(model: type[Item], record: ImportRecord) -> tuple[str, str] | None:
        value = record.type_fields.get(model.unique_field) if model.unique_field else None
        if not isinstance(value, str) or record.deleted_at is not None:
            return None
        return (record.type, value)

    @staticmethod
    def _repeat_reason(model: type[Item], first: int) -> str:
        return f"Repeats the {model.unique_field} of entry {first} (the first wins)."

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        existing = self._existing(pending)
        creates = []
        for prepared in pending:
            found = self._match(prepared, existing)
            if found is None:
                creates.append(prepared)
                continue
            pk, matched_by = found
            item = prepared.item
            if self.on_conflict == "skip":
                self._remember(prepared, pk)
                self._skip(
                    prepared.record,
                    f"A {item.type_name} with this {matched_by} already exists (id {pk}); "
                    "on_conflict=skip keeps it unchanged.",
                )
                self._matched(prepared, pk, matched_by, "skipped")
            elif self._update(prepared, pk, matched_by):
                self._matched(prepared, pk, matched_by, "updated")
        self._create(creates)

    def _match(
        self, prepared: _Prepared, existing: dict[tuple[str, str, Any], Any]
    ) -> tuple[Any, str] | None:
        """The live item this entry is, by the type's ``import_keys`` in order, and the key."""
        for key in prepared.item.import_keys:
            value = _import_value(prepared, key)
            pk = existing.get((prepared.item.type_name, key, value)) if value is not None else None
            if pk is not None:
                return pk, key
        return None

    def _matched(self, prepared: _Prepared, pk: Any, matched_by: str, action: str) -> None:
        kind = prepared.item.type_name
        self.report.match(ImportMatch(prepared.record.index, kind, str(pk), matched_by, action))

    def _remember(self, prepared: _Prepared, pk: Any) -> None:
        if prepared.record.source_id is not None:
            self.ids[prepared.record.source_id] = (prepared.item.type_name, pk)

    def add_filters(self, entries: list[Any]) -> None:
        """The file's saved filters, through the filter service; a bad or taken one is reported
        in ``errors`` and the rest go on (as a bad item entry is skipped)."""
        fields = ("name", "content_types", "expression", "default_sort_by", "default_sort_order")
        if entries:
            self.report.created.setdefault("filter", 0)
        for index, raw in enumerate(entries):
            name = raw.get("name") if isinstance(raw, dict) else None
            try:
                if not isinstance(raw, dict):
                    raise rules.invalid("filters", "A filter must be an object.")
                if not writable_areas(self.principal):  # a filter spans areas: one will do
                    require_scope(self.principal, "content:write")
                with transaction.atomic():
                    services.create_filter(
                        owner=self.owner, data={k: raw[k] for k in fields if k in raw}
                    )
            except TiddlyError as exc:
                self.report.warn(f"Filter {index} ({name!r}) was not imported: {exc.message}")
                continue
            self.report.created["filter"] += 1

    def add_relationships(self, entries: list[Any]) -> None:
        """The file's links between its items: each end is mapped to the item the import
        created (or kept, or updated) for that file id; a link whose end is not among them is
        reported in ``errors``."""
        if entries:
            self.report.created.setdefault("relationship", 0)
        for index, raw in enumerate(entries):
            try:
                if not isinstance(raw, dict):
                    raise rules.invalid("relationships", "A relationship must be an object.")
                source, target = (self._end(raw, side) for side in ("source", "target"))
                require_scope(self.principal, scope_for("content", "POST"))
                with transaction.atomic():
                    _, created = relationships.create_link(
                        owner=self.owner,
                        source=source,
                        target=target,
                        description=raw.get("description"),
                        actor=self.actor,
                    )
            except TiddlyError as exc:
                self.report.warn(f"Relationship {index} was not imported: {exc.message}")
                continue
            self.report.created["relationship"] += int(created)

    def _end(self, raw: dict[str, Any], side: str) -> End:
        found = self.ids.get(str(raw.get(f"{side}_id")))
        if found is None:
            raise rules.invalid(
                f"{side}_id", f"Its {side} ({raw.get(f'{side}_id')!r}) is not an item of this file."
            )
        return End(found[0], found[1])

    def _check_scope(self, model: type[Item]) -> None:
        """The caller must hold the write scope of every type the file holds (once per type)."""
        if model.type_name not in self.allowed:
            require_scope(self.principal, scope_for(model.scope_area, "POST"))
            self.allowed.add(model.type_name)

    def _skip(self, record: ImportRecord, reason: str) -> None:
        self.report.skip(ImportSkip(record.index, reason, record.title, record.url))

    # --- one entry ---

    def _prepare(self, model: type[Item], record: ImportRecord) -> _Prepared:
        """The unsaved item, validated and normalised as ``create_item`` does it."""
        item = model(owner=self.owner)
        for name in ("title", "description", "content"):
            setattr(item, name, self._text(record, name))
        self._dates(item, record)
        type_fields = {n: _checked(model, n, v) for n, v in record.type_fields.items()}
        item.apply_type_fields(type_fields, creating=True)
        item.validate_state()
        return _Prepared(record, item, rules.normalize_tags(record.tags))

    def _text(self, record: ImportRecord, name: str) -> str | None:
        value = getattr(record, name)
        if value is None:
            return None
        _storable(name, value)
        limit = rules.limit(name)
        if record.lenient and name != "content" and len(value) > limit:
            self.report.warn(
                f"Entry {record.index}: the {name} was shortened from {len(value)} to {limit} "
                "characters."
            )
            value = value[: limit - 1] + ELLIPSIS
        rules.check_length(name, value)
        return value

    def _dates(self, item: Item, record: ImportRecord) -> None:
        created = record.created_at or self.now
        item.created_at = created
        item.updated_at = max(record.updated_at or created, created)
        item.last_used_at = record.last_used_at or created
        item.archived_at = record.archived_at
        item.deleted_at = record.deleted_at

    # --- saving ---

    def _existing(self, pending: list[_Prepared]) -> dict[tuple[str, str, Any], Any]:
        """The owner's live items that the batch's entries may be: ``(type, key, value) → pk``
        for every key of each type's ``import_keys`` (one query per type and key)."""
        found: dict[tuple[str, str, Any], Any] = {}
        for kind, model in item_types.registry().items():
            group = [p for p in pending if p.item.type_name == kind]
            for key in model.import_keys if group else ():
                values = {v for p in group if (v := _import_value(p, key)) is not None}
                if not values:
                    continue
                column = "pk" if key == "id" else key
                rows = (
                    model.objects.filter(owner=self.owner, deleted_at__isnull=True)
                    .filter(**{f"{column}__in": values})
                    .values_list(column, "pk")
                )
                found.update(((kind, key, value), pk) for value, pk in rows)
        return found

    def _update(self, prepared: _Prepared, pk: Any, matched_by: str) -> bool:
        """Overwrite the existing item with what the file carries, through the update service
        (row lock, change detection, a version with source ``import``). Its unique field stays:
        an item matched by id keeps its own name rather than clash with another's."""
        record, item = prepared.record, prepared.item
        names = [
            f
            for f in (*COMMON_FIELDS, *item.extra_fields)
            if f in record.present and f != item.unique_field
        ]
        data: dict[str, Any] = {f: getattr(item, f) for f in names}
        if "tags" in record.present:
            data["tags"] = prepared.tags
        try:
            services.update_item(
                owner=self.owner,
                ref=ItemRef(type(item), pk=pk),
                data=services.item_fields(data),
                actor=self.actor,
            )
        except TiddlyError as exc:
            self._skip(record, exc.message)
            return False
        self._remember(prepared, pk)
        self.report.updated[item.type_name] += 1
        return True

    def _create(self, creates: list[_Prepared]) -> None:
        if not creates:
            return
        self._resolve_tags({name for p in creates for name in p.tags})
        try:
            with transaction.atomic():
                for kind, model in item_types.registry().items():
                    group = [p for p in creates if p.item.type_name == kind]
                    if group:
                        self._insert(model, group)
                        self.report.created[kind] += len(group)
        except IntegrityError:
            raise ImportConflict() from None

    def _insert(self, model: type[Item], group: list[_Prepared]) -> None:
        """What ``create_item`` writes per item, for the whole group in three bulk inserts.

        The versions' time is the import's (not the items' ``created_at`` from the file):
        history tells when Tiddly recorded a change, and reverting a token's changes "since"
        relies on it.
        """
        items = [p.item for p in group]
        bulk.insert_objects(model, items)
        if model is Bookmark:
            self.created_bookmarks.extend(i for i in items if not i.content)
        for prepared in group:
            self._remember(prepared, prepared.item.pk)
        relation = model.tags.field
        columns = (relation.m2m_column_name(), relation.m2m_reverse_name())
        links = ((p.item.pk, self.tag_ids[name]) for p in group for name in p.tags)
        bulk.insert_rows(model.tags.through, columns, links)
        history.record_created_versions(
            items,
            actor=self.actor,
            tag_names_by_id={p.item.pk: p.tags for p in group},
            at=self.now,
        )

    def _resolve_tags(self, names: set[str]) -> None:
        """Get or create each tag name once per import (one query per 1 000 new names)."""
        missing = iter(sorted(n for n in names if n not in self.tag_ids))
        while batch := list(islice(missing, BATCH_SIZE)):
            found = self._tag_rows(batch)
            new = [Tag(owner=self.owner, name=n) for n in batch if n not in found]
            if new:
                Tag.objects.bulk_create(new, ignore_conflicts=True)
                found = self._tag_rows(batch)
            self.tag_ids.update(found)

    def _tag_rows(self, names: list[str]) -> dict[str, Any]:
        rows = Tag.objects.filter(owner=self.owner, name__in=names).values_list("name", "pk")
        return dict(rows)


def _import_value(prepared: _Prepared, key: str) -> Any:
    """The entry's value for one of its type's ``import_keys`` (None: it cannot match by it).
    An id is the file's, when it is a well-formed one; a field is the normalised value of a
    live entry (an entry of the file's trash never clashes)."""
    if key == "id":
        try:
            return uuid.UUID(prepared.record.source_id or "")
        except ValueError:
            return None
    if prepared.item.deleted_at is not None:
        return None
    return getattr(prepared.item, key)


def _storable(name: str, value: str) -> str:
    if not rules.storable(value):
        raise rules.invalid(name, f"The {name} contains a NUL character, which cannot be stored.")
    return value


def _checked(model: type[Item], name: str, value: Any) -> Any:
    """A type field's raw value from a file, refused when it cannot be stored at all: a text
    field needs a string (its model validates the rest), JSON must not hold a NUL."""
    if isinstance(value, str):
        return _storable(name, value)
    if value is None:
        return value
    if isinstance(model._meta.get_field(name), models.CharField | models.TextField):
        raise rules.invalid(name, f"{name} must be a string.")
    if "\\u0000" in json.dumps(value):
        raise rules.invalid(name, f"The {name} contains a NUL character, which cannot be stored.")
    return value


__all__ = ["ImportReport", "detect_format", "import_items", "max_import_bytes"]
